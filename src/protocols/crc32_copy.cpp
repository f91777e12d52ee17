#include "protocols/crc32_copy.h"

#include <immintrin.h>

#include <cstring>

#include "protocols/crc32.h"

namespace netdaq::protocols {

namespace {

// Carry-less folding (Intel, "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ"):
// four 128-bit lanes each carry their part of the message's remainder forward by 512 bits
// per 64 bytes; the lanes are then folded into one by 128-bit steps. Constants for the
// reflected polynomial 0xEDB88320: x^(512+32), x^(512-32) and x^(128+32), x^(128-32) mod P,
// bit-reflected and shifted (low 64 bits multiply a lane's low half, high 64 its high half).
__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i x, __m128i k) noexcept {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

__attribute__((target("pclmul,sse4.1"))) uint32_t crc32_copy_clmul(uint32_t crc, std::byte* dst, const std::byte* src,
                                                                   size_t blocks) noexcept {
  const __m128i by4 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
  const __m128i by1 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
  auto in = reinterpret_cast<const __m128i*>(src);
  auto out = reinterpret_cast<__m128i*>(dst);
  __m128i x0 = _mm_loadu_si128(in + 0), x1 = _mm_loadu_si128(in + 1), x2 = _mm_loadu_si128(in + 2),
          x3 = _mm_loadu_si128(in + 3);
  _mm_storeu_si128(out + 0, x0), _mm_storeu_si128(out + 1, x1), _mm_storeu_si128(out + 2, x2),
      _mm_storeu_si128(out + 3, x3);
  // The register's starting value (~crc) joins the message's first 32 bits.
  x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128(static_cast<int>(~crc)));
  for (size_t b = 1; b < blocks; ++b) {
    in += 4, out += 4;
    const __m128i d0 = _mm_loadu_si128(in + 0), d1 = _mm_loadu_si128(in + 1), d2 = _mm_loadu_si128(in + 2),
                  d3 = _mm_loadu_si128(in + 3);
    _mm_storeu_si128(out + 0, d0), _mm_storeu_si128(out + 1, d1), _mm_storeu_si128(out + 2, d2),
        _mm_storeu_si128(out + 3, d3);
    x0 = _mm_xor_si128(fold(x0, by4), d0);
    x1 = _mm_xor_si128(fold(x1, by4), d1);
    x2 = _mm_xor_si128(fold(x2, by4), d2);
    x3 = _mm_xor_si128(fold(x3, by4), d3);
  }
  __m128i x = _mm_xor_si128(fold(x0, by1), x1);
  x = _mm_xor_si128(fold(x, by1), x2);
  x = _mm_xor_si128(fold(x, by1), x3);
  // x is congruent to the message (start value included) modulo P: its CRC from a zero
  // register is the message's, and ISA-L computes that on 16 bytes.
  alignas(16) unsigned char rest[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(rest), x);
  return crc32_gzip(0xFFFFFFFFu, reinterpret_cast<const std::byte*>(rest), sizeof rest);
}

// The same with 512-bit lanes (VPCLMULQDQ, e.g. Ice Lake, Zen 4): four lanes of four 128-bit
// parts carry 256 bytes per step, as ISA-L's own by16 kernel does for its CRC alone. Constants
// for 2048, 512, 384, 256 and 128 bits (tests/unit/crc32_copy_test.cpp checks every length
// against ISA-L).
__attribute__((target("avx512f,avx512bw,vpclmulqdq,pclmul,sse4.1"))) inline __m512i fold512(__m512i x, __m512i k) noexcept {
  return _mm512_xor_si512(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11));
}

__attribute__((target("avx512f,avx512bw,vpclmulqdq,pclmul,sse4.1"))) uint32_t crc32_copy_vclmul(uint32_t crc, std::byte* dst,
                                                                                             const std::byte* src,
                                                                                             size_t steps) noexcept {
  const __m512i by2048 = _mm512_broadcast_i32x4(_mm_set_epi64x(0x1322d1430, 0x11542778a));
  const __m512i by512 = _mm512_broadcast_i32x4(_mm_set_epi64x(0x1c6e41596, 0x154442bd4));
  auto in = reinterpret_cast<const __m512i*>(src);
  auto out = reinterpret_cast<__m512i*>(dst);
  __m512i x0 = _mm512_loadu_si512(in + 0), x1 = _mm512_loadu_si512(in + 1), x2 = _mm512_loadu_si512(in + 2),
          x3 = _mm512_loadu_si512(in + 3);
  _mm512_storeu_si512(out + 0, x0), _mm512_storeu_si512(out + 1, x1), _mm512_storeu_si512(out + 2, x2),
      _mm512_storeu_si512(out + 3, x3);
  x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(~crc))));
  for (size_t b = 1; b < steps; ++b) {
    in += 4, out += 4;
    const __m512i d0 = _mm512_loadu_si512(in + 0), d1 = _mm512_loadu_si512(in + 1), d2 = _mm512_loadu_si512(in + 2),
                  d3 = _mm512_loadu_si512(in + 3);
    _mm512_storeu_si512(out + 0, d0), _mm512_storeu_si512(out + 1, d1), _mm512_storeu_si512(out + 2, d2),
        _mm512_storeu_si512(out + 3, d3);
    x0 = _mm512_xor_si512(fold512(x0, by2048), d0);
    x1 = _mm512_xor_si512(fold512(x1, by2048), d1);
    x2 = _mm512_xor_si512(fold512(x2, by2048), d2);
    x3 = _mm512_xor_si512(fold512(x3, by2048), d3);
  }
  __m512i z = _mm512_xor_si512(fold512(x0, by512), x1);
  z = _mm512_xor_si512(fold512(z, by512), x2);
  z = _mm512_xor_si512(fold512(z, by512), x3);
  // z's four parts, earliest first, each carried to the end of the last one.
  const __m128i u0 = _mm512_extracti32x4_epi32(z, 0), u1 = _mm512_extracti32x4_epi32(z, 1),
                u2 = _mm512_extracti32x4_epi32(z, 2), u3 = _mm512_extracti32x4_epi32(z, 3);
  __m128i x = _mm_xor_si128(fold(u0, _mm_set_epi64x(0x174359406, 0x3db1ecdc)), fold(u1, _mm_set_epi64x(0x15a546366, 0xf1da05aa)));
  x = _mm_xor_si128(x, _mm_xor_si128(fold(u2, _mm_set_epi64x(0x0ccaa009e, 0x1751997d0)), u3));
  alignas(16) unsigned char rest[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(rest), x);
  return crc32_gzip(0xFFFFFFFFu, reinterpret_cast<const std::byte*>(rest), sizeof rest);
}

const bool kHasClmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
const bool kHasVclmul = kHasClmul && __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx512f") &&
                        __builtin_cpu_supports("avx512bw");

}  // namespace

uint32_t crc32_copy(uint32_t crc, std::byte* dst, const std::byte* src, size_t n) noexcept {
  if (kHasVclmul && n >= 256) {
    const size_t steps = n / 256, done = steps * 256;
    crc = crc32_copy_vclmul(crc, dst, src, steps);
    dst += done, src += done, n -= done;
  }
  const size_t blocks = n / 64;
  if (blocks == 0 || !kHasClmul) {
    std::memcpy(dst, src, n);
    return crc32_gzip(crc, dst, n);  // just written: in L1
  }
  crc = crc32_copy_clmul(crc, dst, src, blocks);
  const size_t done = blocks * 64;
  std::memcpy(dst + done, src + done, n - done);
  return crc32_gzip(crc, dst + done, n - done);
}

}  // namespace netdaq::protocols
