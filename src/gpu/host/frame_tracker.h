// Frame bookkeeping of the GPU data plane, on the CPU (no CUDA): decides for each packet
// which frame buffer slot it fills, detects duplicates and late packets, closes frames when
// complete, when newer frames push them out of the window, or after a timeout, and keeps a
// presence bitmap per frame. The GPU only moves bytes where this says (gpu/place_job.h).
//
// Frames: frame = sequence / packets_per_frame, slot = sequence % packets_per_frame
// (mode sequence), or consecutive arrivals (mode arrival). Up to max_open_frames consecutive
// frames [base, base + max_open_frames) are open; frames leave in frame order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace netdaq::gpu {

struct TrackerConfig {
  uint32_t packets_per_frame = 1;
  uint32_t max_open_frames = 4;
  uint32_t frame_buffers = 8;   // >= max_open_frames; the rest are frames held by the app
  uint8_t seq_bits = 64;        // narrower counters wrap; they are unwrapped here
  bool arrival_order = false;
  uint64_t timeout_ns = 10'000'000;
};

enum class Placement : uint8_t { placed, duplicate, late, no_buffer };

struct ClosedFrame {
  uint64_t index = 0;
  uint32_t buffer = 0;
  uint32_t received = 0;
  bool complete = false;
};

struct TrackerStats {
  uint64_t placed = 0, duplicate = 0, late = 0, no_buffer = 0;
  uint64_t frames_complete = 0, frames_incomplete = 0, frames_skipped = 0, frames_dropped = 0;
  uint64_t packets_missing = 0;
};

class FrameTracker {
 public:
  static constexpr uint32_t kNoBuffer = UINT32_MAX;

  explicit FrameTracker(const TrackerConfig& cfg);  // throws Error on an impossible config

  // Where the packet goes: on placed, *ring_slot = buffer * packets_per_frame + slot.
  // O(1) unless it closes frames; never allocates or throws.
  Placement place(uint64_t raw_seq, uint64_t now_ns, uint32_t* ring_slot) noexcept;
  // place() for the common case, inline: a 64-bit sequence in the frame of the packet before,
  // its slot free, and not the packet that completes the frame. False (nothing changed):
  // call place(). The bookkeeping is place()'s, minus its checks for other frames.
  bool place_hot(uint64_t seq, uint32_t* ring_slot) noexcept {
    const uint64_t slot = seq - hot_start_;
    Open* o = hot_;
    if (!hot_wide_ || slot >= cfg_.packets_per_frame || !o) return false;
    if (!o->active || o->index != hot_frame_ || o->buffer == kNoBuffer || o->received + 1 >= cfg_.packets_per_frame)
      return false;
    uint64_t& word = bits_[size_t{o->buffer} * words_ + slot / 64];
    const uint64_t bit = uint64_t{1} << (slot % 64);
    if (word & bit) return false;
    word |= bit;
    ++o->received;
    ++stats_.placed;
    *ring_slot = o->buffer * cfg_.packets_per_frame + static_cast<uint32_t>(slot);
    return true;
  }
  // Closes open frames whose first packet is older than the timeout (oldest first).
  void expire(uint64_t now_ns) noexcept;
  // Closes every open frame (end of stream).
  void close_all() noexcept;

  // The next closed frame that has a buffer, in frame order. Its buffer stays taken until
  // release_buffer(). Returns false when none is waiting.
  bool pop_closed(ClosedFrame* out) noexcept;
  bool has_closed() const noexcept { return closed_count_ != 0; }
  // Presence bits of a buffer's frame (bit i set: packet i arrived); words_per_frame() words.
  const uint64_t* presence(uint32_t buffer) const noexcept { return &bits_[size_t{buffer} * words_]; }
  uint32_t words_per_frame() const noexcept { return words_; }
  void release_buffer(uint32_t buffer) noexcept;

  const TrackerStats& stats() const noexcept { return stats_; }
  uint32_t free_buffers() const noexcept { return static_cast<uint32_t>(free_.size()); }
  uint32_t open_frames() const noexcept;

 private:
  struct Open {
    bool active = false;
    uint64_t index = 0;
    uint32_t buffer = kNoBuffer;
    uint32_t received = 0;
    uint64_t opened_ns = 0;
  };
  bool unwrap(uint64_t raw, uint64_t* seq) noexcept;
  Open& slot_of(uint64_t frame) noexcept { return open_[frame % cfg_.max_open_frames]; }
  void open_frame(Open& o, uint64_t frame, uint64_t now_ns) noexcept;
  void advance_to(uint64_t new_base) noexcept;  // closes frames below new_base
  void close(Open& o) noexcept;
  void close_ready() noexcept;  // closes complete frames at the base

  TrackerConfig cfg_;
  uint32_t words_;
  std::vector<uint64_t> bits_;      // frame_buffers * words_
  std::vector<Open> open_;          // max_open_frames
  std::vector<uint32_t> free_;      // free buffer indices (stack; capacity reserved)
  std::vector<ClosedFrame> closed_; // FIFO ring of closed frames, capacity frame_buffers
  size_t closed_head_ = 0, closed_count_ = 0;
  bool started_ = false;
  uint64_t base_ = 0;               // oldest frame still open
  uint64_t first_frame_ = 0;        // lowest frame that got a packet
  int64_t last_seq_ = 0;            // last unwrapped sequence (narrow counters)
  uint64_t arrivals_ = 0;           // mode arrival: packets placed so far (virtual sequence)
  // The frame of the last packet: the next one is most likely in it (fast path).
  Open* hot_ = nullptr;
  uint64_t hot_frame_ = 0;
  uint64_t hot_start_ = UINT64_MAX;  // hot_frame_ * packets_per_frame
  bool hot_wide_ = false;            // place_hot() applies: 64-bit sequences, mode sequence
  TrackerStats stats_;
};

}  // namespace netdaq::gpu
