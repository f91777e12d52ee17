#include "frames/host_frames.h"

#include <algorithm>
#include <cstring>

#include "frames/prefetch_packet.h"
#include "gpu/host/packet_fields.h"

namespace netdaq::frames {

HostFrames::HostFrames(const ReorderConfig& cfg)
    : decoder_(protocols::make_decoder(cfg)), tracker_(gpu::span_tracker_config(cfg)), frame_bytes_(protocols::frame_bytes_of(cfg)) {
  mem_.assign(frame_bytes_ * cfg.frame_buffers, std::byte{0});
  copies_.resize(kPendingCopies);
  batch_copies_ = !decoder_->reads_whole_packet();
}

void HostFrames::place(const Packet& p, uint64_t now_ns) noexcept {
  ++counters_.packets;
  const auto first = p.segment(0);
  protocols::Decoded& d = decoded_;
  gpu::decode_for_spans(*decoder_, p, UINT32_MAX, d);  // (memcpy: a span of any size)
  const bool split = p.segments() > 1;
  if (d.verdict == protocols::Verdict::control) {
    ++counters_.control;
    return;
  }
  if (d.verdict != protocols::Verdict::data) {
    ++counters_.malformed;
    last_reason_ = d.reason;
    return;
  }
  const uint64_t stream = d.has_stream ? d.stream : p.flow();
  gpu::SpanOutcome outcome;
  const uint32_t n = tracker_.place_packet(d, stream, now_ns, placed_, &outcome);
  if (outcome == gpu::SpanOutcome::malformed) last_reason_ = tracker_.last_malformed();
  for (uint32_t i = 0; i < n; ++i) {
    const gpu::PlacedSpan& s = placed_[i];
    std::byte* dst = &mem_[size_t{s.buffer} * frame_bytes_ + s.offset];
    if (!split)
      copy(dst, first.data() + s.packet_offset, s.bytes);
    else
      gpu::for_each_piece(p, s.packet_offset, s.bytes, [&](const std::byte* src, uint32_t len, uint32_t at) { copy(dst + at, src, len); });
  }
}

void HostFrames::copy(std::byte* dst, const std::byte* src, uint32_t bytes) noexcept {
  if (batch_copies_)
    copies_[ncopies_++] = {dst, src, bytes};
  else
    std::memcpy(dst, src, bytes);
}

// In placement order: a later packet's bytes land after an earlier one's wherever both do.
void HostFrames::copy_pending() noexcept {
  for (size_t i = 0; i < ncopies_; ++i) std::memcpy(copies_[i].dst, copies_[i].src, copies_[i].bytes);
  ncopies_ = 0;
}

void HostFrames::receive(const RxBurst& burst, uint64_t now_ns) noexcept {
  const size_t n = burst.size();
  for (size_t i = 0; i < n && i < kPrefetchAhead; ++i) prefetch_packet(burst[i]);
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchAhead < n) prefetch_packet(burst[i + kPrefetchAhead]);
    if (ncopies_ + kCopiesPerPacket > copies_.size()) copy_pending();
    place(burst[i], now_ns);
  }
  copy_pending();  // before anything can pop a frame or reuse its buffer
  tracker_.expire(now_ns);
}

void HostFrames::flush() noexcept { tracker_.close_all(); }

// Zeros where granules never arrived (the buffer holds an earlier frame's bytes there).
void HostFrames::zero_fill(uint32_t buffer) noexcept {
  const gpu::FrameMeta& m = tracker_.meta(buffer);
  const uint64_t* present = tracker_.presence(buffer);
  const uint64_t g = tracker_.granule(), units = (m.size + g - 1) / g;
  std::byte* base = &mem_[size_t{buffer} * frame_bytes_];
  for (uint64_t u = 0; u < units;) {
    if (present[u / 64] >> (u % 64) & 1) {
      ++u;
      continue;
    }
    uint64_t end = u + 1;
    while (end < units && !(present[end / 64] >> (end % 64) & 1)) ++end;
    const uint64_t from = u * g, to = std::min(end * g, m.size);
    std::memset(base + from, 0, to - from);
    u = end;
  }
}

bool HostFrames::pop(HostFrame& out) noexcept {
  gpu::SpanClosedFrame f;
  if (!tracker_.pop_closed(&f)) return false;
  if (!f.complete) zero_fill(f.buffer);
  const gpu::FrameMeta& m = tracker_.meta(f.buffer);
  out.data = &mem_[size_t{f.buffer} * frame_bytes_];
  out.size = m.size;
  out.meta = m;
  out.presence = tracker_.presence(f.buffer);
  out.granule = tracker_.granule();
  out.complete = f.complete;
  out.buffer = f.buffer;
  ++counters_.frames_out;
  return true;
}

void HostFrames::release(const HostFrame& f) noexcept { tracker_.release_buffer(f.buffer); }

}  // namespace netdaq::frames
