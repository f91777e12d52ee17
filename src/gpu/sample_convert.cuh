// Sample conversions of place_entry, one group of 8 samples (a "chunk") or one sample at a
// time. __host__ __device__ so the CPU can run the same code in tests (tests/gpu/
// place_emulation_test.cu); intrinsics have plain C++ stand-ins on the host side.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu/sample_conversion.h"

#define NDQ_HD __host__ __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define NDQ_UNROLL _Pragma("unroll")
#else
#define NDQ_UNROLL
#endif

namespace netdaq::gpu::detail {

NDQ_HD uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }

// The GPU faults on a misaligned access where the CPU does not: the CPU run of this code
// (tests) checks every typed access so it catches what the GPU would.
template <class T>
NDQ_HD void check_aligned(const T* p) {
#ifndef __CUDA_ARCH__
  if (addr(p) % alignof(T) != 0) {
    std::fprintf(stderr, "place_device: misaligned %zu-byte access at %p\n", sizeof(T), static_cast<const void*>(p));
    std::abort();
  }
#endif
}

// Loads bypass L1 (ld.global.cg): a persistent kernel sees packet buffers that the host or
// the NIC rewrote since an earlier job, and L1 is not coherent with them.
template <class T>
NDQ_HD T load(const T* p) {
#ifdef __CUDA_ARCH__
  return __ldcg(p);
#else
  check_aligned(p);
  return *p;
#endif
}
template <class T>
NDQ_HD void store(T* p, T v) {
  check_aligned(p);
  *p = v;
}
NDQ_HD uint8_t load_byte(const std::byte* p) { return load(reinterpret_cast<const uint8_t*>(p)); }

// Byte swaps inside 32-bit words: both 16-bit halves, or the whole word.
NDQ_HD uint32_t swap_halves(uint32_t w) {
#ifdef __CUDA_ARCH__
  return __byte_perm(w, 0, 0x2301);
#else
  return ((w & 0x00FF00FFu) << 8) | ((w >> 8) & 0x00FF00FFu);
#endif
}
NDQ_HD uint32_t swap_word(uint32_t w) {
#ifdef __CUDA_ARCH__
  return __byte_perm(w, 0, 0x0123);
#else
  return (w >> 24) | ((w >> 8) & 0xFF00u) | ((w << 8) & 0xFF0000u) | (w << 24);
#endif
}

NDQ_HD uint32_t float_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
NDQ_HD uint32_t half_bits(float f) { return __half_as_ushort(__float2half_rn(f)); }
NDQ_HD uint32_t bf16_bits(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }

// Sign-extends the 4/8/16-bit field of w that starts at bit `shift` (arithmetic >> in C++20).
template <unsigned Bits>
NDQ_HD float signed_field(uint32_t w, unsigned shift) {
  return static_cast<float>(static_cast<int32_t>(w << (32 - Bits - shift)) >> (32 - Bits));
}

// A chunk is 8 samples: bits_of(f) bytes of input, bits_of(f)/4 32-bit words.
template <SampleFormat F>
constexpr unsigned chunk_words = bits_of(F) / 4;

// 8 samples from the chunk's words (loaded little-endian). int4: low nibble first.
template <SampleFormat In, bool Big>
NDQ_HD void decode_chunk(const uint32_t (&w)[chunk_words<In>], float (&f)[8]) {
  if constexpr (In == SampleFormat::int4) {
NDQ_UNROLL
    for (unsigned k = 0; k < 8; ++k) f[k] = signed_field<4>(w[0], 4 * k);
  } else if constexpr (In == SampleFormat::int8) {
NDQ_UNROLL
    for (unsigned k = 0; k < 8; ++k) f[k] = signed_field<8>(w[k / 4], 8 * (k % 4));
  } else {
    static_assert(In == SampleFormat::int16);
NDQ_UNROLL
    for (unsigned j = 0; j < 4; ++j) {
      const uint32_t x = Big ? swap_halves(w[j]) : w[j];
      f[2 * j] = signed_field<16>(x, 0);
      f[2 * j + 1] = signed_field<16>(x, 16);
    }
  }
}

// 8 floats into the output chunk's words (little-endian), rounding to nearest even.
template <SampleFormat Out>
NDQ_HD void encode_chunk(const float (&f)[8], uint32_t (&w)[chunk_words<Out>]) {
  if constexpr (Out == SampleFormat::fp32) {
NDQ_UNROLL
    for (unsigned k = 0; k < 8; ++k) w[k] = float_bits(f[k]);
  } else if constexpr (Out == SampleFormat::fp16) {
NDQ_UNROLL
    for (unsigned j = 0; j < 4; ++j) w[j] = half_bits(f[2 * j]) | (half_bits(f[2 * j + 1]) << 16);
  } else {
    static_assert(Out == SampleFormat::bf16);
NDQ_UNROLL
    for (unsigned j = 0; j < 4; ++j) w[j] = bf16_bits(f[2 * j]) | (bf16_bits(f[2 * j + 1]) << 16);
  }
}

// Sample k of a packet, read byte by byte (any alignment): the tails and misaligned packets.
template <SampleFormat In, bool Big>
NDQ_HD float decode_sample(const std::byte* src, uint32_t k) {
  if constexpr (In == SampleFormat::int4) {
    const uint32_t b = load_byte(src + k / 2);
    return signed_field<4>(b, (k & 1) * 4);
  } else if constexpr (In == SampleFormat::int8) {
    return signed_field<8>(load_byte(src + k), 0);
  } else {
    const uint32_t b0 = load_byte(src + 2 * k), b1 = load_byte(src + 2 * k + 1);
    return signed_field<16>(Big ? (b0 << 8) | b1 : (b1 << 8) | b0, 0);
  }
}

// Stores sample k of the output; `aligned`: dst is aligned to the output sample size.
template <SampleFormat Out>
NDQ_HD void store_sample(std::byte* dst, uint32_t k, float f, bool aligned) {
  if constexpr (Out == SampleFormat::fp32) {
    const uint32_t v = float_bits(f);
    if (aligned) {
      store(reinterpret_cast<uint32_t*>(dst) + k, v);
    } else {
      for (unsigned b = 0; b < 4; ++b) dst[4 * k + b] = static_cast<std::byte>(v >> (8 * b));
    }
  } else {
    const uint32_t v = Out == SampleFormat::fp16 ? half_bits(f) : bf16_bits(f);
    if (aligned) {
      store(reinterpret_cast<uint16_t*>(dst) + k, static_cast<uint16_t>(v));
    } else {
      dst[2 * k] = static_cast<std::byte>(v);
      dst[2 * k + 1] = static_cast<std::byte>(v >> 8);
    }
  }
}

}  // namespace netdaq::gpu::detail
