// Mbufs over netdaq memory regions.
//  RegionMbufPool: every buffer of a region becomes the data room of one mbuf of a DPDK mempool
//    (external memory: rte_extmem_register + rte_dev_dma_map, rte_pktmbuf_pool_create_extbuf),
//    so the NIC receives straight into the region (host, hugepage, pinned or GPU memory).
//  TxMbufs: mbuf headers without data room, attached to the application's TX buffers
//    (rte_pktmbuf_attach_extbuf); DPDK hands each buffer back to its netdaq pool when the NIC
//    is done with it.
#pragma once

#include <rte_dev.h>
#include <rte_mbuf.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/buffer_pool.h"
#include "core/counters.h"

namespace netdaq::detail::dpdk {

// The region's memory registered with DPDK and mapped for the port's device (refcounted per
// region: several pools and ports share one registration).
class ExternalMemory {
 public:
  ExternalMemory(const BufferPool& pool, uint16_t port, const std::string& context);
  ~ExternalMemory();
  ExternalMemory(const ExternalMemory&) = delete;
  ExternalMemory& operator=(const ExternalMemory&) = delete;
  rte_iova_t iova(const void* va) const noexcept { return reinterpret_cast<rte_iova_t>(va); }  // IOVA as VA

 private:
  void* base_ = nullptr;
  size_t len_ = 0;
  rte_device* mapped_for_ = nullptr;  // the device it is DMA-mapped for
  bool registered_ = false;
};

class RegionMbufPool {
 public:
  // Takes every buffer of pool (throws Error when another queue holds some). in_dpdk_memory:
  // for drivers that need their own mbuf layout (af_xdp), the mbufs and their data come from
  // EAL memory instead (as many, as large); the region's buffers stay reserved and unused.
  RegionMbufPool(BufferPool& pool, uint16_t port, int socket, uint32_t cache, bool in_dpdk_memory,
                 const std::string& context);
  bool in_region() const noexcept { return extmem_ != nullptr; }
  ~RegionMbufPool();
  RegionMbufPool(const RegionMbufPool&) = delete;
  RegionMbufPool& operator=(const RegionMbufPool&) = delete;

  rte_mempool* mempool() const noexcept { return mp_; }
  const BufferPool& pool() const noexcept { return pool_; }
  uint32_t in_use() const noexcept;  // mbufs out of the mempool (NIC ring + application)

 private:
  BufferPool& pool_;
  std::vector<uint32_t> taken_;
  std::unique_ptr<ExternalMemory> extmem_;
  rte_mempool* mp_ = nullptr;
};

class TxMbufs {
 public:
  TxMbufs(BufferPool& pool, QueueCounters& counters, uint16_t port, int socket, uint32_t cache,
          const std::string& context);
  ~TxMbufs();
  TxMbufs(const TxMbufs&) = delete;
  TxMbufs& operator=(const TxMbufs&) = delete;

  // n mbuf headers, all or none.
  bool alloc(rte_mbuf** m, uint32_t n) noexcept { return rte_pktmbuf_alloc_bulk(headers_, m, n) == 0; }
  // Attaches buffer idx of the pool (its whole stride) to m; data_off 0, length 0.
  void attach(rte_mbuf* m, uint32_t idx) noexcept;
  // Frees mbufs that were not sent without returning their buffers (the application keeps them).
  void free_unsent(rte_mbuf** m, uint32_t n) noexcept;
  uint32_t in_flight() const noexcept { return in_flight_.load(std::memory_order_relaxed); }

 private:
  static void buffer_done(void* addr, void* opaque);

  BufferPool& pool_;
  QueueCounters& counters_;
  std::unique_ptr<ExternalMemory> extmem_;
  rte_mempool* headers_ = nullptr;
  std::vector<rte_mbuf_ext_shared_info> shinfo_;  // one per buffer of the pool
  std::atomic<uint32_t> in_flight_{0};
};

}  // namespace netdaq::detail::dpdk
