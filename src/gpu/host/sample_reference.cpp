// CPU reference conversions: integer decoding and float rounding done in plain integer
// arithmetic, independent of the CUDA intrinsics they check.
#include "gpu/host/sample_reference.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace netdaq::gpu {
namespace {

int32_t input_sample(const std::byte* in, uint64_t k, SampleFormat f, ByteOrder order) {
  const auto byte = [&](uint64_t i) { return static_cast<uint32_t>(in[i]); };
  switch (f) {
    case SampleFormat::int4: {
      const uint32_t nib = (k & 1) ? byte(k / 2) >> 4 : byte(k / 2) & 0xF;
      return nib >= 8 ? static_cast<int32_t>(nib) - 16 : static_cast<int32_t>(nib);
    }
    case SampleFormat::int8: return static_cast<int8_t>(byte(k));
    case SampleFormat::int16: {
      const uint32_t b0 = byte(2 * k), b1 = byte(2 * k + 1);
      return static_cast<int16_t>(order == ByteOrder::big ? (b0 << 8) | b1 : (b1 << 8) | b0);
    }
    default: return 0;
  }
}

void put_le(std::byte* out, uint64_t value, unsigned bytes) {
  for (unsigned b = 0; b < bytes; ++b) out[b] = static_cast<std::byte>(value >> (8 * b));
}

}  // namespace

uint16_t float_to_half_bits(float f) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000;
  const int32_t exp = static_cast<int32_t>((bits >> 23) & 0xFF);
  const uint32_t mant = bits & 0x7FFFFF;
  if (exp == 0xFF) return static_cast<uint16_t>(sign | 0x7C00 | (mant ? 0x200 | (mant >> 13) : 0));
  const int32_t e = exp - 127 + 15;  // half exponent field before rounding
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  if (e <= 0) {  // half subnormal (or zero): value / 2^-24 = mant24 >> (14 - e)
    const uint32_t shift = static_cast<uint32_t>(14 - e);
    if (shift > 24) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    const uint32_t m = mant | (exp ? 0x800000u : 0);
    uint32_t h = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;  // may carry into the smallest normal: right
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // a carry into exponent 31 is infinity
  return static_cast<uint16_t>(sign | h);
}

uint16_t float_to_bf16_bits(float f) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  return static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

namespace {

// Writes nsamples converted samples (int_to_float) or n bytes (the copies) as place_entry does.
void convert_samples(const std::byte* in, uint64_t nsamples, SampleFormat inf, SampleFormat outf, ByteOrder order,
                     std::byte* out) {
  switch (conversion_of(inf, outf, order)) {
    case Conversion::copy:
      if (nsamples) std::memcpy(out, in, nsamples);  // nsamples counts bytes here
      return;
    case Conversion::swap16:
    case Conversion::swap32: {
      const unsigned e = sample_bits(inf) / 8;
      for (uint64_t i = 0; i + e <= nsamples; i += e)
        for (unsigned b = 0; b < e; ++b) out[i + b] = in[i + e - 1 - b];
      return;
    }
    case Conversion::int_to_float:
      for (uint64_t k = 0; k < nsamples; ++k) {
        const float v = static_cast<float>(input_sample(in, k, inf, order));
        switch (outf) {
          case SampleFormat::fp16: put_le(out + 2 * k, float_to_half_bits(v), 2); break;
          case SampleFormat::bf16: put_le(out + 2 * k, float_to_bf16_bits(v), 2); break;
          default: put_le(out + 4 * k, std::bit_cast<uint32_t>(v), 4); break;
        }
      }
      return;
    case Conversion::unsupported:
      return;
  }
}

}  // namespace

void convert_reference(const std::byte* in, uint32_t in_bytes, SampleFormat in_format, SampleFormat out_format,
                       ByteOrder order, std::byte* out) {
  const uint64_t out_bytes = converted_bytes(in_bytes, in_format, out_format);
  switch (conversion_of(in_format, out_format, order)) {
    case Conversion::int_to_float:
      convert_samples(in, uint64_t{in_bytes} * 8 / sample_bits(in_format), in_format, out_format, order, out);
      return;
    case Conversion::unsupported:
      if (out_bytes) std::memset(out, 0, out_bytes);
      return;
    default:
      convert_samples(in, out_bytes, in_format, out_format, order, out);
      return;
  }
}

void place_reference(const PlaceJob& job) {
  for (uint32_t i = 0; i < job.count; ++i) {
    const PlacementEntry& e = job.entries[i];
    std::byte* dst = job.out + uint64_t{e.dst_slot} * job.out_slot_bytes;
    const auto* src = reinterpret_cast<const std::byte*>(e.src);
    const Conversion c = conversion_of(job.in_format, job.out_format, job.in_order);
    if (e.src == 0 || c == Conversion::unsupported) {
      std::memset(dst, 0, job.out_slot_bytes);
    } else if (c == Conversion::int_to_float) {
      const uint64_t n = std::min<uint64_t>(uint64_t{job.in_bytes} * 8 / sample_bits(job.in_format),
                                            uint64_t{job.out_slot_bytes} * 8 / sample_bits(job.out_format));
      convert_samples(src, n, job.in_format, job.out_format, job.in_order, dst);
    } else {
      // Copies: the converted size, cut to the slot, in whole samples (as place_entry does).
      const unsigned e_bytes = c == Conversion::copy ? 1 : sample_bits(job.in_format) / 8;
      uint64_t n = std::min<uint64_t>(converted_bytes(job.in_bytes, job.in_format, job.out_format), job.out_slot_bytes);
      n = n / e_bytes * e_bytes;
      convert_samples(src, n, job.in_format, job.out_format, job.in_order, dst);
    }
  }
}

}  // namespace netdaq::gpu
