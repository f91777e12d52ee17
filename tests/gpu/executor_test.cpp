// The three executors (per_burst, graph, persistent) against a CPU loop: same bytes, depth
// limit, long runs, teardown with work in flight. Device memory is allocated before an
// executor and freed after it: cudaFree may synchronize the device, which would wait forever
// on a running persistent kernel.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu/place_executor.h"
#include "device_array.h"
#include "gpu_test_util.h"

namespace netdaq::gpu {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::byte kPoison{0xA5};

using ndqtest::DeviceArray;

const char* name(LaunchMode m) { return to_string(m); }

// An executor kind under test: the launch mode and, for persistent, its CTA groups (1: every
// CTA on every burst; 4: up to 4 bursts placed at once, finishing out of order on the GPU).
struct Kind {
  LaunchMode mode;
  uint32_t groups = 0;
};
std::string name(const Kind& k) {
  return k.mode == LaunchMode::persistent ? std::string(name(k.mode)) + "_g" + std::to_string(k.groups)
                                          : std::string(name(k.mode));
}

// Packets in device memory, an output ring poisoned, and jobs placing random packets (some
// missing: src 0) into distinct random slots; expected = the same placement done on the CPU.
struct Scenario {
  Scenario(uint32_t in_bytes, uint32_t packets, uint32_t slots, uint32_t jobs, uint32_t max_count, uint32_t seed)
      : in_bytes(in_bytes), in(size_t{packets} * in_bytes), out(size_t{slots} * in_bytes) {
    std::mt19937 rng(seed);
    host_in.resize(in.n);
    for (auto& b : host_in) b = std::byte(rng());
    expected.assign(out.n, kPoison);
    std::vector<uint32_t> order(slots);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), rng);
    size_t next_slot = 0;
    for (uint32_t j = 0; j < jobs; ++j) {
      const uint32_t count = std::min<uint32_t>(1 + rng() % max_count, uint32_t(slots - next_slot));
      std::vector<PlacementEntry> e(count);
      for (auto& x : e) {
        const uint32_t slot = order[next_slot++];
        const bool missing = rng() % 8 == 0;
        const uint32_t pkt = rng() % packets;
        x.dst_slot = slot;
        x.src = missing ? 0 : reinterpret_cast<uint64_t>(in.p + size_t{pkt} * in_bytes);
        std::byte* dst = expected.data() + size_t{slot} * in_bytes;
        if (missing)
          std::memset(dst, 0, in_bytes);
        else
          std::memcpy(dst, host_in.data() + size_t{pkt} * in_bytes, in_bytes);
      }
      entries.push_back(std::move(e));
    }
    size_t total = 0;
    for (auto& e : entries) total += e.size();
    dev_entries = std::make_unique<DeviceArray<PlacementEntry>>(std::max<size_t>(total, 1));
  }

  // Uploads inputs, entries and the poisoned output (cudaMemcpy: no kernel, no cudaMemset).
  void upload() {
    ASSERT_NE(in.p, nullptr);
    ASSERT_NE(out.p, nullptr);
    ASSERT_NE(dev_entries->p, nullptr);
    CUDA_OK(cudaMemcpy(in.p, host_in.data(), in.n, cudaMemcpyHostToDevice));
    std::vector<std::byte> poison(out.n, kPoison);
    CUDA_OK(cudaMemcpy(out.p, poison.data(), out.n, cudaMemcpyHostToDevice));
    size_t at = 0;
    for (auto& e : entries) {
      CUDA_OK(cudaMemcpy(dev_entries->p + at, e.data(), e.size() * sizeof(PlacementEntry), cudaMemcpyHostToDevice));
      PlaceJob job;
      job.entries = dev_entries->p + at;
      job.count = static_cast<uint32_t>(e.size());
      job.in_bytes = in_bytes;
      job.out = out.p;
      job.out_slot_bytes = in_bytes;
      jobs.push_back(job);
      at += e.size();
    }
  }

  std::vector<std::byte> download() {
    std::vector<std::byte> got(out.n);
    EXPECT_EQ(cudaMemcpy(got.data(), out.p, out.n, cudaMemcpyDeviceToHost), cudaSuccess);
    return got;
  }

  uint32_t in_bytes;
  DeviceArray<> in, out;
  std::unique_ptr<DeviceArray<PlacementEntry>> dev_entries;
  std::vector<std::byte> host_in, expected;
  std::vector<std::vector<PlacementEntry>> entries;
  std::vector<PlaceJob> jobs;
};

// Submits every job in order, retrying while the executor is full (bounded).
void run_all(PlaceExecutor& ex, const std::vector<PlaceJob>& jobs) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  for (const auto& job : jobs) {
    while (!ex.submit(job)) {
      ASSERT_LT(Clock::now(), deadline) << "submit stayed refused";
      ex.completed();
    }
  }
  ex.synchronize();
  EXPECT_EQ(ex.completed(), ex.submitted());
}

size_t first_difference(const std::vector<std::byte>& a, const std::vector<std::byte>& b) {
  return static_cast<size_t>(std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin());
}

class Executor : public ::testing::TestWithParam<Kind> {
 protected:
  std::unique_ptr<PlaceExecutor> make(uint32_t depth = 4) {
    ExecutorOptions o;
    o.depth = depth;
    o.groups = GetParam().groups;  // clamped to depth and blocks by the executor
    return make_executor(GetParam().mode, o);
  }
  LaunchMode mode() const { return GetParam().mode; }
};

TEST_P(Executor, PlacesRandomJobsLikeACpuLoop) {
  NDQ_REQUIRE_GPU();
  for (uint32_t in_bytes : {1024u, 8192u}) {
    SCOPED_TRACE(in_bytes);
    Scenario s(in_bytes, 300, 2048, 24, 128, 7 + in_bytes);
    s.upload();
    if (HasFatalFailure()) return;
    {
      auto ex = make();
      EXPECT_EQ(ex->mode(), mode());
      run_all(*ex, s.jobs);
      EXPECT_EQ(ex->submitted(), s.jobs.size());
    }
    const auto got = s.download();
    const size_t at = first_difference(got, s.expected);
    EXPECT_EQ(at, got.size()) << "first wrong byte at " << at << " (slot " << at / in_bytes << ")";
  }
}

TEST_P(Executor, EmptyJobCompletes) {
  NDQ_REQUIRE_GPU();
  auto ex = make();
  ASSERT_TRUE(ex->submit(PlaceJob{}));
  ex->synchronize();
  EXPECT_EQ(ex->completed(), 1u);
}

// Jobs big enough (32k entries x 8 KB, ~256 MB written) that none finishes while the next
// few are submitted.
TEST_P(Executor, RefusesASubmitWhenDepthJobsAreInFlight) {
  NDQ_REQUIRE_GPU();
  constexpr uint32_t kDepth = 2, kEntries = 32768, kBytes = 8192, kSlots = 4096;
  DeviceArray<> in(kBytes), out(size_t{kSlots} * kBytes);
  DeviceArray<PlacementEntry> entries(kEntries);
  ASSERT_TRUE(in.p && out.p && entries.p);
  std::vector<PlacementEntry> e(kEntries);
  for (uint32_t i = 0; i < kEntries; ++i) e[i] = {reinterpret_cast<uint64_t>(in.p), i % kSlots, 0};
  CUDA_OK(cudaMemcpy(entries.p, e.data(), e.size() * sizeof e[0], cudaMemcpyHostToDevice));
  PlaceJob job{entries.p, kEntries, kBytes, out.p, kBytes};

  auto ex = make(kDepth);
  ASSERT_TRUE(ex->submit(PlaceJob{}));  // warm-up: loads the kernel
  ex->synchronize();
  for (uint32_t i = 0; i < kDepth; ++i) ASSERT_TRUE(ex->submit(job)) << i;
  EXPECT_FALSE(ex->submit(job));
  EXPECT_EQ(ex->submitted(), 1u + kDepth);
  EXPECT_LT(ex->completed(), ex->submitted());
  ex->synchronize();
  EXPECT_EQ(ex->completed(), 1u + kDepth);
  EXPECT_TRUE(ex->submit(job));  // room again
  ex->synchronize();
}

TEST_P(Executor, RunsTenThousandBurstsInSequence) {
  NDQ_REQUIRE_GPU();
  Scenario s(1024, 64, 64, 1, 16, 99);
  s.upload();
  if (HasFatalFailure()) return;
  auto ex = make(4);
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  uint64_t refused = 0;
  while (ex->submitted() < 10000) {
    if (!ex->submit(s.jobs[0])) {
      ++refused;
      ex->completed();
    }
    ASSERT_LT(Clock::now(), deadline) << "stuck at " << ex->submitted() << " submitted, " << ex->completed() << " done";
  }
  while (ex->completed() < ex->submitted()) {
    ASSERT_LT(Clock::now(), deadline) << ex->completed() << " of " << ex->submitted() << " done";
    std::this_thread::yield();
  }
  EXPECT_EQ(ex->completed(), 10000u);
  ex->synchronize();
  ex.reset();
  const auto got = s.download();
  EXPECT_EQ(first_difference(got, s.expected), got.size());
  std::printf("%s: 10000 bursts, %llu refused submits (depth 4)\n", name(GetParam()).c_str(),
              static_cast<unsigned long long>(refused));
}

TEST_P(Executor, DestroyWithWorkInFlightIsCleanAndTheGpuStaysUsable) {
  NDQ_REQUIRE_GPU();
  Scenario s(8192, 256, 4096, 8, 1024, 5);
  s.upload();
  if (HasFatalFailure()) return;
  const auto t0 = Clock::now();
  {
    auto ex = make(8);
    for (const auto& job : s.jobs) ASSERT_TRUE(ex->submit(job));
  }  // destroyed with up to 8 jobs in flight
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10));
  CUDA_OK(cudaGetLastError());
  std::vector<std::byte> probe(16);
  CUDA_OK(cudaMemcpy(probe.data(), s.out.p, probe.size(), cudaMemcpyDeviceToHost));
  // A new executor of the same kind works normally afterwards.
  auto again = make();
  run_all(*again, s.jobs);
  again.reset();
  const auto got = s.download();
  EXPECT_EQ(first_difference(got, s.expected), got.size());
}

// A big burst followed by small ones: with groups > 1 the small ones (other groups) finish
// first on the GPU, yet completed() must count only in order, never past an unfinished job.
// The output ring is mapped host memory, so the host sees each job's bytes land and checks
// every value completed() reports against them: k means jobs 1..k have all written theirs.
TEST_P(Executor, CompletesInOrderWhenLaterSmallBurstsFinishFirst) {
  NDQ_REQUIRE_GPU();
  constexpr uint32_t kEntries = 32768, kBytes = 8192, kSlots = 4096, kSmall = 3;
  constexpr std::byte kUnwritten{0};
  DeviceArray<> in(kBytes);
  std::byte* out = nullptr;
  const size_t out_bytes = size_t{kSlots + kSmall} * kBytes;
  CUDA_OK(cudaHostAlloc(reinterpret_cast<void**>(&out), out_bytes, cudaHostAllocMapped));
  const std::unique_ptr<std::byte, cudaError_t (*)(void*)> out_owner(out, cudaFreeHost);
  std::memset(out, 0, out_bytes);
  DeviceArray<PlacementEntry> entries(kEntries + kSmall);
  ASSERT_TRUE(in.p && entries.p);
  std::vector<std::byte> fill(kBytes);
  for (uint32_t i = 0; i < kBytes; ++i) fill[i] = std::byte(i * 7 + 1);  // never 0: kUnwritten
  CUDA_OK(cudaMemcpy(in.p, fill.data(), kBytes, cudaMemcpyHostToDevice));
  std::vector<PlacementEntry> e(kEntries + kSmall);
  for (uint32_t i = 0; i < kEntries; ++i) e[i] = {reinterpret_cast<uint64_t>(in.p), i % kSlots, 0};
  for (uint32_t i = 0; i < kSmall; ++i) e[kEntries + i] = {reinterpret_cast<uint64_t>(in.p), kSlots + i, 0};
  CUDA_OK(cudaMemcpy(entries.p, e.data(), e.size() * sizeof e[0], cudaMemcpyHostToDevice));
  const PlaceJob big{entries.p, kEntries, kBytes, out, kBytes};
  const auto slot_written = [&](uint32_t slot) {
    return std::memcmp(out + size_t{slot} * kBytes, fill.data(), kBytes) == 0;
  };
  const auto slot_untouched = [&](uint32_t slot) { return out[size_t{slot} * kBytes] == kUnwritten; };

  auto ex = make(4);
  ASSERT_TRUE(ex->submit(PlaceJob{}));  // warm-up (job 1): loads the kernel
  ex->synchronize();
  ASSERT_TRUE(ex->submit(big));  // job 2
  for (uint32_t i = 0; i < kSmall; ++i)  // jobs 3..5
    ASSERT_TRUE(ex->submit(PlaceJob{entries.p + kEntries + i, 1, kBytes, out, kBytes}));
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  std::vector<uint64_t> seen;
  bool small_done_while_big_unreported = false;
  for (uint64_t now = 0; now < 5;) {
    ASSERT_LT(Clock::now(), deadline) << "completed() went " << ::testing::PrintToString(seen);
    now = ex->completed();
    if (!seen.empty() && seen.back() == now) continue;
    seen.push_back(now);
    // What `now` claims, checked against the bytes: the big job's every slot, and small job
    // i's slot once now >= 3 + i.
    if (now >= 2) {
      for (uint32_t s = 0; s < kSlots; ++s) ASSERT_TRUE(slot_written(s)) << "completed() " << now << ", big job slot " << s;
    }
    for (uint32_t i = 0; i < kSmall; ++i) {
      if (now >= 3 + i) {
        ASSERT_TRUE(slot_written(kSlots + i)) << "completed() " << now << ", small job " << 3 + i;
      }
      if (now == 1 && !slot_untouched(kSlots + i)) small_done_while_big_unreported = true;
    }
  }
  // In order, each step once: from the warm-up (1) up to 5, never backwards.
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), 1u) << "the big job ended before completed() was first read: "
                              << ::testing::PrintToString(seen);
  EXPECT_EQ(seen.back(), 5u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end())) << ::testing::PrintToString(seen);
  std::printf("[ executor ] %s: completed() went %s; a small job done while the big one was unreported: %s\n",
              name(GetParam()).c_str(), ::testing::PrintToString(seen).c_str(),
              small_done_while_big_unreported ? "yes" : "no");
  // Whether a small job's bytes were seen before completed() passed the big job is printed,
  // not asserted: on the H100 host even 4 CTA groups showed none land first (the small jobs'
  // writes to host memory queue behind the big job's on PCIe, or the groups take jobs in turn).
  ex->synchronize();
  EXPECT_EQ(ex->completed(), 5u);
  ex.reset();
  for (uint32_t s = 0; s < kSlots + kSmall; ++s) ASSERT_TRUE(slot_written(s)) << "slot " << s;
}

INSTANTIATE_TEST_SUITE_P(AllModes, Executor,
                         ::testing::Values(Kind{LaunchMode::per_burst}, Kind{LaunchMode::graph},
                                           Kind{LaunchMode::persistent, 1}, Kind{LaunchMode::persistent, 4},
                                           Kind{LaunchMode::persistent, 3}),
                         [](const auto& info) { return name(info.param); });

TEST(PersistentExecutor, StartsAndStopsTwentyTimes) {
  NDQ_REQUIRE_GPU();
  Scenario s(1024, 16, 64, 1, 16, 3);
  s.upload();
  if (HasFatalFailure()) return;
  const auto t0 = Clock::now();
  for (int i = 0; i < 20; ++i) {
    SCOPED_TRACE(i);
    ExecutorOptions o;
    o.blocks = 1 + i % 4;  // different grids too
    o.groups = 1 + i % 3;  // and groups (clamped to blocks): 1 CTA groups, uneven groups
    auto ex = make_executor(LaunchMode::persistent, o);
    ASSERT_TRUE(ex->submit(s.jobs[0]));
    ex->synchronize();
    EXPECT_EQ(ex->completed(), 1u);
    EXPECT_NE(ex->stream(), nullptr);
  }
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30));
  const auto got = s.download();
  EXPECT_EQ(first_difference(got, s.expected), got.size());
}

TEST(PersistentExecutor, RefusesMoreBlocksThanCanBeResident) {
  NDQ_REQUIRE_GPU();
  ExecutorOptions o;
  o.blocks = 1u << 20;
  try {
    make_executor(LaunchMode::persistent, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_config);
    EXPECT_NE(std::string(e.what()).find("resident"), std::string::npos) << e.what();
  }
}

TEST(ExecutorOptions, ZeroDepthIsRefused) {
  ExecutorOptions o;
  o.depth = 0;
  try {
    (void)make_executor(LaunchMode::per_burst, o);
    ADD_FAILURE() << "depth 0 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_config) << e.what();
    EXPECT_NE(std::string(e.what()).find("depth must be at least 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace netdaq::gpu
