// Random PlaceJobs for the place kernel tests (on the GPU and emulated on the CPU): packets
// at chosen alignments, a random permutation of output slots, missing packets (src = 0) and
// slots no entry names (must keep their poison). The CPU reference gives the expected bytes.
#pragma once

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu/host/sample_reference.h"
#include "gpu/place_job.h"

namespace netdaq::gpu::test {

constexpr std::byte kPoison{0xA5};

struct Formats {
  SampleFormat in, out;
  ByteOrder order;
};

// Every pair the data plane supports, in both byte orders, plus one unsupported (zeros).
inline std::vector<Formats> all_formats() {
  using F = SampleFormat;
  std::vector<Formats> v;
  for (ByteOrder o : {ByteOrder::little, ByteOrder::big}) {
    v.push_back({F::raw, F::raw, o});
    for (F in : {F::int4, F::int8, F::int16})
      for (F out : {F::fp16, F::bf16, F::fp32, in}) v.push_back({in, out, o});
    v.push_back({F::fp32, F::fp32, o});
    v.push_back({F::fp16, F::fp16, o});
    v.push_back({F::int16, F::int8, o});  // unsupported: zero-filled
  }
  return v;
}

inline std::string describe(const Formats& f, uint32_t in_bytes, uint32_t shift, uint32_t stride) {
  return std::string(to_string(f.in)) + "->" + to_string(f.out) + " " + to_string(f.order) + " in_bytes " +
         std::to_string(in_bytes) + " src shift " + std::to_string(shift) + " stride " + std::to_string(stride);
}

// One job's inputs, addresses as offsets: packet i at input[offset[i]], offset -1 = missing.
struct Scenario {
  Formats formats;
  uint32_t in_bytes = 0, out_slot_bytes = 0, count = 0, slots = 0;
  std::vector<std::byte> input;
  std::vector<int64_t> offset;
  std::vector<uint32_t> slot;

  // stride: bytes between packets (in_bytes = packed like the stager's output); shift: the
  // first packet's offset from a 256-aligned base.
  Scenario(Formats f, uint32_t in_b, uint32_t packets, uint32_t stride, uint32_t shift, uint32_t seed)
      : formats(f), in_bytes(in_b), count(packets), slots(packets + 3) {
    out_slot_bytes = static_cast<uint32_t>(converted_bytes(in_b, f.in, f.out));
    std::mt19937 rng(seed);
    input.resize(uint64_t{stride} * packets + shift + 64);
    for (auto& b : input) b = static_cast<std::byte>(rng());
    std::vector<uint32_t> perm(slots);
    std::iota(perm.begin(), perm.end(), 0u);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (uint32_t i = 0; i < packets; ++i) {
      offset.push_back(rng() % 8 == 0 ? -1 : int64_t{shift} + int64_t{i} * stride);
      slot.push_back(perm[i]);
    }
  }

  uint64_t out_bytes() const { return uint64_t{slots} * out_slot_bytes; }

  std::vector<PlacementEntry> entries(const std::byte* input_base) const {
    std::vector<PlacementEntry> e(count);
    for (uint32_t i = 0; i < count; ++i)
      e[i] = {offset[i] < 0 ? 0 : reinterpret_cast<uint64_t>(input_base + offset[i]), slot[i], 0};
    return e;
  }

  // For a staged launch: every packet present gets the next staging place (stage = k + 1).
  std::vector<PlacementEntry> staged_entries(const std::byte* input_base) const {
    auto e = entries(input_base);
    uint32_t k = 0;
    for (auto& x : e)
      if (x.src) x.stage = ++k;
    return e;
  }
  uint64_t stage_bytes() const { return uint64_t{count} * staging_stride(in_bytes); }

  PlaceJob job(const PlacementEntry* entries, std::byte* out) const {
    PlaceJob j;
    j.entries = entries;
    j.count = count;
    j.in_bytes = in_bytes;
    j.out = out;
    j.out_slot_bytes = out_slot_bytes;
    j.in_format = formats.in;
    j.out_format = formats.out;
    j.in_order = formats.order;
    return j;
  }

  // The expected output ring: poison, then the CPU reference.
  std::vector<std::byte> expected() const {
    std::vector<std::byte> out(out_bytes(), kPoison);
    const auto e = entries(input.data());
    place_reference(job(e.data(), out.data()));
    return out;
  }
};

// "" when equal, else where the first difference is.
inline std::string first_difference(const std::vector<std::byte>& got, const std::vector<std::byte>& want,
                                    uint32_t slot_bytes) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return "byte " + std::to_string(i) + " (slot " + std::to_string(slot_bytes ? i / slot_bytes : 0) + " offset " +
             std::to_string(slot_bytes ? i % slot_bytes : i) + "): got " + std::to_string(int(got[i])) + " want " +
             std::to_string(int(want[i]));
  return "";
}

// Aligned host buffer: the emulation needs 256-aligned bases like cudaMalloc gives.
struct AlignedBytes {
  std::vector<std::byte> storage;
  std::byte* data = nullptr;
  explicit AlignedBytes(uint64_t n, std::byte fill) : storage(n + 256, fill) {
    const auto a = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + ((256 - a % 256) % 256);
  }
};

}  // namespace netdaq::gpu::test
