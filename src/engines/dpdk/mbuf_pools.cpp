#include "engines/dpdk/mbuf_pools.h"

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_memory.h>

#include "core/log.h"
#include "core/memory_region.h"
#include "engines/dpdk/eal.h"
#include "engines/dpdk/limits.h"
#include "netdaq/status.h"

// The validator's rule for rx buf_size (dpdk/limits.h) assumes DPDK's headroom.
static_assert(netdaq::detail::dpdk_limits::kMbufHeadroom == RTE_PKTMBUF_HEADROOM);

namespace netdaq::detail::dpdk {

namespace {
std::string unique_name(const char* stem) {
  static std::atomic<unsigned> n{0};
  return std::string(stem) + std::to_string(n.fetch_add(1));
}

size_t page_size_of(const MemoryRegion& r) {
  switch (r.kind()) {
    case MemoryKind::huge: return size_t{2} << 20;
    case MemoryKind::device: return size_t{64} << 10;  // GPU pages
    default: return 4096;
  }
}

rte_device* device_of(uint16_t port) {
  rte_eth_dev_info info{};
  return rte_eth_dev_info_get(port, &info) == 0 ? info.device : nullptr;
}
}  // namespace

ExternalMemory::ExternalMemory(const BufferPool& pool, uint16_t port, const std::string& context) {
  if (rte_eal_iova_mode() != RTE_IOVA_VA)
    throw Error(Errc::unsupported, context + ": DPDK runs with IOVA as physical addresses; netdaq's dpdk engine "
                                             "receives into its own memory regions and needs IOVA as VA (bind the "
                                             "NIC to vfio-pci with an IOMMU, or add --iova-mode=va to eal.args)");
  const MemoryRegion& r = pool.region();
  const size_t page = page_size_of(r);
  base_ = r.base();
  len_ = (r.size() + page - 1) / page * page;
  if (rte_extmem_register(base_, len_, nullptr, 0, page) == 0) {
    registered_ = true;
  } else if (rte_errno != EEXIST) {
    throw Error(Errc::system, context + ": rte_extmem_register of memory region '" + r.name() + "' (" +
                                  std::to_string(len_) + " bytes) failed: " + rte_strerror(rte_errno));
  }
  // PCI devices DMA into the region through the IOMMU; virtual devices have nothing to map.
  if (rte_device* dev = device_of(port)) {
    if (rte_dev_dma_map(dev, base_, iova(base_), len_) == 0) {
      mapped_for_ = dev;
    } else if (rte_errno != ENOTSUP && rte_errno != EEXIST) {
      log()->debug("{}: rte_dev_dma_map of region '{}': {} (the device maps memory itself)", context, r.name(),
                   rte_strerror(rte_errno));
    }
  }
}

ExternalMemory::~ExternalMemory() {
  if (mapped_for_) rte_dev_dma_unmap(mapped_for_, base_, iova(base_), len_);
  if (registered_) rte_extmem_unregister(base_, len_);
}

RegionMbufPool::RegionMbufPool(BufferPool& pool, uint16_t port, int socket, uint32_t cache, bool in_dpdk_memory,
                               const std::string& context)
    : pool_(pool) {
  const uint32_t n = pool.capacity();
  taken_.resize(n);
  if (pool.alloc_bulk(taken_.data(), n) != n) {
    taken_.clear();
    throw Error(Errc::resource, context + ": memory region '" + pool.region().name() +
                                    "' has buffers in use by another queue; a dpdk rx queue turns all of its "
                                    "region's buffers into mbufs: give it a region of its own");
  }
  if (in_dpdk_memory) {
    const std::string name = unique_name("ndq_rxd");
    mp_ = rte_pktmbuf_pool_create(name.c_str(), n, cache, 0, static_cast<uint16_t>(pool.stride()), socket);
    if (!mp_) {
      pool.free_bulk(taken_.data(), n);
      taken_.clear();
      throw Error(Errc::resource, context + ": cannot create " + std::to_string(n) + " mbufs of " +
                                      std::to_string(pool.stride()) + " bytes in EAL memory: " +
                                      rte_strerror(rte_errno) + " (raise eal.memory_mb)");
    }
    return;
  }
  try {
    extmem_ = std::make_unique<ExternalMemory>(pool, port, context);
    rte_pktmbuf_extmem ext{};
    ext.buf_ptr = pool.address(0);
    ext.buf_iova = extmem_->iova(ext.buf_ptr);
    ext.buf_len = pool.stride() * n;
    ext.elt_size = static_cast<uint16_t>(pool.stride());
    const std::string name = unique_name("ndq_rx");
    mp_ = rte_pktmbuf_pool_create_extbuf(name.c_str(), n, cache, 0, static_cast<uint16_t>(pool.stride()), socket,
                                         &ext, 1);
    if (!mp_)
      throw Error(Errc::resource, context + ": cannot create a mempool of " + std::to_string(n) +
                                      " mbufs over region '" + pool.region().name() + "': " + rte_strerror(rte_errno) +
                                      " (mbuf headers come from EAL memory: raise eal.memory_mb)");
  } catch (...) {
    extmem_.reset();
    pool.free_bulk(taken_.data(), n);
    throw;
  }
}

RegionMbufPool::~RegionMbufPool() {
  if (mp_) {
    // Our own mbufs must all be back; drivers with their own layout (af_xdp) keep their fill
    // ring's mbufs when they close.
    if (const uint32_t out = in_use()) {
      if (in_region())
        log()->warn("dpdk: mempool over region '{}' freed with {} mbufs still out", pool_.region().name(), out);
      else
        log()->debug("dpdk: mempool for region '{}' freed with {} mbufs kept by the driver", pool_.region().name(), out);
    }
    rte_mempool_free(mp_);
  }
  extmem_.reset();
  if (!taken_.empty()) pool_.free_bulk(taken_.data(), static_cast<uint32_t>(taken_.size()));
}

uint32_t RegionMbufPool::in_use() const noexcept { return mp_ ? rte_mempool_in_use_count(mp_) : 0; }

TxMbufs::TxMbufs(BufferPool& pool, QueueCounters& counters, uint16_t port, int socket, uint32_t cache,
                 const std::string& context)
    : pool_(pool), counters_(counters), shinfo_(pool.capacity()) {
  extmem_ = std::make_unique<ExternalMemory>(pool, port, context);
  const std::string name = unique_name("ndq_tx");
  const uint32_t n = pool.capacity() + 64;  // an mbuf per buffer, plus headroom for caches
  headers_ = rte_pktmbuf_pool_create(name.c_str(), n, std::min<uint32_t>(cache, n / 2), 0, 0, socket);
  if (!headers_)
    throw Error(Errc::resource, context + ": cannot create " + std::to_string(n) + " tx mbuf headers: " +
                                    rte_strerror(rte_errno) + " (they come from EAL memory: raise eal.memory_mb)");
  for (auto& s : shinfo_) {
    s.free_cb = &TxMbufs::buffer_done;
    s.fcb_opaque = this;
    rte_mbuf_ext_refcnt_set(&s, 1);
  }
}

TxMbufs::~TxMbufs() {
  if (headers_) rte_mempool_free(headers_);
}

void TxMbufs::attach(rte_mbuf* m, uint32_t idx) noexcept {
  rte_mbuf_ext_shared_info* s = &shinfo_[idx];
  rte_mbuf_ext_refcnt_set(s, 1);
  std::byte* buf = pool_.address(idx);
  rte_pktmbuf_attach_extbuf(m, buf, extmem_->iova(buf), static_cast<uint16_t>(pool_.stride()), s);
  m->data_off = 0;
  in_flight_.fetch_add(1, std::memory_order_relaxed);
}

void TxMbufs::free_unsent(rte_mbuf** m, uint32_t n) noexcept {
  for (uint32_t i = 0; i < n; ++i) {
    rte_mbuf_ext_refcnt_update(m[i]->shinfo, 1);  // keeps buffer_done from running
    rte_pktmbuf_free(m[i]);
    in_flight_.fetch_sub(1, std::memory_order_relaxed);
  }
}

// DPDK is done with a buffer (sent, or dropped by the driver): back to the netdaq pool.
void TxMbufs::buffer_done(void* addr, void* opaque) {
  auto* self = static_cast<TxMbufs*>(opaque);
  const uint32_t idx = self->pool_.index_of(static_cast<std::byte*>(addr));
  self->pool_.free_bulk(&idx, 1);
  self->counters_.pool_in_use.fetch_sub(1, std::memory_order_relaxed);
  self->in_flight_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace netdaq::detail::dpdk
