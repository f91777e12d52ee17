// The persistent kernel's chain variants (ExecutorOptions::persistent, PersistentTuning): each
// places like a CPU loop, completes in order, stops cleanly and leaves no burst behind, with
// bursts the group's leader places alone (solo) mixed with bursts the whole group places.
// Device memory is allocated before an executor and freed after it (cudaFree may synchronize
// the device, which would wait forever on a running persistent kernel). No timed assertions.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu/place_executor.h"
#include "device_array.h"
#include "gpu_test_util.h"

namespace netdaq::gpu {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::byte kPoison{0x5A};

using ndqtest::DeviceArray;

struct Variant {
  std::string name;
  uint32_t groups;
  uint32_t blocks;  // 0: 1 per SM
  PersistentTuning t;
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
  v.push_back({"default_g1", 1, 0, PersistentTuning{}});
  v.push_back({"default_g3", 3, 0, PersistentTuning{}});
  v.push_back({"default_g4", 4, 0, PersistentTuning{}});
  v.push_back({"legacy_g1", 1, 0, PersistentTuning::legacy()});
  v.push_back({"legacy_g4", 4, 0, PersistentTuning::legacy()});
  {
    PersistentTuning t;  // go relay (solo only for 1-CTA groups), fetch_add arrivals, no spin
    t.tagged_relay = false;
    t.inc_arrival = false;
    t.spin_polls = 0;
    v.push_back({"go_relay_g3", 3, 0, t});
  }
  {
    PersistentTuning t;  // fence acquire with the tagged relay
    t.acquire_load = false;
    t.spin_polls = 4;
    v.push_back({"fence_acquire_g4", 4, 0, t});
  }
  {
    PersistentTuning t;  // every burst placed by its leader alone: the others skip every one
    t.solo_max_bytes = std::numeric_limits<uint32_t>::max();
    v.push_back({"all_solo_g4", 4, 0, t});
  }
  {
    PersistentTuning t;  // no solo at all: every burst by the whole group
    t.solo_max_bytes = 0;
    v.push_back({"no_solo_g4", 4, 0, t});
  }
  // 5 CTAs in 3 groups: sizes 1, 2, 2 (a 1-CTA group always places alone).
  v.push_back({"small_grid_g3", 3, 5, PersistentTuning{}});
  v.push_back({"small_grid_legacy_g3", 3, 5, PersistentTuning::legacy()});
  return v;
}

// Packets in device memory, an output ring poisoned, and jobs of the given sizes placing
// random packets (some missing: src 0) into distinct random slots; expected = the same
// placement done on the CPU.
struct Scenario {
  Scenario(uint32_t in_bytes, uint32_t packets, const std::vector<uint32_t>& counts, uint32_t seed)
      : in_bytes(in_bytes),
        slots(std::accumulate(counts.begin(), counts.end(), 0u)),
        in(size_t{packets} * in_bytes),
        out(size_t{slots} * in_bytes),
        entries(slots) {
    std::mt19937 rng(seed);
    host_in.resize(in.n);
    for (auto& b : host_in) b = std::byte(rng());
    expected.assign(out.n, kPoison);
    std::vector<uint32_t> order(slots);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), rng);
    host_entries.resize(slots);
    size_t next = 0;
    for (uint32_t count : counts) {
      offsets.push_back(next);
      for (uint32_t i = 0; i < count; ++i, ++next) {
        PlacementEntry& x = host_entries[next];
        x.dst_slot = order[next];
        const bool missing = rng() % 8 == 0;
        const uint32_t pkt = rng() % packets;
        x.src = missing ? 0 : reinterpret_cast<uint64_t>(in.p + size_t{pkt} * in_bytes);
        std::byte* dst = expected.data() + size_t{x.dst_slot} * in_bytes;
        if (missing)
          std::memset(dst, 0, in_bytes);
        else
          std::memcpy(dst, host_in.data() + size_t{pkt} * in_bytes, in_bytes);
      }
    }
    for (size_t j = 0; j < counts.size(); ++j) {
      PlaceJob job;
      job.entries = entries.p + offsets[j];
      job.count = counts[j];
      job.in_bytes = in_bytes;
      job.out = out.p;
      job.out_slot_bytes = in_bytes;
      jobs.push_back(job);
    }
  }

  void upload() {
    ASSERT_TRUE(in.p && out.p && entries.p);
    CUDA_OK(cudaMemcpy(in.p, host_in.data(), in.n, cudaMemcpyHostToDevice));
    std::vector<std::byte> poison(out.n, kPoison);
    CUDA_OK(cudaMemcpy(out.p, poison.data(), out.n, cudaMemcpyHostToDevice));
    if (!host_entries.empty())
      CUDA_OK(cudaMemcpy(entries.p, host_entries.data(), host_entries.size() * sizeof(PlacementEntry),
                         cudaMemcpyHostToDevice));
  }

  // Index of the first wrong byte of the output, out.n when all are right.
  size_t first_wrong_byte() {
    std::vector<std::byte> got(out.n);
    EXPECT_EQ(cudaMemcpy(got.data(), out.p, out.n, cudaMemcpyDeviceToHost), cudaSuccess);
    return static_cast<size_t>(std::mismatch(got.begin(), got.end(), expected.begin()).first - got.begin());
  }

  uint32_t in_bytes, slots;
  DeviceArray<> in, out;
  DeviceArray<PlacementEntry> entries;
  std::vector<std::byte> host_in, expected;
  std::vector<PlacementEntry> host_entries;
  std::vector<size_t> offsets;
  std::vector<PlaceJob> jobs;
};

// Small bursts (solo under the default 32 KB) and large ones (the whole group), shuffled.
std::vector<uint32_t> mixed_counts(uint32_t in_bytes, uint32_t jobs, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint32_t small_max = std::max(1u, 16384 / in_bytes), big_min = 65536 / in_bytes + 1;
  std::vector<uint32_t> c(jobs);
  for (auto& x : c) x = rng() % 2 ? 1 + rng() % small_max : big_min + rng() % (2 * big_min);
  return c;
}

class PersistentChain : public ::testing::TestWithParam<Variant> {
 protected:
  std::unique_ptr<PlaceExecutor> make(uint32_t depth) {
    ExecutorOptions o;
    o.depth = depth;
    o.groups = GetParam().groups;
    o.blocks = GetParam().blocks;
    o.persistent = GetParam().t;
    o.persistent.trace = trace;
    o.persistent.trace_records = trace_records;
    return make_executor(LaunchMode::persistent, o);
  }
  PersistentTraceRecord* trace = nullptr;
  uint32_t trace_records = 0;
};

// Submits every job in order, retrying while the executor is full (bounded), then waits.
void run_all(PlaceExecutor& ex, const std::vector<PlaceJob>& jobs, size_t times = 1) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  for (size_t k = 0; k < times * jobs.size(); ++k) {
    while (!ex.submit(jobs[k % jobs.size()])) {
      ASSERT_LT(Clock::now(), deadline) << "submit stayed refused at job " << k << ", " << ex.completed() << " done";
      ex.completed();
    }
  }
  ex.synchronize();
  EXPECT_EQ(ex.completed(), ex.submitted());
}

TEST_P(PersistentChain, PlacesMixedBurstsLikeACpuLoop) {
  NDQ_REQUIRE_GPU();
  for (uint32_t in_bytes : {1024u, 8192u}) {
    SCOPED_TRACE(in_bytes);
    Scenario s(in_bytes, 256, mixed_counts(in_bytes, in_bytes == 1024 ? 120 : 40, 11 + in_bytes), 3 + in_bytes);
    s.upload();
    if (HasFatalFailure()) return;
    {
      auto ex = make(4);
      run_all(*ex, s.jobs);
      if (HasFatalFailure()) return;
      EXPECT_EQ(ex->completed(), s.jobs.size());
    }
    const size_t at = s.first_wrong_byte();
    EXPECT_EQ(at, s.out.n) << "first wrong byte at " << at << " (slot " << at / in_bytes << ")";
  }
}

// Runs of lone bursts between group bursts, many times over at depth 8: the other CTAs of a
// group skip lone bursts, also ones whose relay line was already reused when they looked.
// Each of the 8 jobs has its own slots, so the (at most 8) jobs in flight never share one.
TEST_P(PersistentChain, RunsLoneBurstsBetweenGroupBursts) {
  NDQ_REQUIRE_GPU();
  std::vector<uint32_t> counts(7, 1);
  counts.push_back(96);  // 96 KB: the whole group (under the default threshold)
  Scenario s(1024, 128, counts, 21);
  s.upload();
  if (HasFatalFailure()) return;
  {
    auto ex = make(8);
    ASSERT_TRUE(ex->submit(PlaceJob{}));  // an empty job too
    run_all(*ex, s.jobs, 2500);           // 20,000 bursts
    if (HasFatalFailure()) return;
    EXPECT_EQ(ex->completed(), 1u + 20000u);
  }
  const size_t at = s.first_wrong_byte();
  EXPECT_EQ(at, s.out.n) << "first wrong byte at " << at;
}

TEST_P(PersistentChain, EmptyJobsComplete) {
  NDQ_REQUIRE_GPU();
  auto ex = make(4);
  for (int i = 0; i < 64; ++i) {
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (!ex->submit(PlaceJob{})) {
      ASSERT_LT(Clock::now(), deadline);
      ex->completed();
    }
  }
  ex->synchronize();
  EXPECT_EQ(ex->completed(), 64u);
}

TEST_P(PersistentChain, DestroyWithMixedBurstsInFlightLeavesTheGpuUsable) {
  NDQ_REQUIRE_GPU();
  Scenario s(8192, 64, mixed_counts(8192, 8, 5), 9);
  s.upload();
  if (HasFatalFailure()) return;
  {
    auto ex = make(8);
    for (const auto& job : s.jobs) ASSERT_TRUE(ex->submit(job));
  }  // destroyed with up to 8 jobs in flight: it waits for the kernel (bounded) and frees
  CUDA_OK(cudaGetLastError());
  std::vector<std::byte> probe(16);
  CUDA_OK(cudaMemcpy(probe.data(), s.out.p, probe.size(), cudaMemcpyDeviceToHost));
  {
    auto again = make(4);
    run_all(*again, s.jobs);
  }
  const size_t at = s.first_wrong_byte();
  EXPECT_EQ(at, s.out.n) << "first wrong byte at " << at;
}

// With a trace buffer every burst gets its record (seq, stamps, and whether the leader placed
// it alone, as the threshold says); the stamps' values are not asserted.
TEST_P(PersistentChain, TraceRecordsEveryBurst) {
  NDQ_REQUIRE_GPU();
  Scenario s(1024, 128, mixed_counts(1024, 48, 17), 23);
  s.upload();
  if (HasFatalFailure()) return;
  constexpr uint32_t kRecords = 64;
  DeviceArray<PersistentTraceRecord> records(kRecords);
  ASSERT_NE(records.p, nullptr);
  CUDA_OK(cudaMemset(records.p, 0, kRecords * sizeof(PersistentTraceRecord)));
  CUDA_OK(cudaDeviceSynchronize());
  trace = records.p;
  trace_records = kRecords;
  uint32_t blocks = 0, groups = 0;
  {
    auto ex = make(4);
    run_all(*ex, s.jobs);
    if (HasFatalFailure()) return;
  }
  int sms = 0;
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  blocks = GetParam().blocks ? GetParam().blocks : static_cast<uint32_t>(sms);
  groups = std::min({GetParam().groups, 4u, blocks});
  std::vector<PersistentTraceRecord> got(kRecords);
  CUDA_OK(cudaMemcpy(got.data(), records.p, kRecords * sizeof(PersistentTraceRecord), cudaMemcpyDeviceToHost));
  const PersistentTuning& t = GetParam().t;
  for (uint32_t seq = 0; seq < s.jobs.size(); ++seq) {
    SCOPED_TRACE(seq);
    const PersistentTraceRecord& r = got[seq % kRecords];
    EXPECT_EQ(r.seq_plus_1, seq + 1u);
    EXPECT_NE(r.ready, 0u);
    EXPECT_NE(r.done, 0u);
    const uint32_t g = seq % groups;
    const uint32_t size = static_cast<uint32_t>(uint64_t{g + 1} * blocks / groups - uint64_t{g} * blocks / groups);
    const bool small = uint64_t{s.jobs[seq].count} * s.in_bytes <= t.solo_max_bytes;
    const bool solo = t.solo_max_bytes != 0 && (size == 1 || (t.tagged_relay && small));
    EXPECT_EQ(r.solo, solo ? 1u : 0u) << "count " << s.jobs[seq].count << ", group size " << size;
  }
}

TEST(PersistentTuningOptions, TraceWithoutRecordsIsRefused) {
  NDQ_REQUIRE_GPU();
  DeviceArray<PersistentTraceRecord> records(1);
  ExecutorOptions o;
  o.persistent.trace = records.p;
  o.persistent.trace_records = 0;
  try {
    (void)make_executor(LaunchMode::persistent, o);
    ADD_FAILURE() << "trace without records was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_config) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, PersistentChain, ::testing::ValuesIn(variants()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace netdaq::gpu
