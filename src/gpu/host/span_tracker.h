// Frame bookkeeping of the placement model (protocols/decoder.h), on the CPU (no CUDA): per
// stream, a window of open frames; per frame, which granules (bytes per presence bit) arrived.
// Decides for each span of a packet whether it is placed (and where: frame buffer, byte
// offset), a duplicate, late, outside its frame, or without a buffer; closes frames when
// every byte is present, on a marker, when newer frames push them out of the window, or after
// a timeout. Frames of one stream leave in frame order. Spans start on a granule and end on
// one or at the frame's end, so each granule's presence is exact (docs/gpu.md).
// The existing modes are this model's special case of one span per packet at granule =
// payload_size; they keep FrameTracker, whose fast path reads no decoder
// (tests/unit/span_tracker_test.cpp checks both give the same frames).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "netdaq/gpu.h"
#include "protocols/decoder.h"

namespace netdaq::gpu {

struct SpanTrackerConfig {
  uint64_t frame_bytes = 0;      // the largest frame (a buffer), input bytes
  uint32_t granule = 1;          // bytes per presence bit
  uint32_t max_open_frames = 4;  // per stream
  uint32_t frame_buffers = 8;    // shared by every stream; >= max_open_frames x max_streams
  uint32_t max_streams = 1;
  uint64_t timeout_ns = 10'000'000;
  // A frame whose every byte came stays open until its marker (or timeout, or newer frames):
  // the marker brings metadata after the bytes (RoCE: HSB's end-of-window record).
  bool wait_for_marker = false;
};

// The tracker of a span-mode reorder config (frame_bytes, granule, window, streams, timeout).
SpanTrackerConfig span_tracker_config(const ReorderConfig& cfg);

// A packet decoded for placement, as every frame assembler does it (GPU pipeline, host
// frames): decode_packet with its headers and both segments; data without spans counts as
// control. A span across two segments is placed in two pieces: each must be at most max_span
// and the second must start at a multiple of piece_align bytes into the span (whole input
// samples for a conversion); else the packet is malformed. Never allocates or throws.
void decode_for_spans(protocols::Decoder& decoder, const Packet& p, uint32_t max_span, protocols::Decoded& d,
                      uint32_t piece_align = 1) noexcept;

// Why a packet was not placed, or placed. A packet counts once: placed when any span was.
enum class SpanOutcome : uint8_t { placed, duplicate, late, no_buffer, malformed, no_stream };

// One span to copy: bytes [packet_offset, +bytes) of the packet to byte `offset` of a buffer.
struct PlacedSpan {
  uint32_t buffer = 0;
  uint64_t offset = 0;
  uint32_t packet_offset = 0;
  uint32_t bytes = 0;
};

struct SpanClosedFrame {
  uint32_t buffer = 0;
  uint32_t stream_index = 0;
  bool complete = false;
};

// What the application gets with a frame (Frame's metadata; docs/gpu.md).
struct FrameMeta {
  uint64_t stream = 0;
  uint64_t frame = 0;          // the frame number (unwrapped)
  uint64_t size = 0;           // input bytes of the frame (from a header, a marker, or frame_bytes)
  uint64_t bytes_present = 0;  // input bytes that arrived
  bool has_timestamp = false;
  uint64_t timestamp = 0, timestamp_frac = 0;  // of the packet holding the lowest offset seen
  uint64_t timestamp_offset = UINT64_MAX;
  uint32_t nitems = 0;
  FrameItem items[protocols::kMaxItems];
};

struct SpanStats {
  uint64_t packets = 0;  // packets of this stream (every outcome but no_stream)
  uint64_t placed = 0, duplicate = 0, late = 0, no_buffer = 0, malformed = 0, no_stream = 0;
  uint64_t frames_complete = 0, frames_incomplete = 0, frames_skipped = 0, frames_dropped = 0;
  uint64_t bytes_missing = 0;  // bytes of incomplete frames that never arrived (zero-filled)
};

struct StreamState {
  uint64_t key = 0;
  SpanStats stats;
};

StreamStats to_stream_stats(const StreamState& s) noexcept;

class SpanTracker {
 public:
  static constexpr uint32_t kNoBuffer = UINT32_MAX;
  static constexpr uint64_t kLastFrame = UINT64_MAX - 2;  // frame numbers above (less 2 x the window) are malformed

  explicit SpanTracker(const SpanTrackerConfig& cfg);  // throws Error on an impossible config

  // The packet's spans (d.verdict == data) of stream `stream_key`: writes the spans to copy to
  // out (up to kMaxSpans) and returns how many; *outcome says how the packet counts. Never
  // allocates or throws.
  uint32_t place(const protocols::Decoded& d, uint64_t stream_key, uint64_t now_ns, PlacedSpan* out,
                 SpanOutcome* outcome) noexcept;
  // place() for the common case, inline: one span, of the stream and frame of the packet
  // before, on granules not yet present, not completing the frame, no marker, items or
  // earlier timestamp. False (nothing changed): call place(). A granule that is no power of
  // two (10-bit 4:2:2 video: 5 bytes) costs two divisions.
  bool place_hot(const protocols::Decoded& d, uint64_t stream_key, PlacedSpan* out) noexcept {
    Open* o = hot_;
    if (!o || d.nspans != 1 || d.marker || d.nitems) return false;
    const protocols::Span& sp = d.spans[0];
    if (sp.frame != hot_raw_ || streams_[hot_stream_].key != stream_key || !o->active || o->ended ||
        o->frame != hot_frame_)
      return false;
    FrameMeta& m = meta_[o->buffer];
    const uint64_t size = m.size ? m.size : cfg_.frame_bytes;
    if (sp.offset > size || sp.bytes > size - sp.offset) return false;  // (no sum that could wrap)
    const uint64_t end = sp.offset + sp.bytes;
    if ((d.frame_bytes && d.frame_bytes != m.size) || (d.has_timestamp && sp.offset < m.timestamp_offset) ||
        sp.bytes == 0)
      return false;
    uint64_t first, last;
    if (shift_ >= 0) {
      if ((sp.offset | end) & granule_mask_) return false;
      first = sp.offset >> shift_, last = end >> shift_;
    } else {
      first = sp.offset / cfg_.granule, last = end / cfg_.granule;
      if (first * cfg_.granule != sp.offset || last * cfg_.granule != end) return false;
    }
    if (o->granules + (last - first) >= granules_of(size)) return false;  // completes it (place() decides)
    uint64_t* bits = &bits_[size_t{o->buffer} * words_];
    if (!set_if_clear(bits, first, last)) return false;  // a duplicate: place() counts it
    o->granules += last - first;
    if (end > o->max_end) o->max_end = end;
    m.bytes_present += sp.bytes;
    SpanStats& st = streams_[hot_stream_].stats;
    ++st.packets, ++st.placed, ++stats_.placed;
    *out = PlacedSpan{o->buffer, sp.offset, sp.packet_offset, sp.bytes};
    return true;
  }
  // place_hot(), else place(): the spans to copy and how the packet counts.
  uint32_t place_packet(const protocols::Decoded& d, uint64_t stream_key, uint64_t now_ns, PlacedSpan* out,
                        SpanOutcome* outcome) noexcept {
    if (place_hot(d, stream_key, out)) {
      *outcome = SpanOutcome::placed;
      return 1;
    }
    return place(d, stream_key, now_ns, out, outcome);
  }
  void expire(uint64_t now_ns) noexcept;  // closes frames older than the timeout
  void close_all() noexcept;              // end of stream
  bool pop_closed(SpanClosedFrame* out) noexcept;
  bool has_closed() const noexcept { return closed_count_ != 0; }
  void release_buffer(uint32_t buffer) noexcept;

  const FrameMeta& meta(uint32_t buffer) const noexcept { return meta_[buffer]; }
  // Presence bits of a buffer's frame (bit g set: granule g arrived); words_per_frame() words.
  const uint64_t* presence(uint32_t buffer) const noexcept { return &bits_[size_t{buffer} * words_]; }
  uint32_t words_per_frame() const noexcept { return words_; }
  uint32_t granule() const noexcept { return cfg_.granule; }
  const SpanStats& stats() const noexcept { return stats_; }
  // Why the last span counted malformed here was (a static string; "" before any).
  const char* last_malformed() const noexcept { return last_malformed_; }
  const std::vector<StreamState>& streams() const noexcept { return streams_; }
  uint32_t free_buffers() const noexcept { return static_cast<uint32_t>(free_.size()); }

 private:
  struct Open {
    bool active = false;
    bool ended = false;       // all bytes present, or its marker seen: closes once at the base
    uint64_t frame = 0;
    uint32_t buffer = kNoBuffer;
    uint64_t granules = 0;    // present
    uint64_t max_end = 0;     // end of the furthest span placed (a size learnt later is not below it)
    uint64_t opened_ns = 0;
  };
  struct Window {
    bool started = false;
    uint64_t base = 0;        // oldest frame still open
    uint64_t first_frame = 0; // lowest frame that got a packet
    uint64_t newest = 0;      // newest unwrapped frame (narrow counters)
  };
  uint32_t stream_index(uint64_t key) noexcept;  // kNoBuffer: table full
  bool unwrap(Window& w, uint64_t raw, uint8_t bits, uint64_t* frame) noexcept;
  Open& open_of(uint32_t s, uint64_t frame) noexcept {
    return open_[size_t{s} * cfg_.max_open_frames + frame % cfg_.max_open_frames];
  }
  Open* frame_of(uint32_t s, uint64_t frame, uint64_t now_ns, SpanOutcome* why) noexcept;
  void open_frame(uint32_t s, Open& o, uint64_t frame, uint64_t now_ns) noexcept;
  void advance_to(uint32_t s, uint64_t new_base) noexcept;
  void close(uint32_t s, Open& o) noexcept;
  void close_ready(uint32_t s) noexcept;
  static void keep_items(FrameMeta& m, const protocols::Decoded& d) noexcept;
  SpanOutcome mark(Open& o, const protocols::Span& sp, uint64_t size) noexcept;
  uint64_t granules_of(uint64_t bytes) const noexcept {
    return shift_ >= 0 ? (bytes + granule_mask_) >> shift_ : (bytes + cfg_.granule - 1) / cfg_.granule;
  }
  static uint64_t word_mask(uint64_t lo, uint64_t hi) noexcept {  // bits lo..hi-1 of a word, 0 <= lo < hi <= 64
    return (hi == 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1) & ~((uint64_t{1} << lo) - 1);
  }
  // Sets bits [first, last) in one pass when none is set; else leaves them as they were and
  // returns false (a duplicate: rare, so undoing the words already set costs nothing).
  static bool set_if_clear(uint64_t* bits, uint64_t first, uint64_t last) noexcept {
    const uint64_t fw = first / 64, lw = (last - 1) / 64;
    for (uint64_t w = fw; w <= lw; ++w) {
      const uint64_t m = word_mask(w == fw ? first % 64 : 0, w == lw ? (last - 1) % 64 + 1 : 64);
      if (bits[w] & m) {
        for (uint64_t u = fw; u < w; ++u) bits[u] &= ~word_mask(u == fw ? first % 64 : 0, 64);
        return false;
      }
      bits[w] |= m;
    }
    return true;
  }

  SpanTrackerConfig cfg_;
  uint32_t words_;
  std::vector<uint64_t> bits_;      // frame_buffers x words_
  std::vector<FrameMeta> meta_;     // frame_buffers
  std::vector<Open> open_;          // max_streams x max_open_frames
  std::vector<Window> windows_;     // max_streams
  std::vector<StreamState> streams_;  // the streams seen, in order of their first packet
  std::vector<uint32_t> table_;     // open addressing: stream key -> index + 1 (0: empty)
  uint32_t last_index_ = kNoBuffer; // the stream of the packet before
  int shift_ = -1;                  // log2(granule) when it is a power of two, else -1
  uint64_t granule_mask_ = 0;       // granule - 1 (power of two)
  // The frame of the last span placed: the next packet's most likely (place_hot()).
  Open* hot_ = nullptr;
  uint32_t hot_stream_ = 0;
  uint64_t hot_raw_ = 0;            // its frame number as the decoder gives it (before unwrapping)
  uint64_t hot_frame_ = 0;
  std::vector<uint32_t> free_;
  std::vector<SpanClosedFrame> closed_;
  size_t closed_head_ = 0, closed_count_ = 0;
  SpanStats stats_;
  const char* last_malformed_ = "";
};

}  // namespace netdaq::gpu
