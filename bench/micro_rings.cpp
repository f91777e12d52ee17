// Ring throughput: items per second through SPSC and MPMC rings, single thread and across
// two threads, for burst sizes 1..256.
#include <benchmark/benchmark.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/ring.h"

using netdaq::detail::MpmcRing;
using netdaq::detail::SpscRing;

static void BM_SpscSameThread(benchmark::State& state) {
  const auto burst = static_cast<uint32_t>(state.range(0));
  SpscRing<void*> ring(1024);
  std::vector<void*> items(burst, nullptr);
  for (auto _ : state) {
    ring.push_burst(items.data(), burst);
    benchmark::DoNotOptimize(ring.pop_burst(items.data(), burst));
  }
  state.SetItemsProcessed(state.iterations() * burst);
}
BENCHMARK(BM_SpscSameThread)->Arg(1)->Arg(32)->Arg(256);

static void BM_MpmcSameThread(benchmark::State& state) {
  const auto burst = static_cast<uint32_t>(state.range(0));
  MpmcRing<uint32_t> ring(1024);
  std::vector<uint32_t> items(burst, 0);
  for (auto _ : state) {
    ring.enqueue_burst(items.data(), burst);
    benchmark::DoNotOptimize(ring.dequeue_burst(items.data(), burst));
  }
  state.SetItemsProcessed(state.iterations() * burst);
}
BENCHMARK(BM_MpmcSameThread)->Arg(1)->Arg(32)->Arg(256);

// Producer thread pushes, the benchmark thread pops: the worker → application handoff.
template <typename Ring, bool kSpsc>
static void cross_thread(benchmark::State& state) {
  const auto burst = static_cast<uint32_t>(state.range(0));
  Ring ring(4096);
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    std::vector<uint32_t> items(burst, 7);
    while (!stop.load(std::memory_order_relaxed)) {
      if constexpr (kSpsc) ring.push_burst(items.data(), burst);
      else ring.enqueue_burst(items.data(), burst);
    }
  });
  // Each iteration waits for a fixed number of items, so the figure is the handoff rate
  // (it needs two free cores to mean anything).
  constexpr uint64_t kPerIteration = 1 << 16;
  std::vector<uint32_t> out(burst);
  uint64_t got = 0;
  for (auto _ : state) {
    for (uint64_t want = got + kPerIteration; got < want;) {
      if constexpr (kSpsc) got += ring.pop_burst(out.data(), burst);
      else got += ring.dequeue_burst(out.data(), burst);
    }
  }
  stop = true;
  producer.join();
  state.SetItemsProcessed(static_cast<int64_t>(got));
}
static void BM_SpscCrossThread(benchmark::State& s) { cross_thread<SpscRing<uint32_t>, true>(s); }
static void BM_MpmcCrossThread(benchmark::State& s) { cross_thread<MpmcRing<uint32_t>, false>(s); }
BENCHMARK(BM_SpscCrossThread)->Arg(32)->Arg(256)->UseRealTime();
BENCHMARK(BM_MpmcCrossThread)->Arg(32)->Arg(256)->UseRealTime();
