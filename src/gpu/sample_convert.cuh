// Sample conversions of place_entry, one 16-byte output vector (a "unit") or one sample at a
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

// __byte_perm on both sides (selector nibbles 0-7 only; the sign-replicate bit is not used),
// so the CPU runs of the device code exercise the same selectors the GPU does.
NDQ_HD uint32_t perm(uint32_t x, uint32_t y, uint32_t sel) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, y, sel);
#else
  const uint64_t xy = (uint64_t{y} << 32) | x;
  uint32_t r = 0;
  for (unsigned i = 0; i < 4; ++i) r |= static_cast<uint32_t>((xy >> (8 * ((sel >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return r;
#endif
}

NDQ_HD float bits_float(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// A unit is the samples of one 16-byte output vector (fp32: 4, fp16/bf16: 8), so that the
// threads of a warp store consecutive 16-byte vectors (fully coalesced) and load consecutive
// input pieces of unit_in_bytes (2..16 bytes).
template <SampleFormat Out>
constexpr unsigned unit_samples = 128 / bits_of(Out);
template <SampleFormat In, SampleFormat Out>
constexpr unsigned unit_in_bytes = unit_samples<Out> * bits_of(In) / 8;
template <SampleFormat In, SampleFormat Out>
constexpr unsigned unit_in_words = unit_in_bytes<In, Out> < 4 ? 1 : unit_in_bytes<In, Out> / 4;

// Integer -> float without I2F (a quarter-rate pipe): with the sign bit flipped, a B-bit
// sample is u = x + 2^(B-1) in [0, 2^B); the float with bits 0x4B000000 | u is 2^23 + u
// exactly, and subtracting 2^23 + 2^(B-1) leaves x exactly (+0.0 for 0), the same value
// static_cast<float>(x) gives. One PRMT/LOP and one FADD per sample.
constexpr uint32_t kMagic = 0x4B000000u;  // 2^23 as float bits

// 16-bit samples: w holds two (little-endian in memory); half h of the word.
template <bool Big>
NDQ_HD float int16_at(uint32_t w_flipped, unsigned h) {
  // Bytes of (w, 0x00004B00): 0-3 = w, 4 = 0x00, 5 = 0x4B. Result bytes low -> high.
  const uint32_t sel = Big ? (h ? 0x5423u : 0x5401u) : (h ? 0x5432u : 0x5410u);
  return bits_float(perm(w_flipped, 0x4B00u, sel)) - 8421376.0f;  // 2^23 + 2^15
}

// S samples of input format In from the unit's words (loaded little-endian). int4: low
// nibble first.
template <SampleFormat In, bool Big, unsigned S, unsigned NW>
NDQ_HD void decode_unit(const uint32_t (&w)[NW], float (&f)[S]) {
  if constexpr (In == SampleFormat::int4) {
    static_assert(NW == 1);
    const uint32_t x = w[0] ^ 0x88888888u;
NDQ_UNROLL
    for (unsigned k = 0; k < S; ++k) f[k] = bits_float(kMagic | ((x >> (4 * k)) & 0xFu)) - 8388616.0f;  // 2^23 + 8
  } else if constexpr (In == SampleFormat::int8) {
    static_assert(NW * 4 == S);
NDQ_UNROLL
    for (unsigned j = 0; j < NW; ++j) {
      const uint32_t x = w[j] ^ 0x80808080u;
NDQ_UNROLL
      for (unsigned k = 0; k < 4; ++k)  // bytes k, 0x00, 0x00, 0x4B
        f[4 * j + k] = bits_float(perm(x, 0x4B00u, 0x5440u | k)) - 8388736.0f;  // 2^23 + 2^7
    }
  } else {
    static_assert(In == SampleFormat::int16 && NW * 2 == S);
NDQ_UNROLL
    for (unsigned j = 0; j < NW; ++j) {
      const uint32_t x = w[j] ^ (Big ? 0x00800080u : 0x80008000u);  // the sign bytes
      f[2 * j] = int16_at<Big>(x, 0);
      f[2 * j + 1] = int16_at<Big>(x, 1);
    }
  }
}

// Two floats -> two 16-bit floats in one word (first in the low half), round to nearest
// even; one packed cvt (cvt.rn.f16x2.f32 / bf16x2) on the GPU.
NDQ_HD uint32_t half2_bits(float lo, float hi) {
#ifdef __CUDA_ARCH__
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
#else
  return half_bits(lo) | (half_bits(hi) << 16);
#endif
}
NDQ_HD uint32_t bf162_bits(float lo, float hi) {
#ifdef __CUDA_ARCH__
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
#else
  return bf16_bits(lo) | (bf16_bits(hi) << 16);
#endif
}

// One unit's floats into the 4 words of its 16-byte output vector (little-endian).
template <SampleFormat Out>
NDQ_HD void encode_unit(const float (&f)[unit_samples<Out>], uint32_t (&w)[4]) {
  if constexpr (Out == SampleFormat::fp32) {
NDQ_UNROLL
    for (unsigned k = 0; k < 4; ++k) w[k] = float_bits(f[k]);
  } else if constexpr (Out == SampleFormat::fp16) {
NDQ_UNROLL
    for (unsigned j = 0; j < 4; ++j) w[j] = half2_bits(f[2 * j], f[2 * j + 1]);
  } else {
    static_assert(Out == SampleFormat::bf16);
NDQ_UNROLL
    for (unsigned j = 0; j < 4; ++j) w[j] = bf162_bits(f[2 * j], f[2 * j + 1]);
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
