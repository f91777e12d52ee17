// libFuzzer target: the placement model's frame bookkeeping on the CPU (src/gpu/host/
// span_tracker.h, SpanTracker), which turns the spans decoders read from received packets
// (frame numbers, offsets and lengths from the sender: untrusted) into frame buffers, byte
// offsets and presence bits.
//
// The first 5 input bytes make a SpanTrackerConfig (always a possible one):
//   [0] frame_bytes 1..256, [1] bit 7: x 37 (up to 9472); bits 0..3: granule, one of
//       1 2 3 4 5 7 8 12 16 24 32 64 100 128 256 1000 (powers of two and not);
//   [2] max_open_frames 1..8 (bits 0..2), max_streams 1..4 (bits 3..4), and frame_bits
//       8/16/32/64 (bits 5..6) of every packet (a stream has one decoder: one width);
//   [3] frame_buffers = max_open_frames x max_streams + 0..7;  [4] timeout (n + 1) us.
// The rest is a stream of actions, one byte each (a packet takes more):
//   00..9f  a packet: a header byte h (nspans (h & 7) % 5, bits 3..4 unused, marker bit 5, timestamp bit 6, items bit 7: then a byte, 1..4 items), a stream byte
//           s (key 1000 + (s & 7f) % 6: with max_streams < 6 some are no_stream; bit 7: the packet says
//           frame_bytes, from the next byte: 0..255 granules, possibly more than the config's),
//           then per span a frame byte (< f0: previous frame + f % 16 - 4; else the next 8 bytes,
//           any value), an offset byte (< f0: a granule 0..granules; else the next 8 bytes) and a
//           length byte (< 80: 1..8 granules, cut at frame_bytes; < f0: l - 80 bytes, any; else
//           the next 4 bytes). The pipeline's order: place_hot(), and place() when it declines.
//   a0..bf  time passes (n x timeout / 8 + 1 ns), expire(now)
//   c0..df  release_buffer of the n-th frame the application holds (none held: of a buffer
//           number past frame_buffers, which must change nothing)
//   e0..ef  release every frame the application holds
//   f0..ff  close_all() (end of stream; packets may follow)
// After each action, as the pipeline does, pop_closed until none is left: the application
// holds each frame's buffer until an action releases it.
// At the end: close_all, pop_closed until none is left, release everything.
//
// Checked (a violation prints the invariant and aborts, which libFuzzer reports as a crash):
//   - accounting: every packet counts exactly once: placed + duplicate + late + no_buffer +
//     malformed + no_stream == packets handed in; no_stream == packets of a key beyond
//     max_streams; per stream (streams() in order of first packet) packets == the packets of
//     that key, == the sum of its outcomes;
//   - place_hot and place never both count a packet: place_hot true: exactly one more placed,
//     its span the packet's one span; false: no counter and no free buffer changed; place:
//     exactly one more count, the one *outcome names, spans returned iff placed, each one of
//     the packet's spans (at most nspans);
//   - a placed span: its buffer < frame_buffers and not held by the application (not popped
//     and unreleased), bytes > 0, inside [0, frame_bytes) of the config and of the packet's
//     frame_bytes when said, granules not placed before in that buffer since it was popped,
//     the buffer's meta has the packet's stream and the span's frame (low frame_bits);
//   - pop_closed: buffer < frame_buffers, not held (never handed out twice without a release
//     in between); meta's stream is that of its stream_index; per stream frames in strictly
//     increasing frame order (no frame twice); 0 < size <= frame_bytes; every span placed
//     into it lies inside [0, size); presence bits == exactly the granules placed into it
//     (popcount == granules placed); bytes_present == the sum of its placed spans' bytes;
//     complete == every granule of [0, size) present;
//   - at the end: no frame left, frames popped == frames_complete + frames_incomplete, every
//     placed span in a popped frame, bytes_missing == what popped incomplete frames lack, and
//     every buffer free again once the application releases them.
// Any exception (the constructor's included: every config here is possible) aborts as well.
//
// Found by this fuzzer and fixed in SpanTracker (the seeds span_corpus/known_bug_*.bin keep
// them fixed): (1) a span whose offset + bytes wrapped past 2^64 was placed far outside its
// frame (now compared without a sum: malformed); (2) a frame size learnt after spans were
// placed (said, or where a marker's bytes end) could be below them, and the frame closed
// "complete" with granules never written (now malformed: a size must hold what arrived);
// (3) 64-bit frame numbers in the last max_open_frames below 2^64 wrapped the window's
// arithmetic and leaked a buffer (now malformed within 2 x max_open_frames of 2^64).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/host/span_tracker.h"
#include "protocols/decoder.h"

namespace {

using netdaq::gpu::FrameMeta;
using netdaq::gpu::PlacedSpan;
using netdaq::gpu::SpanClosedFrame;
using netdaq::gpu::SpanOutcome;
using netdaq::gpu::SpanStats;
using netdaq::gpu::SpanTracker;
using netdaq::gpu::SpanTrackerConfig;
using netdaq::protocols::Decoded;
using netdaq::protocols::kMaxSpans;

struct Model {
  SpanTrackerConfig cfg;
  uint64_t granules = 0;  // per frame_bytes
  // Per buffer, since it was last popped (or since the start): what was placed into it.
  std::vector<std::vector<bool>> placed;  // per granule
  std::vector<uint64_t> placed_granules, placed_bytes, max_end;
  std::vector<bool> held;                 // popped, not released
  std::vector<uint32_t> held_list;
  std::vector<uint64_t> keys;             // streams in order of their first packet
  std::vector<uint64_t> key_packets;      // per stream
  std::map<uint64_t, uint64_t> last_frame;  // per stream key: the last frame popped
  uint64_t fed = 0, no_stream = 0;
  uint64_t popped = 0, missing = 0;
  size_t step = 0;
};


[[noreturn]] void fail(const char* what, const Model& m, int line) {
  std::fprintf(stderr,
               "span_fuzz: %s (action %zu; config: frame_bytes %llu, granule %u, max_open_frames %u, "
               "max_streams %u, frame_buffers %u, timeout %llu ns; span_fuzz.cpp:%d)\n",
               what, m.step, static_cast<unsigned long long>(m.cfg.frame_bytes), m.cfg.granule,
               m.cfg.max_open_frames, m.cfg.max_streams, m.cfg.frame_buffers,
               static_cast<unsigned long long>(m.cfg.timeout_ns), line);
  std::abort();
}
#define CHECK(cond, m)                     \
  do {                                     \
    if (!(cond)) fail(#cond, m, __LINE__); \
  } while (0)

uint64_t total(const SpanStats& s) {
  return s.placed + s.duplicate + s.late + s.no_buffer + s.malformed + s.no_stream;
}

uint64_t count_of(const SpanStats& s, SpanOutcome o) {
  switch (o) {
    case SpanOutcome::placed: return s.placed;
    case SpanOutcome::duplicate: return s.duplicate;
    case SpanOutcome::late: return s.late;
    case SpanOutcome::no_buffer: return s.no_buffer;
    case SpanOutcome::malformed: return s.malformed;
    case SpanOutcome::no_stream: return s.no_stream;
  }
  return UINT64_MAX;
}

void check_counts(const SpanTracker& t, const Model& m) {
  const SpanStats& s = t.stats();
  CHECK(total(s) == m.fed, m);
  CHECK(s.no_stream == m.no_stream, m);
  CHECK(t.streams().size() == m.keys.size(), m);
  for (size_t i = 0; i < m.keys.size(); ++i) {
    const auto& st = t.streams()[i];
    CHECK(st.key == m.keys[i], m);
    CHECK(st.stats.packets == m.key_packets[i], m);
    CHECK(total(st.stats) == st.stats.packets, m);
  }
  CHECK(t.free_buffers() + m.held_list.size() <= m.cfg.frame_buffers, m);
}

// A span place_hot or place returned for packet d of stream `key`.
void placed_span(const SpanTracker& t, Model& m, const Decoded& d, uint64_t key, const PlacedSpan& ps) {
  CHECK(ps.buffer < m.cfg.frame_buffers, m);
  CHECK(!m.held[ps.buffer], m);  // not a frame the application holds (closed, not released)
  CHECK(ps.bytes > 0, m);
  CHECK(ps.offset < m.cfg.frame_bytes && ps.bytes <= m.cfg.frame_bytes - ps.offset, m);  // inside frame_bytes
  if (d.frame_bytes) CHECK(ps.offset < d.frame_bytes && ps.bytes <= d.frame_bytes - ps.offset, m);
  // One of the packet's spans (packet offsets are distinct here).
  const netdaq::protocols::Span* sp = nullptr;
  for (unsigned i = 0; i < d.nspans; ++i)
    if (d.spans[i].packet_offset == ps.packet_offset) sp = &d.spans[i];
  CHECK(sp != nullptr, m);
  CHECK(sp->offset == ps.offset && sp->bytes == ps.bytes, m);
  const FrameMeta& meta = t.meta(ps.buffer);
  CHECK(meta.stream == key, m);
  const uint64_t mask = d.frame_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << d.frame_bits) - 1;
  CHECK((meta.frame & mask) == (sp->frame & mask), m);
  // Granules [first, last): none placed into this buffer before.
  const uint64_t g = m.cfg.granule, end = ps.offset + ps.bytes;
  const uint64_t first = ps.offset / g, last = (end + g - 1) / g;
  CHECK(last <= m.granules, m);
  for (uint64_t k = first; k < last; ++k) {
    CHECK(!m.placed[ps.buffer][k], m);
    m.placed[ps.buffer][k] = true;
  }
  m.placed_granules[ps.buffer] += last - first;
  m.placed_bytes[ps.buffer] += ps.bytes;
  m.max_end[ps.buffer] = std::max(m.max_end[ps.buffer], end);
}

void packet(SpanTracker& t, Model& m, Decoded& d, uint64_t key, uint64_t now) {
  ++m.fed;
  const auto it = std::find(m.keys.begin(), m.keys.end(), key);
  if (it != m.keys.end()) {
    ++m.key_packets[static_cast<size_t>(it - m.keys.begin())];
  } else if (m.keys.size() < m.cfg.max_streams) {
    m.keys.push_back(key);
    m.key_packets.push_back(1);
  } else {
    ++m.no_stream;
  }

  const SpanStats before = t.stats();
  const uint32_t free_before = t.free_buffers();
  PlacedSpan out[kMaxSpans];
  if (t.place_hot(d, key, out)) {
    const SpanStats& s = t.stats();
    CHECK(s.placed == before.placed + 1 && total(s) == total(before) + 1, m);
    CHECK(d.nspans == 1, m);
    CHECK(t.free_buffers() == free_before, m);
    placed_span(t, m, d, key, out[0]);
    return;
  }
  {
    const SpanStats& s = t.stats();
    CHECK(total(s) == total(before) && s.placed == before.placed, m);  // place_hot declined: nothing counted
    CHECK(t.free_buffers() == free_before, m);
  }
  SpanOutcome outcome = SpanOutcome::no_stream;
  const uint32_t n = t.place(d, key, now, out, &outcome);
  const SpanStats& s = t.stats();
  CHECK(total(s) == total(before) + 1, m);  // counted once
  CHECK(count_of(s, outcome) == count_of(before, outcome) + 1, m);
  // Placed with nothing to copy only for an end with no bytes (a marker whose last span is
  // empty: RoCE's WRITE with immediate of none, HSB's end-of-window record).
  const bool empty_end = d.marker && d.nspans && d.spans[d.nspans - 1].bytes == 0;
  CHECK(n == 0 || outcome == SpanOutcome::placed, m);
  CHECK(outcome != SpanOutcome::placed || n > 0 || empty_end, m);
  CHECK(n <= d.nspans, m);
  for (uint32_t i = 0; i < n; ++i) placed_span(t, m, d, key, out[i]);
}

void pop_all(SpanTracker& t, Model& m) {
  SpanClosedFrame c;
  while (t.pop_closed(&c)) {
    CHECK(c.buffer < m.cfg.frame_buffers, m);
    CHECK(!m.held[c.buffer], m);  // handed out twice without a release in between
    CHECK(c.stream_index < t.streams().size(), m);
    const FrameMeta& meta = t.meta(c.buffer);
    const uint64_t key = t.streams()[c.stream_index].key;
    CHECK(meta.stream == key, m);
    const auto last = m.last_frame.find(key);
    CHECK(last == m.last_frame.end() || meta.frame > last->second, m);  // frame order, each frame once
    m.last_frame[key] = meta.frame;
    CHECK(meta.size > 0 && meta.size <= m.cfg.frame_bytes, m);
    CHECK(m.max_end[c.buffer] <= meta.size, m);  // every placed span inside [0, size)
    CHECK(meta.bytes_present == m.placed_bytes[c.buffer], m);
    // Presence: exactly the granules placed into this buffer.
    CHECK(t.words_per_frame() == (m.granules + 63) / 64, m);
    const uint64_t* bits = t.presence(c.buffer);
    uint64_t ones = 0;
    for (uint32_t w = 0; w < t.words_per_frame(); ++w) ones += static_cast<uint64_t>(std::popcount(bits[w]));
    CHECK(ones == m.placed_granules[c.buffer], m);
    for (uint64_t k = 0; k < m.granules; ++k) CHECK(((bits[k / 64] >> (k % 64)) & 1) == m.placed[c.buffer][k], m);
    const uint64_t size_granules = (meta.size + m.cfg.granule - 1) / m.cfg.granule;
    bool all = true;
    for (uint64_t k = 0; k < size_granules; ++k) all = all && m.placed[c.buffer][k];
    CHECK(c.complete == all, m);  // complete: every granule of its size present
    if (!c.complete) m.missing += meta.size - std::min(meta.size, meta.bytes_present);
    ++m.popped;
    m.held[c.buffer] = true;
    m.held_list.push_back(c.buffer);
    std::fill(m.placed[c.buffer].begin(), m.placed[c.buffer].end(), false);
    m.placed_granules[c.buffer] = m.placed_bytes[c.buffer] = m.max_end[c.buffer] = 0;
  }
}

void release(SpanTracker& t, Model& m, size_t k) {
  const uint32_t b = m.held_list[k];
  m.held_list.erase(m.held_list.begin() + static_cast<ptrdiff_t>(k));
  m.held[b] = false;
  const uint32_t before = t.free_buffers();
  t.release_buffer(b);
  CHECK(t.free_buffers() == before + 1, m);
}

void release_all(SpanTracker& t, Model& m) {
  while (!m.held_list.empty()) release(t, m, m.held_list.size() - 1);
}

// The input, read a byte at a time; zero past the end.
struct Reader {
  const uint8_t* data;
  size_t size, pos = 0;
  bool more() const { return pos < size; }
  uint8_t u8() { return pos < size ? data[pos++] : 0; }
  uint64_t le(unsigned n) {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) v |= uint64_t{u8()} << (8 * i);
    return v;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  Reader in{data, size};
  Model m;
  SpanTrackerConfig& c = m.cfg;
  static constexpr uint32_t kGranules[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 24, 32, 64, 100, 128, 256, 1000};
  c.frame_bytes = 1 + uint64_t{in.u8()};
  const uint8_t b1 = in.u8();
  if (b1 & 0x80) c.frame_bytes *= 37;
  c.granule = kGranules[b1 & 15];
  const uint8_t b2 = in.u8();
  c.max_open_frames = 1 + (b2 & 7u);
  c.max_streams = 1 + ((b2 >> 3) & 3u);
  c.frame_buffers = c.max_open_frames * c.max_streams + in.u8() % 8u;
  c.timeout_ns = (uint64_t{in.u8()} + 1) * 1000;
  static constexpr uint8_t kBits[] = {8, 16, 32, 64};
  const uint8_t frame_bits = kBits[(b2 >> 5) & 3];

  SpanTracker t(c);  // a possible config: an exception escapes and aborts
  m.granules = (c.frame_bytes + c.granule - 1) / c.granule;
  m.placed.assign(c.frame_buffers, std::vector<bool>(m.granules, false));
  m.placed_granules.assign(c.frame_buffers, 0);
  m.placed_bytes.assign(c.frame_buffers, 0);
  m.max_end.assign(c.frame_buffers, 0);
  m.held.assign(c.frame_buffers, false);
  CHECK(t.free_buffers() == c.frame_buffers && t.granule() == c.granule, m);

  uint64_t now = 1'000'000'000, frame = 0;
  while (in.more()) {
    const uint8_t b = in.u8();
    if (b < 0xa0) {
      Decoded d;
      d.reset();
      d.frame_bits = frame_bits;
      d.verdict = netdaq::protocols::Verdict::data;
      const uint8_t h = in.u8();
      d.nspans = (h & 7) % (kMaxSpans + 1);
      d.marker = h & 0x20;
      d.has_timestamp = h & 0x40;
      d.timestamp = m.step;
      d.timestamp_frac = m.step * 3;
      if (h & 0x80) {
        const uint8_t ni = in.u8();
        d.nitems = 1 + ni % 4;
        for (unsigned k = 0; k < d.nitems; ++k) d.items[k] = netdaq::protocols::Item{(ni >> 2) % 20 + k, m.step};
      }
      const uint8_t s = in.u8();
      const uint64_t key = 1000 + (s & 0x7f) % 6;
      if (s & 0x80) d.frame_bytes = uint64_t{in.u8()} * c.granule;
      uint32_t packet_offset = 0;
      for (unsigned i = 0; i < d.nspans; ++i) {
        netdaq::protocols::Span& sp = d.spans[i];
        const uint8_t f = in.u8();
        frame = f < 0xf0 ? std::max<uint64_t>(frame + (f % 16), 4) - 4 : in.le(8);
        sp.frame = frame;
        const uint8_t o = in.u8();
        sp.offset = o < 0xf0 ? (o % (m.granules + 1)) * c.granule : in.le(8);
        const uint8_t l = in.u8();
        if (l < 0x80) {
          sp.bytes = (l % 8 + 1) * c.granule;
          if (sp.offset < c.frame_bytes) sp.bytes = static_cast<uint32_t>(std::min<uint64_t>(sp.bytes, c.frame_bytes - sp.offset));
        } else {
          sp.bytes = l < 0xf0 ? l - 0x80u : static_cast<uint32_t>(in.le(4));
        }
        sp.packet_offset = packet_offset++;  // distinct: tells the spans apart
      }
      packet(t, m, d, key, now);
    } else if (b < 0xc0) {
      now += (b & 0x1fu) * (c.timeout_ns / 8) + 1;
      t.expire(now);
    } else if (b < 0xe0) {
      if (!m.held_list.empty()) {
        release(t, m, (b & 0x1fu) % m.held_list.size());
      } else {
        const uint32_t before = t.free_buffers();
        t.release_buffer(c.frame_buffers + (b & 0x1fu));  // not a buffer: ignored
        CHECK(t.free_buffers() == before, m);
      }
    } else if (b < 0xf0) {
      release_all(t, m);
    } else {
      t.close_all();
    }
    pop_all(t, m);
    check_counts(t, m);
    ++m.step;
  }

  // End of stream: every open frame closes, the application takes and returns them all.
  t.close_all();
  pop_all(t, m);
  check_counts(t, m);
  const SpanStats& s = t.stats();
  CHECK(!t.has_closed(), m);
  CHECK(m.popped == s.frames_complete + s.frames_incomplete, m);
  CHECK(m.missing == s.bytes_missing, m);
  uint64_t unpopped = 0;  // spans placed into frames still open: none
  for (uint32_t b = 0; b < c.frame_buffers; ++b) unpopped += m.placed_bytes[b];
  CHECK(unpopped == 0, m);
  CHECK(t.free_buffers() + m.held_list.size() == c.frame_buffers, m);
  release_all(t, m);
  CHECK(t.free_buffers() == c.frame_buffers, m);
  return 0;
}
