#include "gpu/host/span_tracker.h"

#include <algorithm>
#include <bit>
#include <string>

#include "gpu/host/packet_fields.h"
#include "netdaq/status.h"

namespace netdaq::gpu {

using protocols::Decoded;
using protocols::Span;

StreamStats to_stream_stats(const StreamState& s) noexcept {
  StreamStats o;
  o.stream = s.key;
  o.packets = s.stats.packets;
  o.packets_placed = s.stats.placed;
  o.duplicate = s.stats.duplicate;
  o.late = s.stats.late;
  o.no_buffer = s.stats.no_buffer;
  o.malformed = s.stats.malformed;
  o.frames_complete = s.stats.frames_complete;
  o.frames_incomplete = s.stats.frames_incomplete;
  o.frames_skipped = s.stats.frames_skipped;
  o.frames_dropped = s.stats.frames_dropped;
  o.bytes_missing = s.stats.bytes_missing;
  return o;
}

void decode_for_spans(protocols::Decoder& decoder, const Packet& p, uint32_t max_span, protocols::Decoded& d,
                      uint32_t piece_align) noexcept {
  decoder.decode_packet({p.frame_head(), p.segment(0), p.segment(1), p.size()}, d);
  if (d.verdict == protocols::Verdict::data && d.nspans == 0) d.verdict = protocols::Verdict::control;
  const bool split = p.segments() > 1;
  for (unsigned i = 0; d.verdict == protocols::Verdict::data && i < d.nspans; ++i) {
    const protocols::Span& sp = d.spans[i];
    if (!split) {
      if (sp.bytes > max_span) d.malformed("a span larger than the largest packet");
      continue;
    }
    bool too_big = false, misaligned = false;
    const bool inside = for_each_piece(p, sp.packet_offset, sp.bytes, [&](const std::byte*, uint32_t n, uint32_t at) {
      too_big |= n > max_span;
      misaligned |= at % piece_align != 0;
    });
    if (!inside) d.malformed("a span beyond the packet");
    else if (too_big) d.malformed("a span larger than the largest packet");
    else if (misaligned) d.malformed("a span split between two buffers inside an input sample");
  }
}

SpanTrackerConfig span_tracker_config(const ReorderConfig& cfg) {
  SpanTrackerConfig t;
  t.frame_bytes = protocols::frame_bytes_of(cfg);
  t.granule = protocols::granule_of(cfg);
  t.max_open_frames = cfg.max_open_frames;
  t.frame_buffers = cfg.frame_buffers;
  t.max_streams = cfg.max_streams;
  t.timeout_ns = protocols::frame_timeout_ns_of(cfg);
  t.wait_for_marker = cfg.mode == ReorderMode::roce && cfg.roce.metadata_bytes > 0;
  return t;
}

SpanTracker::SpanTracker(const SpanTrackerConfig& cfg) : cfg_(cfg) {
  const auto bad = [](const std::string& what) { throw Error(Errc::invalid_config, "span tracker: " + what); };
  if (cfg.frame_bytes == 0) bad("frame_bytes must be at least 1");
  if (cfg.granule == 0) bad("granule must be at least 1");
  if (cfg.max_open_frames == 0 || cfg.max_streams == 0) bad("max_open_frames and max_streams must be at least 1");
  if (uint64_t{cfg.frame_buffers} < uint64_t{cfg.max_open_frames} * cfg.max_streams)
    bad("frame_buffers must be at least max_open_frames x max_streams");
  const uint64_t words = (granules_of(cfg.frame_bytes) + 63) / 64;
  if (words > UINT32_MAX) bad("too many granules per frame");
  words_ = static_cast<uint32_t>(words);
  bits_.assign(size_t{cfg.frame_buffers} * words_, 0);
  meta_.resize(cfg.frame_buffers);
  open_.resize(size_t{cfg.max_streams} * cfg.max_open_frames);
  windows_.resize(cfg.max_streams);
  streams_.reserve(cfg.max_streams);
  table_.assign(std::bit_ceil(size_t{cfg.max_streams} * 2), 0);
  free_.reserve(cfg.frame_buffers);
  for (uint32_t b = cfg.frame_buffers; b-- > 0;) free_.push_back(b);
  closed_.resize(cfg.frame_buffers);
  if (std::has_single_bit(cfg.granule)) {
    shift_ = std::countr_zero(cfg.granule);
    granule_mask_ = cfg.granule - 1;
  }
}

uint32_t SpanTracker::stream_index(uint64_t key) noexcept {
  if (last_index_ != kNoBuffer && streams_[last_index_].key == key) return last_index_;
  const size_t mask = table_.size() - 1;
  for (size_t h = (key * 0x9E3779B97F4A7C15ull) >> 40 & mask;; h = (h + 1) & mask) {
    const uint32_t e = table_[h];
    if (e == 0) {
      if (streams_.size() == cfg_.max_streams) return kNoBuffer;
      streams_.push_back(StreamState{key, {}});  // capacity reserved: no allocation
      table_[h] = static_cast<uint32_t>(streams_.size());
      return last_index_ = static_cast<uint32_t>(streams_.size() - 1);
    }
    if (streams_[e - 1].key == key) return last_index_ = e - 1;
  }
}

// The nearest value to the newest frame seen that has these low bits.
bool SpanTracker::unwrap(Window& w, uint64_t raw, uint8_t bits, uint64_t* frame) noexcept {
  if (bits >= 64) {
    *frame = raw;
    return true;
  }
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  raw &= mask;
  if (!w.started) {
    *frame = w.newest = raw;
    return true;
  }
  const uint64_t diff = (raw - w.newest) & mask;
  const bool back = diff > (mask >> 1);
  const uint64_t step = back ? (mask - diff + 1) : diff;
  if (back && step > w.newest) return false;  // before the stream's first frame
  *frame = back ? w.newest - step : w.newest + step;
  if (!back) w.newest = *frame;
  return true;
}

void SpanTracker::open_frame(uint32_t s, Open& o, uint64_t frame, uint64_t now_ns) noexcept {
  o.active = true;
  o.ended = false;
  o.frame = frame;
  o.granules = 0;
  o.max_end = 0;
  o.opened_ns = now_ns;
  o.buffer = kNoBuffer;
  if (free_.empty()) return;
  o.buffer = free_.back();
  free_.pop_back();
  std::fill_n(&bits_[size_t{o.buffer} * words_], words_, 0);
  FrameMeta& m = meta_[o.buffer];
  m.stream = streams_[s].key;
  m.frame = frame;
  m.size = 0;
  m.bytes_present = 0;
  m.has_timestamp = false;
  m.timestamp = m.timestamp_frac = 0;
  m.timestamp_offset = UINT64_MAX;
  m.nitems = 0;
}

// The open frame of stream s that `frame` is, opening it (and closing older ones) if new;
// null when it is late.
SpanTracker::Open* SpanTracker::frame_of(uint32_t s, uint64_t frame, uint64_t now_ns, SpanOutcome* why) noexcept {
  Window& w = windows_[s];
  const uint64_t n = cfg_.max_open_frames;
  if (!w.started) {
    // The window reaches back from the first frame seen: a stream that starts out of order
    // loses nothing, and frames before its first packet are not "skipped".
    w.started = true;
    w.base = frame >= n - 1 ? frame - (n - 1) : 0;
    w.first_frame = frame;
  }
  if (frame < w.first_frame) w.first_frame = frame;
  if (frame < w.base) {
    *why = SpanOutcome::late;
    return nullptr;
  }
  if (frame >= w.base + n) advance_to(s, frame - n + 1);
  Open& o = open_of(s, frame);
  if (!o.active) open_frame(s, o, frame, now_ns);
  return &o;
}

// Marks the span's granules in frame o (its buffer set); the frame's size is `size`.
// The packet's immediate items go with the frame (a later value of an id replaces the earlier).
void SpanTracker::keep_items(FrameMeta& m, const Decoded& d) noexcept {
  for (unsigned k = 0; k < d.nitems; ++k) {
    uint32_t j = 0;
    while (j < m.nitems && m.items[j].id != d.items[k].id) ++j;
    if (j < protocols::kMaxItems) {
      m.items[j] = FrameItem{d.items[k].id, d.items[k].value};
      if (j == m.nitems) ++m.nitems;
    }
  }
}

SpanOutcome SpanTracker::mark(Open& o, const Span& sp, uint64_t size) noexcept {
  const uint64_t g = cfg_.granule, end = sp.offset + sp.bytes;
  const char* why = sp.bytes == 0            ? "a span of no bytes"
                    : sp.offset % g != 0     ? "a span that does not start on a granule (rx.reorder.granule)"
                    : end > size             ? "a span beyond its frame's size"
                    : end % g != 0 && end != size ? "a span that ends off a granule before its frame's end (rx.reorder.granule)"
                                             : nullptr;
  if (why) {
    last_malformed_ = why;
    return SpanOutcome::malformed;
  }
  uint64_t* bits = &bits_[size_t{o.buffer} * words_];
  const uint64_t first = sp.offset / g, last = granules_of(end);  // granules [first, last)
  // Any granule already present makes the whole span a duplicate (nothing is overwritten).
  if (!set_if_clear(bits, first, last)) return SpanOutcome::duplicate;
  o.granules += last - first;
  meta_[o.buffer].bytes_present += sp.bytes;
  return SpanOutcome::placed;
}

uint32_t SpanTracker::place(const Decoded& d, uint64_t stream_key, uint64_t now_ns, PlacedSpan* out,
                            SpanOutcome* outcome) noexcept {
  const uint32_t s = stream_index(stream_key);
  if (s == kNoBuffer) {
    ++stats_.no_stream;
    *outcome = SpanOutcome::no_stream;
    return 0;
  }
  SpanStats& st = streams_[s].stats;
  ++st.packets;
  uint32_t placed = 0, ends = 0;  // spans to copy; ends with no bytes (nothing to copy)
  SpanOutcome first_failure = SpanOutcome::malformed;
  bool failed = false;
  for (unsigned i = 0; i < d.nspans; ++i) {
    const Span& sp = d.spans[i];
    SpanOutcome why = SpanOutcome::placed;
    uint64_t frame = 0;
    Open* o = nullptr;
    // A span no frame buffer could hold never opens a frame or moves the window (compared
    // without a sum that could wrap: offsets come from the sender).
    if (d.frame_bytes > cfg_.frame_bytes || sp.offset > cfg_.frame_bytes || sp.bytes > cfg_.frame_bytes - sp.offset) {
      why = SpanOutcome::malformed;
      last_malformed_ = "a frame larger than rx.reorder.frame_bytes";
    } else if (!unwrap(windows_[s], sp.frame, d.frame_bits, &frame)) {
      why = SpanOutcome::late;
    } else if (frame > kLastFrame - 2 * uint64_t{cfg_.max_open_frames}) {
      // The window's arithmetic (base + max_open_frames) must not wrap.
      why = SpanOutcome::malformed;
      last_malformed_ = "a frame number within 2 x max_open_frames of 2^64";
    } else {
      o = frame_of(s, frame, now_ns, &why);
    }
    if (o && o->buffer == kNoBuffer) why = SpanOutcome::no_buffer, o = nullptr;
    if (o && o->ended) why = SpanOutcome::late, o = nullptr;  // after its marker or completion
    if (o) {
      FrameMeta& m = meta_[o->buffer];
      const uint64_t said = d.frame_bytes;
      const bool last = d.marker && i + 1 == d.nspans;
      // A size learnt now (said, or where a marker's bytes end) must hold what arrived before.
      const uint64_t learnt = m.size ? 0 : said ? said : last ? sp.offset + sp.bytes : 0;
      if (said && m.size && said != m.size) {
        why = SpanOutcome::malformed;
        last_malformed_ = "a frame size that differs from its frame's earlier packets";
      } else if (learnt && learnt < o->max_end) {
        why = SpanOutcome::malformed;
        last_malformed_ = "a frame size (said, or where its marker ends) below bytes already placed in it";
      } else if (last && sp.bytes == 0) {
        // An end with no bytes (RoCE: a WRITE with immediate of none, HSB's end-of-window
        // record): the frame ends where the span says (else at frame_bytes), with its items.
        if (said) m.size = said;
        if (!m.size) m.size = sp.offset ? sp.offset : cfg_.frame_bytes;
        keep_items(m, d);
        ++ends;
        o->ended = true;
        close_ready(s);
      } else {
        if (said) m.size = said;
        const uint64_t size = m.size ? m.size : last ? sp.offset + sp.bytes : cfg_.frame_bytes;
        why = mark(*o, sp, size);
        if (why == SpanOutcome::placed) {
          if (last && !m.size) m.size = size;
          o->max_end = std::max(o->max_end, sp.offset + sp.bytes);
          if (sp.offset < m.timestamp_offset && d.has_timestamp) {
            m.has_timestamp = true;
            m.timestamp = d.timestamp;
            m.timestamp_frac = d.timestamp_frac;
            m.timestamp_offset = sp.offset;
          }
          keep_items(m, d);
          out[placed++] = PlacedSpan{o->buffer, sp.offset, sp.packet_offset, sp.bytes};
          hot_ = o, hot_stream_ = s, hot_raw_ = sp.frame, hot_frame_ = frame;
          const uint64_t total = granules_of(m.size ? m.size : cfg_.frame_bytes);
          if (last || (o->granules == total && !cfg_.wait_for_marker)) {
            if (!m.size) m.size = cfg_.frame_bytes;
            o->ended = true;
            close_ready(s);
          }
        }
      }
    }
    if (why != SpanOutcome::placed && !failed) first_failure = why, failed = true;
  }
  SpanOutcome result = placed || ends ? SpanOutcome::placed : failed ? first_failure : SpanOutcome::malformed;
  *outcome = result;
  uint64_t SpanStats::*counter = nullptr;
  switch (result) {
    case SpanOutcome::placed: counter = &SpanStats::placed; break;
    case SpanOutcome::duplicate: counter = &SpanStats::duplicate; break;
    case SpanOutcome::late: counter = &SpanStats::late; break;
    case SpanOutcome::no_buffer: counter = &SpanStats::no_buffer; break;
    default: counter = &SpanStats::malformed; break;
  }
  ++(st.*counter);
  ++(stats_.*counter);
  return placed;
}

void SpanTracker::close(uint32_t s, Open& o) noexcept {
  o.active = false;
  SpanStats& st = streams_[s].stats;
  if (o.buffer == kNoBuffer) {
    ++st.frames_dropped, ++stats_.frames_dropped;
    return;
  }
  FrameMeta& m = meta_[o.buffer];
  if (!m.size) m.size = cfg_.frame_bytes;
  const bool complete = m.bytes_present >= m.size && o.granules >= granules_of(m.size);
  if (complete) {
    ++st.frames_complete, ++stats_.frames_complete;
  } else {
    ++st.frames_incomplete, ++stats_.frames_incomplete;
    const uint64_t missing = m.size > m.bytes_present ? m.size - m.bytes_present : 0;
    st.bytes_missing += missing, stats_.bytes_missing += missing;
  }
  closed_[(closed_head_ + closed_count_) % closed_.size()] = SpanClosedFrame{o.buffer, s, complete};
  ++closed_count_;
}

void SpanTracker::advance_to(uint32_t s, uint64_t new_base) noexcept {
  Window& w = windows_[s];
  SpanStats& st = streams_[s].stats;
  const uint64_t window_end = w.base + cfg_.max_open_frames;
  for (uint64_t f = w.base; f < new_base && f < window_end; ++f) {
    Open& o = open_of(s, f);
    if (o.active && o.frame == f) close(s, o);
    else if (f > w.first_frame) ++st.frames_skipped, ++stats_.frames_skipped;
  }
  if (new_base > window_end) {
    const uint64_t skipped = new_base - std::max(window_end, w.first_frame + 1);
    st.frames_skipped += skipped, stats_.frames_skipped += skipped;
  }
  w.base = new_base;
  close_ready(s);
}

void SpanTracker::close_ready(uint32_t s) noexcept {
  Window& w = windows_[s];
  for (;;) {
    Open& o = open_of(s, w.base);
    if (!(o.active && o.frame == w.base && o.ended)) return;
    close(s, o);
    ++w.base;
  }
}

void SpanTracker::expire(uint64_t now_ns) noexcept {
  for (uint32_t s = 0; s < streams_.size(); ++s) {
    Window& w = windows_[s];
    while (w.started) {
      // The oldest open frame decides: newer frames were opened later.
      uint64_t f = w.base;
      const uint64_t end = w.base + cfg_.max_open_frames;
      while (f < end && !(open_of(s, f).active && open_of(s, f).frame == f)) ++f;
      if (f == end || now_ns - open_of(s, f).opened_ns < cfg_.timeout_ns) break;
      advance_to(s, f + 1);
    }
  }
}

void SpanTracker::close_all() noexcept {
  for (uint32_t s = 0; s < streams_.size(); ++s) {
    Window& w = windows_[s];
    if (!w.started) continue;
    uint64_t next = w.base;
    for (uint64_t f = w.base; f < w.base + cfg_.max_open_frames; ++f) {
      Open& o = open_of(s, f);
      if (o.active && o.frame == f) {
        close(s, o);
        next = f + 1;
      }
    }
    w.base = next;
  }
}

bool SpanTracker::pop_closed(SpanClosedFrame* out) noexcept {
  if (closed_count_ == 0) return false;
  *out = closed_[closed_head_];
  closed_head_ = (closed_head_ + 1) % closed_.size();
  --closed_count_;
  return true;
}

void SpanTracker::release_buffer(uint32_t buffer) noexcept {
  if (buffer < cfg_.frame_buffers && free_.size() < cfg_.frame_buffers) free_.push_back(buffer);
}

}  // namespace netdaq::gpu
