#include <algorithm>

#include "core/engine.h"

namespace netdaq::detail {

uint32_t attach_buffers(const QueueResources& q, Packet* pkts, uint32_t n) noexcept {
  constexpr uint32_t kChunk = 256;
  uint32_t idx[kMaxSegments][kChunk];
  uint32_t done = 0;
  while (done < n) {
    uint32_t want = std::min(n - done, kChunk);
    uint32_t got = q.pools[0]->alloc_burst(idx[0], want);
    for (unsigned s = 1; s < q.segments && got; ++s) {
      uint32_t g = q.pools[s]->alloc_burst(idx[s], got);
      if (g < got) {  // fewer of this segment: give back the excess of earlier segments
        for (unsigned t = 0; t < s; ++t) q.pools[t]->free_bulk(idx[t] + g, got - g);
        got = g;
      }
    }
    for (uint32_t i = 0; i < got; ++i) {
      auto& f = fields(pkts[done + i]);
      f.nseg = static_cast<uint8_t>(q.segments);
      f.flow = 0;
      f.has_immediate = 0;
      f.timestamp_ns = 0;
      for (unsigned s = 0; s < q.segments; ++s) {
        f.buf[s] = idx[s][i];
        f.data[s] = q.pools[s]->address(idx[s][i]);
        f.cap[s] = q.pools[s]->buf_size();
        f.len[s] = 0;
      }
    }
    done += got;
    if (got < want) break;
  }
  if (done) q.counters->pool_in_use.fetch_add(done, std::memory_order_relaxed);
  return done;
}

void return_buffers(const QueueResources& q, Packet* pkts, uint32_t n) noexcept {
  constexpr uint32_t kChunk = 256;
  uint32_t idx[kChunk * kMaxSegments];
  if (q.segments > 1) {  // header-data split: one buffer of each pool, one pool_in_use each
    for (unsigned s = 0; s < q.segments; ++s) {
      for (uint32_t base = 0; base < n; base += kChunk) {
        const uint32_t m = std::min(n - base, kChunk);
        for (uint32_t i = 0; i < m; ++i) idx[i] = fields(pkts[base + i]).buf[s];
        q.pools[s]->free_bulk(idx, m);
      }
    }
    if (n) q.counters->pool_in_use.fetch_sub(n, std::memory_order_relaxed);
    return;
  }
  // One pool: a packet holds a buffer per segment (two for a frame received in two buffers,
  // afxdp multi-buffer), each counted in pool_in_use.
  uint64_t total = 0;
  for (uint32_t base = 0; base < n; base += kChunk) {
    const uint32_t m = std::min(n - base, kChunk);
    uint32_t k = 0;
    for (uint32_t i = 0; i < m; ++i) {
      const PacketFields& f = fields(pkts[base + i]);
      idx[k++] = f.buf[0];
      if (__builtin_expect(f.nseg > 1, 0)) idx[k++] = f.buf[1];
    }
    q.pools[0]->free_bulk(idx, k);
    total += k;
  }
  if (total) q.counters->pool_in_use.fetch_sub(static_cast<int64_t>(total), std::memory_order_relaxed);
}

uint64_t packet_bytes(const Packet* pkts, uint32_t n) noexcept {
  uint64_t b = 0;
  for (uint32_t i = 0; i < n; ++i) b += pkts[i].size();
  return b;
}

}  // namespace netdaq::detail
