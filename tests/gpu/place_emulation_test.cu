// place_entry / place_job run on the CPU, one thread after another (the code is
// __host__ __device__), against the CPU reference: checks indexing, alignment paths, tails
// and thread grouping wherever this binary is built, GPU or not. The GPU itself is checked
// by place_kernel_test.cu.
#include <gtest/gtest.h>

#include <cstring>

#include "gpu/place_device.cuh"
#include "place_cases.h"

namespace netdaq::gpu::test {
namespace {

std::vector<std::byte> emulate(const Scenario& s, unsigned nblocks, unsigned nthreads) {
  AlignedBytes in(s.input.size(), std::byte{0});
  std::memcpy(in.data, s.input.data(), s.input.size());
  AlignedBytes out(s.out_bytes(), kPoison);
  const auto entries = s.entries(in.data);
  const PlaceJob job = s.job(entries.data(), out.data);
  for (unsigned b = 0; b < nblocks; ++b)
    for (unsigned t = 0; t < nthreads; ++t) place_job_threads(job, b, nblocks, t, nthreads);
  return {out.data, out.data + s.out_bytes()};
}

struct Launch {
  unsigned blocks, threads;
};

TEST(PlaceEmulation, EveryFormatSizeAlignmentAndGrouping) {
  // blocks x threads: a block per entry, a warp per entry, 3 warps, a 40-thread group.
  const Launch launches[] = {{64, 256}, {2, 256}, {3, 96}, {1, 40}};
  unsigned seed = 1, runs = 0;
  for (const Formats& f : all_formats()) {
    for (uint32_t in_bytes : {6u, 64u, 1000u, 1003u, 1024u, 8192u}) {
      for (uint32_t shift : {0u, 1u, 2u, 4u, 8u}) {
        for (bool packed : {true, false}) {
          if (in_bytes == 8192 && shift % 4) continue;  // slow byte paths: smaller sizes cover them
          const uint32_t stride = packed ? in_bytes : (in_bytes + 63) / 64 * 64 + 64;
          const Scenario s(f, in_bytes, 12, stride, shift, seed++);
          const auto want = s.expected();
          const Launch l = launches[runs++ % 4];
          const auto got = emulate(s, l.blocks, l.threads);
          ASSERT_EQ(first_difference(got, want, s.out_slot_bytes), "")
              << describe(f, in_bytes, shift, stride) << " launch " << l.blocks << "x" << l.threads;
        }
      }
    }
  }
}

// A staged launch: the gather pass for every thread, the input overwritten (so a placement
// that read the packets instead of the staging places would differ), then the place pass.
std::vector<std::byte> emulate_staged(const Scenario& s, unsigned nblocks, unsigned nthreads) {
  AlignedBytes in(s.input.size(), std::byte{0});
  std::memcpy(in.data, s.input.data(), s.input.size());
  AlignedBytes out(s.out_bytes(), kPoison), stage(s.stage_bytes(), kPoison);
  const auto entries = s.staged_entries(in.data);
  const PlaceJob job = s.job(entries.data(), out.data);
  for (bool gather : {true, false}) {
    for (unsigned b = 0; b < nblocks; ++b)
      for (unsigned t = 0; t < nthreads; ++t) staged_job_threads(job, stage.data, gather, b, nblocks, t, nthreads);
    if (gather) std::memset(in.data, 0x5a, s.input.size());
  }
  return {out.data, out.data + s.out_bytes()};
}

TEST(PlaceEmulation, StagedLaunchPlacesFromTheStagingPlaces) {
  const Launch launches[] = {{64, 256}, {2, 256}, {3, 96}, {1, 40}};
  unsigned seed = 900, runs = 0;
  for (const Formats& f : all_formats()) {
    for (uint32_t in_bytes : {6u, 64u, 1003u, 1024u}) {
      for (uint32_t shift : {0u, 1u, 2u, 4u, 10u}) {
        const uint32_t stride = (in_bytes + 63) / 64 * 64 + 64;
        const Scenario s(f, in_bytes, 12, stride, shift, seed++);
        const Launch l = launches[runs++ % 4];
        ASSERT_EQ(first_difference(emulate_staged(s, l.blocks, l.threads), s.expected(), s.out_slot_bytes), "")
            << describe(f, in_bytes, shift, stride) << " launch " << l.blocks << "x" << l.threads;
      }
    }
  }
}

TEST(PlaceEmulation, GroupingCoversEveryEntryOnce) {
  // Many entries over few blocks: every entry placed, in every grouping.
  const Formats f{SampleFormat::int16, SampleFormat::fp32, ByteOrder::big};
  const Scenario s(f, 64, 1000, 64, 0, 7);
  const auto want = s.expected();
  for (const Launch l : {Launch{1, 256}, Launch{7, 256}, Launch{5, 160}, Launch{33, 32}, Launch{2000, 64}})
    ASSERT_EQ(first_difference(emulate(s, l.blocks, l.threads), want, s.out_slot_bytes), "")
        << l.blocks << "x" << l.threads;
}

TEST(PlaceEmulation, HostConversionsMatchTheReference) {
  // cuda_fp16 / cuda_bf16 (what the device code calls) against the bit-exact software ones:
  // every int16 value, and float bit patterns across the whole range.
  for (int v = -32768; v <= 32767; ++v) {
    const float f = static_cast<float>(v);
    ASSERT_EQ(detail::half_bits(f), float_to_half_bits(f)) << v;
    ASSERT_EQ(detail::bf16_bits(f), float_to_bf16_bits(f)) << v;
  }
  for (uint64_t u = 0; u < (1ull << 32); u += 997) {
    float f;
    const uint32_t bits = static_cast<uint32_t>(u);
    std::memcpy(&f, &bits, 4);
    if (f != f) continue;  // NaN payloads: both give a NaN, bits may differ
    ASSERT_EQ(detail::half_bits(f), float_to_half_bits(f)) << std::hex << bits;
    ASSERT_EQ(detail::bf16_bits(f), float_to_bf16_bits(f)) << std::hex << bits;
  }
}

}  // namespace
}  // namespace netdaq::gpu::test
