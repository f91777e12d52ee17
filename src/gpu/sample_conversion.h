// What a PlaceJob's formats ask of each packet, decided in one place so the device code, the
// CPU reference and config validation agree. Plain C++; callable from device code too, which
// cannot call sample_bits / converted_bytes (constexpr host functions) without
// --expt-relaxed-constexpr, so they have device-callable twins here.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "gpu/place_job.h"
#include "netdaq/sample_format.h"

namespace netdaq::gpu {

NDQ_HOST_DEVICE constexpr unsigned bits_of(SampleFormat f) noexcept {
  return f == SampleFormat::int4 ? 4 : f == SampleFormat::fp32 ? 32
       : (f == SampleFormat::int16 || f == SampleFormat::fp16 || f == SampleFormat::bf16) ? 16 : 8;
}
NDQ_HOST_DEVICE constexpr uint64_t converted_size(uint64_t in_bytes, SampleFormat in, SampleFormat out) noexcept {
  if (in == SampleFormat::raw || out == SampleFormat::raw) return in_bytes;
  return in_bytes * 8 / bits_of(in) * bits_of(out) / 8;
}

enum class Conversion : uint8_t {
  copy,          // bytes as they are: raw on either side, or the same format in native order
  swap16,        // same 16-bit format, big-endian input: swap the bytes of every sample
  swap32,        // same 32-bit format (fp32), big-endian input
  int_to_float,  // int4 / int8 / int16 -> fp16 / bf16 / fp32 (round to nearest even)
  unsupported,   // any other pair: the slot is zero-filled (config validation rejects these)
};

NDQ_HOST_DEVICE constexpr bool is_integer(SampleFormat f) noexcept {
  return f == SampleFormat::int4 || f == SampleFormat::int8 || f == SampleFormat::int16;
}
NDQ_HOST_DEVICE constexpr bool is_float(SampleFormat f) noexcept {
  return f == SampleFormat::fp16 || f == SampleFormat::bf16 || f == SampleFormat::fp32;
}

NDQ_HOST_DEVICE constexpr Conversion conversion_of(SampleFormat in, SampleFormat out, ByteOrder order) noexcept {
  if (in == SampleFormat::raw || out == SampleFormat::raw) return Conversion::copy;
  if (in == out) {
    if (order == ByteOrder::big && bits_of(in) == 16) return Conversion::swap16;
    if (order == ByteOrder::big && bits_of(in) == 32) return Conversion::swap32;
    return Conversion::copy;
  }
  if (is_integer(in) && is_float(out)) return Conversion::int_to_float;
  return Conversion::unsupported;
}

namespace detail {
constexpr bool twins_agree() {
  for (auto f : {SampleFormat::raw, SampleFormat::int4, SampleFormat::int8, SampleFormat::int16, SampleFormat::fp16,
                 SampleFormat::bf16, SampleFormat::fp32}) {
    if (bits_of(f) != sample_bits(f)) return false;
    for (auto g : {SampleFormat::raw, SampleFormat::int4, SampleFormat::int16, SampleFormat::fp32})
      if (converted_size(1000, f, g) != converted_bytes(1000, f, g)) return false;
  }
  return true;
}
static_assert(twins_agree());
}  // namespace detail

}  // namespace netdaq::gpu
