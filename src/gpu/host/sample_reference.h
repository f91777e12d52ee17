// CPU reference of the GPU sample conversions and of PlaceJob placement: the oracle the GPU
// tests and benchmarks compare against bit for bit. Plain C++, compiled in every build.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/place_job.h"
#include "gpu/sample_conversion.h"

namespace netdaq::gpu {

// IEEE binary16 / bfloat16 bits of f, round to nearest even (what __float2half_rn and
// __float2bfloat16_rn give). Overflow gives infinity; NaN stays a (quiet) NaN.
uint16_t float_to_half_bits(float f) noexcept;
uint16_t float_to_bf16_bits(float f) noexcept;

// Converts in_bytes of input samples into out (converted_bytes(in_bytes, in, out) bytes).
// A trailing partial input sample is dropped. Unsupported pairs write zeros.
void convert_reference(const std::byte* in, uint32_t in_bytes, SampleFormat in_format, SampleFormat out_format,
                       ByteOrder order, std::byte* out);

// Applies job's entries on host memory exactly as the device's place_entry does: job.entries,
// every entry's src and job.out are host addresses here. Bytes of a slot that place_entry
// does not write (out_slot_bytes larger than the converted size) are left as they are.
void place_reference(const PlaceJob& job);

}  // namespace netdaq::gpu
