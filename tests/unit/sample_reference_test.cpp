// The CPU reference of GPU sample conversion and placement, on values worked out by hand.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gpu/host/sample_reference.h"

namespace netdaq::gpu {
namespace {

using F = SampleFormat;

std::vector<std::byte> bytes(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}

std::vector<float> to_floats(const std::vector<std::byte>& in, F inf, ByteOrder order = ByteOrder::little) {
  std::vector<std::byte> out(converted_bytes(in.size(), inf, F::fp32));
  convert_reference(in.data(), static_cast<uint32_t>(in.size()), inf, F::fp32, order, out.data());
  std::vector<float> f(out.size() / 4);
  std::memcpy(f.data(), out.data(), out.size());
  return f;
}

std::vector<uint16_t> to_halves(const std::vector<std::byte>& in, F inf, F outf, ByteOrder order) {
  std::vector<std::byte> out(converted_bytes(in.size(), inf, outf));
  convert_reference(in.data(), static_cast<uint32_t>(in.size()), inf, outf, order, out.data());
  std::vector<uint16_t> h(out.size() / 2);
  for (size_t i = 0; i < h.size(); ++i)  // output is little-endian whatever the host
    h[i] = static_cast<uint16_t>(static_cast<unsigned>(out[2 * i]) | static_cast<unsigned>(out[2 * i + 1]) << 8);
  return h;
}

TEST(SampleReference, Int4IsTwosComplementLowNibbleFirst) {
  EXPECT_EQ(to_floats(bytes({0x8F}), F::int4), (std::vector<float>{-1.0f, -8.0f}));
  EXPECT_EQ(to_floats(bytes({0x70, 0x21}), F::int4), (std::vector<float>{0.0f, 7.0f, 1.0f, 2.0f}));
}

TEST(SampleReference, Int8IsSigned) {
  EXPECT_EQ(to_floats(bytes({0x80, 0x7F, 0xFF, 0x00}), F::int8), (std::vector<float>{-128, 127, -1, 0}));
}

TEST(SampleReference, Int16HonoursTheByteOrder) {
  EXPECT_EQ(to_floats(bytes({0x01, 0x02}), F::int16, ByteOrder::big), (std::vector<float>{258.0f}));
  EXPECT_EQ(to_floats(bytes({0x01, 0x02}), F::int16, ByteOrder::little), (std::vector<float>{513.0f}));
  EXPECT_EQ(to_floats(bytes({0x80, 0x00, 0xFF, 0xFE}), F::int16, ByteOrder::big), (std::vector<float>{-32768, -2}));
  // A trailing half sample is dropped.
  EXPECT_EQ(to_floats(bytes({0x01, 0x02, 0x03}), F::int16, ByteOrder::big), (std::vector<float>{258.0f}));
}

TEST(SampleReference, HalfOfExactValues) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::quiet_NaN()) & 0x7E00, 0x7E00);
}

TEST(SampleReference, HalfRoundsToNearestEven) {
  EXPECT_EQ(float_to_half_bits(2049.0f), 0x6800);   // tie between 2048 and 2050: even 2048
  EXPECT_EQ(float_to_half_bits(2051.0f), 0x6802);   // tie between 2050 and 2052: even 2052
  EXPECT_EQ(float_to_half_bits(2049.5f), 0x6801);   // above the tie: 2050
  EXPECT_EQ(float_to_half_bits(32767.0f), 0x7800);  // 32768
  EXPECT_EQ(float_to_half_bits(-32768.0f), 0xF800);
  EXPECT_EQ(float_to_half_bits(65519.0f), 0x7BFF);  // below the tie with infinity
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7C00);  // the tie rounds to "even" infinity
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);         // tie with 0: even 0
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.5f, -25)), 0x0001);         // above the tie
  EXPECT_EQ(float_to_half_bits(std::ldexp(3.0f, -25)), 0x0002);         // 1.5 ulp: tie, even 2
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)), 0x0400);  // up into normals
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -30)), 0x0000);
}

TEST(SampleReference, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16_bits(-1.0f), 0xBF80);
  EXPECT_EQ(float_to_bf16_bits(257.0f), 0x4380);  // tie between 256 and 258: even 256
  EXPECT_EQ(float_to_bf16_bits(259.0f), 0x4382);  // tie between 258 and 260: even 260
  EXPECT_EQ(float_to_bf16_bits(std::bit_cast<float>(0x3F808001u)), 0x3F81);  // above the tie
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7F80);  // rounds to infinity
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()) & 0x7FC0, 0x7FC0);
  EXPECT_EQ(float_to_bf16_bits(std::bit_cast<float>(0x7F800001u)) & 0x7FC0, 0x7FC0);  // signalling -> quiet
}

TEST(SampleReference, ConvertsToHalfAndBf16LittleEndian) {
  EXPECT_EQ(to_halves(bytes({0x00, 0x01, 0x08, 0x01}), F::int16, F::fp16, ByteOrder::big),
            (std::vector<uint16_t>{0x3C00, 0x6800}));  // 1, 2049 -> 2048
  EXPECT_EQ(to_halves(bytes({0x01, 0x00, 0x01, 0x01}), F::int16, F::bf16, ByteOrder::little),
            (std::vector<uint16_t>{0x3F80, 0x4380}));  // 1, 257 -> 256
  EXPECT_EQ(to_halves(bytes({0x8F}), F::int4, F::fp16, ByteOrder::big), (std::vector<uint16_t>{0xBC00, 0xC800}));
  EXPECT_EQ(to_halves(bytes({0x80}), F::int8, F::bf16, ByteOrder::little), (std::vector<uint16_t>{0xC300}));
}

TEST(SampleReference, SameFormatSwapsBigEndianSamples) {
  auto in = bytes({0x01, 0x02, 0x03, 0x04, 0x05});
  std::vector<std::byte> out(4);
  convert_reference(in.data(), 5, F::int16, F::int16, ByteOrder::big, out.data());
  EXPECT_EQ(out, bytes({0x02, 0x01, 0x04, 0x03}));
  convert_reference(in.data(), 4, F::int16, F::int16, ByteOrder::little, out.data());
  EXPECT_EQ(out, bytes({0x01, 0x02, 0x03, 0x04}));
  convert_reference(in.data(), 4, F::fp32, F::fp32, ByteOrder::big, out.data());
  EXPECT_EQ(out, bytes({0x04, 0x03, 0x02, 0x01}));
  convert_reference(in.data(), 4, F::int8, F::int8, ByteOrder::big, out.data());  // one byte: no swap
  EXPECT_EQ(out, bytes({0x01, 0x02, 0x03, 0x04}));
  convert_reference(in.data(), 4, F::raw, F::fp32, ByteOrder::big, out.data());  // raw: bytes as they are
  EXPECT_EQ(out, bytes({0x01, 0x02, 0x03, 0x04}));
}

TEST(SampleReference, ConversionKinds) {
  EXPECT_EQ(conversion_of(F::raw, F::raw, ByteOrder::big), Conversion::copy);
  EXPECT_EQ(conversion_of(F::int16, F::raw, ByteOrder::big), Conversion::copy);
  EXPECT_EQ(conversion_of(F::int16, F::int16, ByteOrder::big), Conversion::swap16);
  EXPECT_EQ(conversion_of(F::int16, F::int16, ByteOrder::little), Conversion::copy);
  EXPECT_EQ(conversion_of(F::fp32, F::fp32, ByteOrder::big), Conversion::swap32);
  EXPECT_EQ(conversion_of(F::int4, F::bf16, ByteOrder::big), Conversion::int_to_float);
  EXPECT_EQ(conversion_of(F::int16, F::int8, ByteOrder::little), Conversion::unsupported);
  EXPECT_EQ(conversion_of(F::fp16, F::fp32, ByteOrder::little), Conversion::unsupported);
  EXPECT_EQ(converted_bytes(1000, F::int4, F::fp32), 8000u);
  EXPECT_EQ(converted_bytes(1000, F::int16, F::fp16), 1000u);
  EXPECT_EQ(converted_bytes(1001, F::int16, F::fp32), 2000u);
}

TEST(SampleReference, PlacesEntriesIntoSlots) {
  // Three packets of 2 int16 samples (big-endian) -> fp32 slots of 8 bytes; slot 3 untouched.
  const auto in = bytes({0x00, 0x01, 0x00, 0x02, 0xFF, 0xFF, 0x01, 0x00});
  std::vector<std::byte> out(5 * 8, std::byte{0xA5});
  const PlacementEntry entries[] = {
      {reinterpret_cast<uint64_t>(in.data()), 2, 0},
      {reinterpret_cast<uint64_t>(in.data() + 4), 0, 0},
      {0, 4, 0},  // missing packet: zeros
  };
  PlaceJob job;
  job.entries = entries;
  job.count = 3;
  job.in_bytes = 4;
  job.out = out.data();
  job.out_slot_bytes = 8;
  job.in_format = F::int16;
  job.out_format = F::fp32;
  job.in_order = ByteOrder::big;
  place_reference(job);
  const auto f = [&](size_t i) {
    float v;
    std::memcpy(&v, out.data() + 4 * i, 4);
    return v;
  };
  EXPECT_EQ(f(4), 1.0f);
  EXPECT_EQ(f(5), 2.0f);
  EXPECT_EQ(f(0), -1.0f);
  EXPECT_EQ(f(1), 256.0f);
  for (size_t i = 8; i < 16; ++i) EXPECT_EQ(out[i], std::byte{0xA5}) << i;  // slot 1: not in the job
  for (size_t i = 24; i < 32; ++i) EXPECT_EQ(out[i], std::byte{0xA5}) << i;
  for (size_t i = 32; i < 40; ++i) EXPECT_EQ(out[i], std::byte{0}) << i;
}

}  // namespace
}  // namespace netdaq::gpu
