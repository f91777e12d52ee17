#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "core/buffer_pool.h"
#include "core/memory_region.h"
#include "netdaq/gpu.h"
#include "netdaq/status.h"

using namespace netdaq;
using namespace netdaq::detail;

namespace {
MemoryRegionConfig region_cfg(uint32_t buf_size, uint32_t num_bufs, MemoryKind kind = MemoryKind::host) {
  MemoryRegionConfig c;
  c.name = "r";
  c.kind = kind;
  c.buf_size = buf_size;
  c.num_bufs = num_bufs;
  return c;
}
}  // namespace

TEST(MemoryRegion, HostRegionIsLargeEnoughAndWritable) {
  auto r = create_region(region_cfg(1000, 100));
  EXPECT_EQ(r->kind(), MemoryKind::host);
  EXPECT_GE(r->size(), buffer_stride(1000) * 100);
  std::memset(r->base(), 0xab, r->size());
}

TEST(MemoryRegion, StrideIsCacheLineAligned) {
  EXPECT_EQ(buffer_stride(1), 64u);
  EXPECT_EQ(buffer_stride(64), 64u);
  EXPECT_EQ(buffer_stride(1500), 1536u);
}

// Without reserved hugepages, kind huge falls back to host memory (with a warning), or
// fails with instructions when hugepages are required.
TEST(MemoryRegion, HugeFallsBackOrExplainsHowToReserve) {
  auto cfg = region_cfg(2048, 4096, MemoryKind::huge);
  auto r = create_region(cfg);
  EXPECT_TRUE(r->kind() == MemoryKind::huge || r->kind() == MemoryKind::host);
  cfg.hugepages_required = true;
  cfg.num_bufs = 1u << 22;  // 8 GiB of hugepages: more than any test machine reserves
  try {
    create_region(cfg);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::resource);
    EXPECT_NE(std::string(e.what()).find("nr_hugepages"), std::string::npos) << e.what();
  }
}

TEST(MemoryRegion, GpuKindsNeedGpuSupport) {
  // Where a GPU is usable device regions work (tests/gpu covers them); elsewhere they are refused.
  if (gpu::device_count() > 0) GTEST_SKIP() << "a GPU is usable here: tests/gpu covers device regions";
  auto cfg = region_cfg(2048, 16, MemoryKind::device);
  cfg.gpu = 0;
  try {
    create_region(cfg);
    FAIL() << "without a usable GPU, device memory must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    EXPECT_NE(std::string(e.what()).find("GPU"), std::string::npos);
  }
}

TEST(BufferPool, HandsOutEachBufferOnceAndTakesThemBack) {
  auto region = create_region(region_cfg(256, 64));
  BufferPool pool(*region, 256, 64);
  EXPECT_EQ(pool.available(), 64u);
  uint32_t idx[80];
  EXPECT_EQ(pool.alloc_burst(idx, 80), 64u);
  EXPECT_EQ(pool.available(), 0u);
  std::set<uint32_t> unique(idx, idx + 64);
  EXPECT_EQ(unique.size(), 64u);
  for (uint32_t i = 0; i < 64; ++i) {
    EXPECT_EQ(pool.index_of(pool.address(idx[i])), idx[i]);
    EXPECT_GE(pool.address(idx[i]), region->base());
    EXPECT_LE(pool.address(idx[i]) + 256, region->base() + region->size());
  }
  uint32_t extra;
  EXPECT_EQ(pool.alloc_burst(&extra, 1), 0u);
  pool.free_bulk(idx, 64);
  EXPECT_EQ(pool.available(), 64u);
  EXPECT_EQ(pool.alloc_bulk(idx, 65), 0u);
  EXPECT_EQ(pool.alloc_bulk(idx, 64), 64u);
}

TEST(BufferPool, ConcurrentAllocAndFreeNeverDuplicates) {
  auto region = create_region(region_cfg(64, 512));
  BufferPool pool(*region, 64, 512);
  std::vector<std::thread> threads;
  std::atomic<bool> bad{false};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      uint32_t idx[32];
      for (int round = 0; round < 20000; ++round) {
        uint32_t n = pool.alloc_burst(idx, 32);
        for (uint32_t i = 0; i < n; ++i) {
          // Stamp the buffer; a buffer handed out twice would be overwritten by another thread.
          auto* p = reinterpret_cast<uint32_t*>(pool.address(idx[i]));
          *p = uint32_t(t) << 24 | idx[i];
        }
        for (uint32_t i = 0; i < n; ++i)
          if (*reinterpret_cast<uint32_t*>(pool.address(idx[i])) != (uint32_t(t) << 24 | idx[i])) bad = true;
        pool.free_bulk(idx, n);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_FALSE(bad.load());
  EXPECT_EQ(pool.available(), 512u);
}
