#include "gpu/host/frame_tracker.h"

#include <algorithm>
#include <string>

#include "gpu/host/sequence_unwrap.h"
#include "netdaq/status.h"

namespace netdaq::gpu {

FrameTracker::FrameTracker(const TrackerConfig& cfg) : cfg_(cfg) {
  const auto bad = [](const std::string& what) { throw Error(Errc::invalid_config, "frame tracker: " + what); };
  if (cfg.packets_per_frame == 0) bad("packets_per_frame must be at least 1");
  if (cfg.max_open_frames == 0) bad("max_open_frames must be at least 1");
  if (cfg.frame_buffers < cfg.max_open_frames) bad("frame_buffers must be at least max_open_frames");
  if (cfg.seq_bits != 8 && cfg.seq_bits != 16 && cfg.seq_bits != 32 && cfg.seq_bits != 64)
    bad("seq_bits must be 8, 16, 32 or 64");
  if (uint64_t{cfg.frame_buffers} * cfg.packets_per_frame >= UINT32_MAX)
    bad("frame_buffers x packets_per_frame must stay below 2^32 slots");
  hot_wide_ = cfg.seq_bits == 64 && !cfg.arrival_order;
  words_ = (cfg.packets_per_frame + 63) / 64;
  bits_.assign(size_t{cfg.frame_buffers} * words_, 0);
  open_.resize(cfg.max_open_frames);
  free_.reserve(cfg.frame_buffers);
  for (uint32_t b = cfg.frame_buffers; b-- > 0;) free_.push_back(b);  // buffer 0 first
  closed_.resize(cfg.frame_buffers);
  hot_ = &open_[0];
}

bool FrameTracker::unwrap(uint64_t raw, uint64_t* seq) noexcept {
  return unwrap_sequence(raw, cfg_.seq_bits, !started_, last_seq_, seq);
}

Placement FrameTracker::place(uint64_t raw_seq, uint64_t now_ns, uint32_t* ring_slot) noexcept {
  const uint32_t ppf = cfg_.packets_per_frame;
  uint64_t seq;
  if (cfg_.arrival_order) {
    if (arrivals_ / ppf < base_) arrivals_ = base_ * ppf;  // the frame being filled was closed
    seq = arrivals_++;
  } else if (!unwrap(raw_seq, &seq)) {
    ++stats_.late;
    return Placement::late;
  }
  Open* o;
  uint32_t slot;
  if (seq - hot_start_ < ppf && hot_->active && hot_->index == hot_frame_) {
    // Same frame as the packet before (the common case): no division, no window work.
    o = hot_;
    slot = static_cast<uint32_t>(seq - hot_start_);
  } else {
    const uint64_t frame = seq / ppf;
    slot = static_cast<uint32_t>(seq % ppf);
    if (!started_) {
      // The window reaches back from the first frame seen, so a stream that starts out of
      // order (reversed, say) loses nothing; frames before any packet are not "skipped".
      started_ = true;
      base_ = frame >= cfg_.max_open_frames - 1 ? frame - (cfg_.max_open_frames - 1) : 0;
      first_frame_ = frame;
    }
    if (frame < first_frame_) first_frame_ = frame;
    if (frame < base_) {
      ++stats_.late;
      return Placement::late;
    }
    if (frame >= base_ + cfg_.max_open_frames) advance_to(frame - cfg_.max_open_frames + 1);
    o = &slot_of(frame);
    if (!o->active) open_frame(*o, frame, now_ns);
    hot_ = o;
    hot_frame_ = frame;
    hot_start_ = frame * ppf;
  }
  if (o->buffer == kNoBuffer) {
    ++stats_.no_buffer;
    return Placement::no_buffer;
  }
  uint64_t& word = bits_[size_t{o->buffer} * words_ + slot / 64];
  const uint64_t bit = uint64_t{1} << (slot % 64);
  if (word & bit) {
    ++stats_.duplicate;
    return Placement::duplicate;
  }
  word |= bit;
  ++o->received;
  ++stats_.placed;
  *ring_slot = o->buffer * ppf + slot;
  if (o->received == ppf && o->index == base_) close_ready();
  return Placement::placed;
}

void FrameTracker::open_frame(Open& o, uint64_t frame, uint64_t now_ns) noexcept {
  o.active = true;
  o.index = frame;
  o.received = 0;
  o.opened_ns = now_ns;
  o.buffer = kNoBuffer;
  if (!free_.empty()) {
    o.buffer = free_.back();
    free_.pop_back();
    std::fill_n(&bits_[size_t{o.buffer} * words_], words_, 0);
  }
}

void FrameTracker::close(Open& o) noexcept {
  o.active = false;
  if (o.buffer == kNoBuffer) {
    ++stats_.frames_dropped;
    return;
  }
  const bool complete = o.received == cfg_.packets_per_frame;
  if (complete) {
    ++stats_.frames_complete;
  } else {
    ++stats_.frames_incomplete;
    stats_.packets_missing += cfg_.packets_per_frame - o.received;
  }
  // Every closed frame holds a buffer, so the FIFO (frame_buffers long) never overflows.
  closed_[(closed_head_ + closed_count_) % closed_.size()] = ClosedFrame{o.index, o.buffer, o.received, complete};
  ++closed_count_;
}

void FrameTracker::advance_to(uint64_t new_base) noexcept {
  const uint64_t window_end = base_ + cfg_.max_open_frames;
  for (uint64_t f = base_; f < new_base && f < window_end; ++f) {
    Open& o = slot_of(f);
    if (o.active && o.index == f)
      close(o);
    else if (f > first_frame_)
      ++stats_.frames_skipped;
  }
  if (new_base > window_end) stats_.frames_skipped += new_base - std::max(window_end, first_frame_ + 1);
  base_ = new_base;
  close_ready();
}

void FrameTracker::close_ready() noexcept {
  for (;;) {
    Open& o = slot_of(base_);
    if (!(o.active && o.index == base_ && o.buffer != kNoBuffer && o.received == cfg_.packets_per_frame)) return;
    close(o);
    ++base_;
  }
}

void FrameTracker::expire(uint64_t now_ns) noexcept {
  while (started_) {
    // The oldest open frame decides: newer frames were opened later.
    uint64_t f = base_;
    const uint64_t end = base_ + cfg_.max_open_frames;
    while (f < end && !(slot_of(f).active && slot_of(f).index == f)) ++f;
    if (f == end) return;
    Open& o = slot_of(f);
    if (now_ns - o.opened_ns < cfg_.timeout_ns) return;
    advance_to(f + 1);
  }
}

void FrameTracker::close_all() noexcept {
  if (!started_) return;
  uint64_t next = base_;
  for (uint64_t f = base_; f < base_ + cfg_.max_open_frames; ++f) {
    Open& o = slot_of(f);
    if (o.active && o.index == f) {
      close(o);
      next = f + 1;
    }
  }
  base_ = next;
}

bool FrameTracker::pop_closed(ClosedFrame* out) noexcept {
  if (closed_count_ == 0) return false;
  *out = closed_[closed_head_];
  closed_head_ = (closed_head_ + 1) % closed_.size();
  --closed_count_;
  return true;
}

void FrameTracker::release_buffer(uint32_t buffer) noexcept {
  if (buffer < cfg_.frame_buffers && free_.size() < cfg_.frame_buffers) free_.push_back(buffer);
}

uint32_t FrameTracker::open_frames() const noexcept {
  uint32_t n = 0;
  for (const auto& o : open_) n += o.active;
  return n;
}

}  // namespace netdaq::gpu
