// The XSK frame sender's loop (docs/gpu-afxdp.md): cuts queued frames into packets written
// straight into UMEM buffers, posts their TX descriptors and takes buffers back from the
// completion ring. Written once for a thread block of a persistent kernel (GpuExec) and for
// one CPU thread (CpuExec): xsk_exec.cuh.
//
// One step: thread 0 reads the completion producer and the frames queued (system-scope
// acquire) and picks up to kXskSendBatch packets, as many as free buffers allow (a packet
// larger than a buffer takes several, one descriptor each, linked by XDP_PKT_CONTD); every thread
// checks a share of the completions (each must name the oldest buffer in flight: buffers go
// out in turn and the kernel completes in order); the warps write one packet each (headers,
// sequence, samples) and its descriptor; every thread fences at system scope; thread 0
// releases the TX producer, the completion consumer and the count of frames sent.
#pragma once

#include <cuda/atomic>
#include <linux/if_xdp.h>

#include <cstring>

#include "gpu/xsk_exec.cuh"
#include "gpu/xsk_send_shared.h"

namespace netdaq::gpu::detail {

constexpr uint32_t kXskSendReap = kThreads;  // completions one step checks

// The driver's state: __shared__ on the GPU. Written by thread 0 except the per-entry arrays
// of the parallel phase (each entry by one thread or warp).
struct XskSendState {
  // This step.
  uint32_t n;
  uint32_t ncomp;
  uint32_t quit;
  const std::byte* src[kXskSendBatch];
  uint64_t seq[kXskSendBatch];
  unsigned char bad[kXskSendReap];
  // Across steps (thread 0).
  uint32_t tx_prod, comp_cons, taken, queued;
  uint64_t posted, completed;  // descriptors (buffers), buffers_per_packet a packet
  uint32_t next_packet;  // of the frame queue[taken] (frames are taken whole, in turn)
  XskSendCounters c;
};

template <class Exec>
struct XskSendDriver {
  const XskSendParams& p;
  XskSendState& s;
  Exec& x;

  NDQ_HD uint32_t load_acquire(const uint32_t* a) { return xsk_load_acquire(a); }
  NDQ_HD void store_release(uint32_t* a, uint32_t v) { xsk_store_release(a, v); }

  NDQ_HD uint32_t packet_bytes() const { return p.header_bytes + p.payload_offset + p.payload_size; }
  NDQ_HD uint64_t buffer(uint64_t turn) const { return p.buffers[turn % p.nbuffers]; }

  NDQ_HD void init() {
    if (x.tid() != 0) return;
    s = XskSendState{};
    s.tx_prod = load_acquire(p.tx_producer);
    s.comp_cons = load_acquire(p.comp_consumer);
  }

  // Thread 0: completions to check, packets to write, whether to stop.
  NDQ_HD void begin_step() {
    const uint32_t comp = load_acquire(p.comp_producer) - s.comp_cons;
    s.ncomp = comp < kXskSendReap ? comp : kXskSendReap;
    const uint64_t in_flight = s.posted - s.completed - s.ncomp;
    const uint64_t free = (p.nbuffers - in_flight) / p.buffers_per_packet;  // packets that fit
    const uint32_t want = free < kXskSendBatch ? static_cast<uint32_t>(free) : kXskSendBatch;
    s.n = 0;
    while (s.n < want) {
      if (s.taken == s.queued && (s.queued = load_acquire(&p.control->queued)) == s.taken) break;
      const XskSendEntry& f = p.queue[s.taken & p.ring_mask];
      const uint32_t k = s.next_packet;
      s.src[s.n] = f.data + uint64_t{k} * p.payload_size;
      s.seq[s.n] = f.index * p.packets_per_frame + k;
      ++s.n;
      if (++s.next_packet == p.packets_per_frame) {
        s.next_packet = 0;
        ++s.taken;
        ++s.c.frames_sent;
      }
    }
    const uint32_t stop = load_acquire(&p.control->stop);
    s.quit = stop == 2 || (stop == 1 && s.n == 0 && s.taken == s.queued && in_flight == 0);
  }

  NDQ_HD unsigned char packet_byte(uint32_t i, const std::byte* src, uint64_t seq) const {
    if (i < p.header_bytes) return p.headers[i];
    i -= p.header_bytes;
    if (i >= p.payload_offset) return static_cast<unsigned char>(src[i - p.payload_offset]);
    if (i < p.seq_offset || i >= p.seq_offset + p.seq_bytes) return 0;
    const uint32_t k = i - p.seq_offset;
    return static_cast<unsigned char>(seq >> (8 * (p.seq_big ? p.seq_bytes - 1 - k : k)));
  }

  // Packet byte `at` in the UMEM: buffer at / buffer_bytes of the packet's, at that offset.
  NDQ_HD unsigned char* umem_at(uint64_t first_turn, uint32_t at) const {
    return reinterpret_cast<unsigned char*>(p.umem + buffer(first_turn + at / p.buffer_bytes) + at % p.buffer_bytes);
  }

  // One warp: packet j into its buffers (8-byte stores, whole words only: the next buffer may
  // be the kernel's; buffer_bytes is a multiple of 8, so no word straddles two), and its
  // descriptors.
  NDQ_HD void write_packet(uint32_t j, uint32_t lane, uint32_t lanes) {
    const uint32_t per = p.buffers_per_packet;
    const uint64_t turn = s.posted + uint64_t{j} * per;
    const uint32_t len = packet_bytes();
    const std::byte* src = s.src[j];
    const uint64_t seq = s.seq[j];
    if constexpr (Exec::kCpu) {
      const uint32_t samples_at = p.header_bytes + p.payload_offset;
      for (uint32_t lo = 0; lo < len; lo += p.buffer_bytes) {
        const uint32_t hi = len - lo < p.buffer_bytes ? len : lo + p.buffer_bytes;
        unsigned char* dst = umem_at(turn, lo);
        uint32_t i = lo;
        for (; i < hi && i < samples_at; ++i) dst[i - lo] = packet_byte(i, src, seq);
        if (i < hi) std::memcpy(dst + (i - lo), src + (i - samples_at), hi - i);
      }
    } else {
      for (uint32_t w = lane; w * 8 < len; w += lanes) {
        const uint32_t at = w * 8;
        unsigned char* dst = umem_at(turn, at);
        if (at + 8 <= len) {
          uint64_t v = 0;
          for (uint32_t b = 0; b < 8; ++b) v |= uint64_t{packet_byte(at + b, src, seq)} << (8 * b);
          *reinterpret_cast<uint64_t*>(dst) = v;
        } else {
          for (uint32_t i = at; i < len; ++i) dst[i - at] = packet_byte(i, src, seq);
        }
      }
    }
    for (uint32_t k = lane; k < per; k += lanes) {
      xdp_desc& d = static_cast<xdp_desc*>(p.tx_entries)[(s.tx_prod + j * per + k) & p.tx_mask];
      const uint32_t lo = k * p.buffer_bytes;
      d.addr = buffer(turn + k);
      d.len = len - lo < p.buffer_bytes ? len - lo : p.buffer_bytes;
      d.options = k + 1 < per ? XDP_PKT_CONTD : 0;
    }
  }

  // Every thread: a share of the completions checked; every warp: packets written.
  NDQ_HD void work(uint32_t tid, uint32_t nt, uint32_t warp, uint32_t warps, uint32_t lane, uint32_t lanes) {
    for (uint32_t i = tid; i < s.ncomp; i += nt)
      s.bad[i] = p.comp_entries[(s.comp_cons + i) & p.comp_mask] != buffer(s.completed + i);
    for (uint32_t j = warp; j < s.n; j += warps) write_packet(j, lane, lanes);
  }

  // Thread 0, after every thread's system fence.
  NDQ_HD void end_step() {
    if (s.ncomp) {
      for (uint32_t i = 0; i < s.ncomp; ++i) s.c.bad_completions += s.bad[i];
      s.completed += s.ncomp;
      s.comp_cons += s.ncomp;
      s.c.packets_completed = s.completed / p.buffers_per_packet;
      store_release(p.comp_consumer, s.comp_cons);  // the kernel may reuse those slots
    }
    if (s.n) {
      s.posted += uint64_t{s.n} * p.buffers_per_packet;
      s.tx_prod += s.n * p.buffers_per_packet;
      s.c.packets_posted = s.posted / p.buffers_per_packet;
      ++s.c.batches;
      store_release(p.tx_producer, s.tx_prod);  // the packets are the kernel's to send
      store_release(&p.control->taken, s.taken);  // and those frames' memory is free again
    }
    if (s.n || s.ncomp) publish_counters();
  }

  NDQ_HD void publish_counters() { publish_xsk_counters(s.c, p.control->counters); }

  // The whole loop, until stopped. Every thread of the block (one on the CPU).
  NDQ_HD void run() {
    const uint32_t tid = x.tid(), nt = x.threads(), warp = x.warp(), warps = x.warps(), lane = x.lane(),
                   lanes = x.lanes();
    init();
    x.sync();
    for (;;) {
      if (tid == 0) begin_step();
      x.sync();
      work(tid, nt, warp, warps, lane, lanes);
      x.fence_system();
      x.sync();
      if (tid == 0) end_step();
      const bool quit = s.quit, idle = s.n == 0 && s.ncomp == 0;
      x.sync();  // nobody reads this step's state after thread 0 starts the next
      if (quit) break;
      if (tid == 0 && idle) x.idle();
    }
    if (tid == 0) announce_xsk_exit(x, s.c, p.control->counters, &p.control->exited);
  }
};

}  // namespace netdaq::gpu::detail
