// Sample formats and byte orders of the GPU data plane (reorder input and output).
#pragma once

#include <cstdint>

namespace netdaq {

enum class SampleFormat : uint8_t {
  raw,    // bytes copied as they are (no conversion)
  int4,   // signed 4-bit, two per byte, low nibble first
  int8,
  int16,
  fp16,   // IEEE half
  bf16,
  fp32,
};
const char* to_string(SampleFormat f) noexcept;

// Bits per sample (raw: 8, one byte is one "sample").
constexpr unsigned sample_bits(SampleFormat f) noexcept {
  switch (f) {
    case SampleFormat::int4: return 4;
    case SampleFormat::raw:
    case SampleFormat::int8: return 8;
    case SampleFormat::int16:
    case SampleFormat::fp16:
    case SampleFormat::bf16: return 16;
    case SampleFormat::fp32: return 32;
  }
  return 8;
}

enum class ByteOrder : uint8_t { little, big };
const char* to_string(ByteOrder o) noexcept;

}  // namespace netdaq
