// The XSK frame receiver's loop (docs/gpu-afxdp.md): takes descriptors from an AF_XDP RX
// ring, places each packet's samples into its frame, gives the buffer straight back through
// the fill ring, and publishes frames in order. Written once for a thread block of a
// persistent kernel (GpuExec) and for one CPU thread (CpuExec, the reference and the CI test
// of the ring protocol): Exec says who this thread is, how threads meet and what time it is.
//
// One step: thread 0 reads the RX producer (system-scope acquire); the warps read the new
// descriptors and the first kXskHeaderBytes of each packet (one round trip over the bus each);
// thread 0 groups descriptors into packets (multi-buffer: all but a packet's last marked
// XDP_PKT_CONTD; a step takes whole packets only); the warps find each packet's UDP payload
// and sequence number; thread 0 decides every packet's fate in order (frame table and
// bitmaps: no atomics); the warps copy each buffer's share of the samples and write the fill
// entries; frames that closed are zero-filled where packets are missing; every thread fences
// at system scope; thread 0 releases the RX consumer, the fill producer and the published
// frames. Every packet ends in exactly one counter (XskCounters).
#pragma once

#include <cuda/atomic>

#include "gpu/host/sequence_unwrap.h"
#include "gpu/place_device.cuh"
#include "net/frame_headers.h"
#include "gpu/xsk_exec.cuh"
#include "gpu/xsk_receive_shared.h"

namespace netdaq::gpu::detail {

struct XskOpenFrame {
  uint64_t index;
  uint64_t first_ns;
  uint32_t buffer;
  uint32_t received;
  uint32_t complete;
};

// The driver's state: __shared__ on the GPU. Written by thread 0 except the per-packet arrays
// of the step's parallel phases (each entry by one warp).
struct XskState {
  // This step.
  uint32_t n;
  uint32_t quit;
  uint32_t npublish;
  uint32_t kind[kXskBatch];       // kOk, kMalformed
  uint32_t options[kXskBatch];
  uint32_t len[kXskBatch];
  uint64_t addr[kXskBatch];       // descriptor address
  // Packets: descriptor j belongs to the packet whose first descriptor is first[j] (kCarried:
  // to one longer than a step, given back), and holds its bytes from pos[j].
  uint32_t first[kXskBatch];
  uint32_t pos[kXskBatch];
  // By a packet's first descriptor: its bytes in all buffers, where its samples start (a byte
  // of the packet), its sequence number and frame offset.
  uint32_t total[kXskBatch];
  uint32_t samples_at[kXskBatch];
  uint64_t seq[kXskBatch];
  uint64_t dst[kXskBatch];        // byte offset into frames, or kNone
  alignas(16) unsigned char hdr[kXskBatch][kXskHeaderBytes + 16];
  // Frames closed this step: at most one per packet, plus the open ones (stopping).
  XskOpenFrame publish[kXskBatch + kXskMaxOpen];
  uint32_t publish_complete[kXskBatch + kXskMaxOpen];
  // Across steps (thread 0).
  XskOpenFrame open[kXskMaxOpen];  // by index, oldest first
  uint32_t nopen;
  uint32_t free_stack[kXskMaxBuffers];
  uint32_t nfree;
  uint32_t free_cons;
  uint32_t rx_cons, fill_prod, done_prod;
  uint64_t next_index;        // frames below it are published (or skipped)
  int64_t newest_seq;         // narrow counters are unwrapped around it
  // Frames at or above next_index whose packets found no buffer (their indices; counted as
  // dropped, not skipped, when the frames after them close, unless they opened later).
  uint64_t dropped[kXskMaxDropped];
  uint32_t ndropped;
  uint32_t have_seq;
  uint32_t in_multi;          // inside a packet longer than a step (never on a real link: given back)
  XskCounters c;
};

constexpr uint32_t kOk = 0, kMalformed = 1;
constexpr uint64_t kNone = ~uint64_t{0};
constexpr uint32_t kCarried = ~uint32_t{0};

NDQ_HD uint64_t read_field(const unsigned char* p, uint32_t bytes, bool big) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < bytes; ++i) v |= uint64_t{p[big ? i : bytes - 1 - i]} << (8 * (bytes - 1 - i));
  return v;
}

template <class Exec>
struct XskDriver {
  const XskParams& p;
  XskState& s;
  Exec& x;

  NDQ_HD uint32_t load_acquire(const uint32_t* a) { return xsk_load_acquire(a); }
  NDQ_HD void store_release(uint32_t* a, uint32_t v) { xsk_store_release(a, v); }

  NDQ_HD void init() {
    if (x.tid() != 0) return;
    s = XskState{};
    s.rx_cons = load_acquire(p.rx_consumer);
    s.fill_prod = load_acquire(p.fill_producer);
    for (uint32_t b = 0; b < p.buffers; ++b) s.free_stack[s.nfree++] = p.buffers - 1 - b;
  }

  // Thread 0: what the ring holds; buffers the API gave back; whether to stop. The ring's
  // producer is read first: a frame released before a packet was sent is then always seen
  // free by the step that takes the packet (read the other way round, a driver preempted
  // between the two loads counted such packets no_buffer).
  NDQ_HD void begin_step() {
    const uint32_t avail = load_acquire(p.rx_producer) - s.rx_cons;
    const uint32_t fp = load_acquire(&p.control->free_prod);
    while (s.free_cons != fp) s.free_stack[s.nfree++] = p.free_ring[s.free_cons++ & p.ring_mask];
    s.n = avail < kXskBatch ? avail : kXskBatch;
    s.quit = s.n == 0 && load_acquire(&p.control->stop) != 0;
    s.npublish = 0;
  }

  // Every warp: descriptor j, and the headers of a packet's first descriptor into s.hdr[j].
  NDQ_HD void read_descriptors(uint32_t warp, uint32_t warps, uint32_t lane, uint32_t lanes) {
    const auto* descs = static_cast<const xdp_desc*>(p.rx_entries);
    for (uint32_t j = warp; j < s.n; j += warps) {
      const xdp_desc d = descs[(s.rx_cons + j) & p.rx_mask];
      const bool starts = j == 0 ? !s.in_multi : !(descs[(s.rx_cons + j - 1) & p.rx_mask].options & XDP_PKT_CONTD);
      const uint64_t base = d.addr & ~uint64_t{15};
      const uint64_t chunk_end = (d.addr & ~(p.chunk - 1)) + p.chunk;
      if (starts)
        for (uint32_t v = lane; v * 16 < kXskHeaderBytes + 16; v += lanes)
          if (base + v * 16 + 16 <= chunk_end)
            *reinterpret_cast<uint4*>(&s.hdr[j][v * 16]) = *reinterpret_cast<const uint4*>(p.umem + base + v * 16);
      if (lane == 0) {
        s.addr[j] = d.addr;
        s.options[j] = d.options;
        s.len[j] = d.len;
      }
    }
  }

  // Thread 0: descriptors into packets. The step keeps whole packets only (the kernel publishes
  // a packet's descriptors together; one cut by the batch's end is taken next step).
  NDQ_HD void group_packets() {
    uint32_t start = 0, pos = 0;
    bool carried = s.in_multi != 0;
    for (uint32_t j = 0; j < s.n; ++j) {
      if (j > 0 && !(s.options[j - 1] & XDP_PKT_CONTD)) {
        start = j;
        pos = 0;
        carried = false;
      }
      s.first[j] = carried ? kCarried : start;
      s.pos[j] = pos;
      pos += s.len[j];
      if (!carried && !(s.options[j] & XDP_PKT_CONTD)) s.total[start] = pos;
    }
    if (s.n == 0 || !(s.options[s.n - 1] & XDP_PKT_CONTD)) {
      s.in_multi = 0;
      return;
    }
    if (s.first[s.n - 1] != kCarried && s.first[s.n - 1] > 0) {
      s.n = s.first[s.n - 1];  // the cut packet next step
    } else if (s.n == kXskBatch) {  // a packet longer than a step: counted once, its buffers back
      if (!s.in_multi) {
        ++s.c.packets_in;
        ++s.c.malformed;
      }
      for (uint32_t j = 0; j < s.n; ++j) s.first[j] = kCarried;
      s.in_multi = 1;
    } else {
      s.n = 0;  // the rest of the packet is not in the ring yet
    }
  }

  // Every warp: each packet's UDP payload and sequence, from its first descriptor (the headers
  // and the sequence must lie in it).
  NDQ_HD void read_packets(uint32_t warp, uint32_t warps, uint32_t lane) {
    if (lane != 0) return;
    for (uint32_t j = warp; j < s.n; j += warps) {
      if (s.first[j] != j) continue;
      s.kind[j] = kMalformed;
      const uint32_t shift = static_cast<uint32_t>(s.addr[j] & 15);
      const unsigned char* h = &s.hdr[j][shift];
      const uint32_t len = s.len[j];
      const uint32_t have = len < kXskHeaderBytes ? len : kXskHeaderBytes;
      const uint32_t need_seq = p.seq_offset + p.seq_bytes;
      const uint32_t need = p.payload_offset + p.payload_size > need_seq ? p.payload_offset + p.payload_size : need_seq;
      // The headers from the copy (it reads at most 66 bytes of it), the UDP length checked
      // against the whole packet.
      const netdaq::detail::UdpPayload u =
          netdaq::detail::find_udp_payload(reinterpret_cast<const std::byte*>(h), s.total[j]);
      const uint32_t at = u.offset + p.seq_offset;
      if (u.ok && u.size >= need && u.offset <= have && at + p.seq_bytes <= len) {
        s.seq[j] = at + p.seq_bytes <= have ? read_field(h + at, p.seq_bytes, p.seq_big)
                                            : read_field(reinterpret_cast<const unsigned char*>(p.umem + s.addr[j] + at),
                                                         p.seq_bytes, p.seq_big);
        s.samples_at[j] = u.offset + p.payload_offset;
        s.kind[j] = kOk;
      }
    }
  }

  NDQ_HD bool bit(uint32_t buffer, uint32_t slot) const {
    return (p.present[uint64_t{buffer} * p.words + slot / 64] >> (slot % 64)) & 1u;
  }
  NDQ_HD void set_bit(uint32_t buffer, uint32_t slot) {
    p.present[uint64_t{buffer} * p.words + slot / 64] |= uint64_t{1} << (slot % 64);
  }

  // Thread 0: the oldest open frame leaves the table for publishing.
  NDQ_HD void close_oldest() {
    const XskOpenFrame f = s.open[0];
    for (uint32_t k = 1; k < s.nopen; ++k) s.open[k - 1] = s.open[k];
    --s.nopen;
    s.publish_complete[s.npublish] = f.complete;
    s.publish[s.npublish++] = f;
    // Frames between the last one out and this one never opened: dropped (no buffer) or skipped.
    uint64_t dropped = 0;
    uint32_t kept = 0;
    for (uint32_t k = 0; k < s.ndropped; ++k) {
      if (s.dropped[k] < f.index) ++dropped;
      else if (s.dropped[k] > f.index) s.dropped[kept++] = s.dropped[k];
    }
    s.ndropped = kept;
    s.c.frames_dropped += dropped;
    s.c.frames_skipped += f.index - s.next_index - dropped;
    s.next_index = f.index + 1;
    if (f.complete) {
      ++s.c.frames_complete;
    } else {
      ++s.c.frames_incomplete;
      s.c.packets_missing += p.packets_per_frame - f.received;
    }
  }
  // ... and the complete frames behind it, in order.
  NDQ_HD void close_ready() {
    while (s.nopen && s.open[0].complete) close_oldest();
  }

  // Thread 0: the frame table entry for frame fi, opened if need be; -1 for no buffer.
  NDQ_HD int find_or_open(uint64_t fi, uint64_t now) {
    uint32_t k = 0;
    while (k < s.nopen && s.open[k].index < fi) ++k;
    if (k < s.nopen && s.open[k].index == fi) return static_cast<int>(k);
    if (s.nfree == 0) return -1;
    if (s.nopen == p.max_open) {  // a newer frame closes the oldest
      if (k == 0) return -2;      // ... unless this one is older than all of them: late
      close_oldest();
      close_ready();
      k = 0;
      while (k < s.nopen && s.open[k].index < fi) ++k;
    }
    for (uint32_t m = s.nopen; m > k; --m) s.open[m] = s.open[m - 1];
    ++s.nopen;
    s.open[k] = XskOpenFrame{fi, now, s.free_stack[--s.nfree], 0, 0};
    return static_cast<int>(k);
  }

  // Thread 0: frame fi lost a packet for want of a buffer (remembered once).
  NDQ_HD void note_dropped(uint64_t fi) {
    for (uint32_t k = 0; k < s.ndropped; ++k)
      if (s.dropped[k] == fi) return;
    if (s.ndropped < kXskMaxDropped) s.dropped[s.ndropped++] = fi;
    else ++s.c.frames_dropped;  // beyond what is remembered: counted now (it may still open later)
  }

  // Thread 0: every packet's fate, in ring order.
  NDQ_HD void decide(uint64_t now) {
    for (uint32_t j = 0; j < s.n; ++j) {
      s.dst[j] = kNone;
      if (s.first[j] != j) continue;  // a packet's later buffer (or one given back)
      ++s.c.packets_in;
      if (s.kind[j] != kOk) {
        ++s.c.malformed;
        continue;
      }
      uint64_t seq = 0;
      const bool first = !s.have_seq;
      s.have_seq = 1;
      if (!unwrap_sequence(s.seq[j], p.seq_bytes * 8, first, s.newest_seq, &seq)) {  // before the first packet
        ++s.c.late;
        continue;
      }
      const uint64_t fi = seq / p.packets_per_frame;
      const auto slot = static_cast<uint32_t>(seq % p.packets_per_frame);
      if (fi < s.next_index) {
        ++s.c.late;
        continue;
      }
      const int k = find_or_open(fi, now);
      if (k == -2) {
        ++s.c.late;
        continue;
      }
      if (k < 0) {
        ++s.c.no_buffer;
        note_dropped(fi);
        continue;
      }
      XskOpenFrame& f = s.open[k];
      if (bit(f.buffer, slot)) {
        ++s.c.duplicate;
        continue;
      }
      set_bit(f.buffer, slot);
      ++s.c.packets_placed;
      if (++f.received == p.packets_per_frame) f.complete = 1;
      s.dst[j] = uint64_t{f.buffer} * p.frame_bytes + uint64_t{slot} * p.payload_size;
    }
  }

  // Thread 0, after decide: frames that closed by age or because the driver stops.
  NDQ_HD void close_due(uint64_t now) {
    close_ready();
    while (s.nopen && (s.quit || (p.timeout_ns && now - s.open[0].first_ns > p.timeout_ns))) {
      close_oldest();
      close_ready();
    }
    if (s.quit) {  // no frame comes after these
      s.c.frames_dropped += s.ndropped;
      s.ndropped = 0;
    }
  }

  // Every warp: each buffer's share of its packet's samples into the frame, buffers into the
  // fill ring.
  NDQ_HD void copy(uint32_t warp, uint32_t warps, uint32_t lane, uint32_t lanes) {
    for (uint32_t j = warp; j < s.n; j += warps) {
      const uint32_t f = s.first[j];
      if (f != kCarried && s.dst[f] != kNone) {
        const uint32_t from = s.samples_at[f], to = from + p.payload_size;
        const uint32_t lo = s.pos[j] > from ? s.pos[j] : from;
        const uint32_t end = s.pos[j] + s.len[j];
        const uint32_t hi = end < to ? end : to;
        if (lo < hi)
          // From the UMEM in host memory: kUnroll loads in flight per lane, not one round trip each.
          copy_samples<1, kUnroll>(p.umem + s.addr[j] + (lo - s.pos[j]), p.frames + s.dst[f] + (lo - from), hi - lo, lane,
                                   lanes);
      }
      if (lane == 0) p.fill_entries[(s.fill_prod + j) & p.fill_mask] = s.addr[j] & ~(p.chunk - 1);
    }
  }

  // Every thread: closing frames get zeros where packets are missing and their missing bitmap;
  // their present bitmap is cleared for the buffer's next frame.
  NDQ_HD void finish_frames(uint32_t tid, uint32_t nt, uint32_t warp, uint32_t warps, uint32_t lane, uint32_t lanes) {
    for (uint32_t q = 0; q < s.npublish; ++q) {
      const uint32_t b = s.publish[q].buffer;
      uint64_t* present = p.present + uint64_t{b} * p.words;
      if (!s.publish_complete[q])
        for (uint32_t slot = warp; slot < p.packets_per_frame; slot += warps)
          if (!((present[slot / 64] >> (slot % 64)) & 1u))
            zero_fill(p.frames + uint64_t{b} * p.frame_bytes + uint64_t{slot} * p.payload_size, p.payload_size, lane, lanes);
      x.sync();
      for (uint32_t w = tid; w < p.words; w += nt) {
        const uint32_t used = p.packets_per_frame - w * 64;
        const uint64_t mask = used >= 64 ? ~uint64_t{0} : (uint64_t{1} << used) - 1;
        p.missing_out[uint64_t{b} * p.words + w] = ~present[w] & mask;
        present[w] = 0;
      }
    }
  }

  // Thread 0, after every thread's system fence: the ring indices and the frames out.
  NDQ_HD void end_step() {
    if (s.n) {
      s.rx_cons += s.n;
      s.fill_prod += s.n;
      store_release(p.rx_consumer, s.rx_cons);      // the kernel may reuse those RX slots
      store_release(p.fill_producer, s.fill_prod);  // and has the buffers back
      ++s.c.batches;
    }
    for (uint32_t q = 0; q < s.npublish; ++q)
      p.done[s.done_prod++ & p.ring_mask] = XskDoneEntry{s.publish[q].index, s.publish[q].buffer, s.publish[q].received};
    if (s.npublish) {
      x.fence_system();
      store_release(&p.control->done_prod, s.done_prod);
    }
    if (s.n || s.npublish) publish_counters();
  }

  NDQ_HD void publish_counters() { publish_xsk_counters(s.c, p.control->counters); }

  // The whole loop, until stopped and drained. Every thread of the block (one on the CPU).
  NDQ_HD void run() {
    const uint32_t tid = x.tid(), nt = x.threads(), warp = x.warp(), warps = x.warps(), lane = x.lane(),
                   lanes = x.lanes();
    init();
    x.sync();
    for (;;) {
      if (tid == 0) begin_step();
      x.sync();
      if (s.n) {
        read_descriptors(warp, warps, lane, lanes);
        x.sync();
        if (tid == 0) group_packets();
        x.sync();
        read_packets(warp, warps, lane);
        x.sync();
      }
      if (tid == 0) {
        const uint64_t now = x.now_ns();
        if (s.n) decide(now);
        close_due(now);
      }
      x.sync();
      copy(warp, warps, lane, lanes);
      finish_frames(tid, nt, warp, warps, lane, lanes);
      x.fence_system();
      x.sync();
      if (tid == 0) end_step();
      const bool quit = s.quit;
      x.sync();  // nobody reads this step's state after thread 0 starts the next
      if (quit) break;
      if (tid == 0 && s.n == 0) x.idle();
    }
    if (tid == 0) announce_xsk_exit(x, s.c, p.control->counters, &p.control->exited);
  }
};

}  // namespace netdaq::gpu::detail
