// Buffer pool: cost of allocating and freeing a burst of buffers (what every RX burst pays).
#include <benchmark/benchmark.h>

#include <vector>

#include "core/buffer_pool.h"
#include "core/memory_region.h"

using namespace netdaq;
using namespace netdaq::detail;

static void BM_PoolAllocFreeBurst(benchmark::State& state) {
  const auto burst = static_cast<uint32_t>(state.range(0));
  MemoryRegionConfig cfg;
  cfg.name = "bench";
  cfg.buf_size = 2048;
  cfg.num_bufs = 8192;
  auto region = create_region(cfg);
  BufferPool pool(*region, cfg.buf_size, cfg.num_bufs);
  std::vector<uint32_t> idx(burst);
  for (auto _ : state) {
    uint32_t n = pool.alloc_burst(idx.data(), burst);
    pool.free_bulk(idx.data(), n);
  }
  state.SetItemsProcessed(state.iterations() * burst);
}
BENCHMARK(BM_PoolAllocFreeBurst)->Arg(1)->Arg(32)->Arg(64)->Arg(256);
