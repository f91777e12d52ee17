// CPU cost per packet of the span modes' bookkeeping against today's sequence path, no GPU
// needed (the target: a decoder costs <= 1.3x the sequence read per packet).
//
//   sequence          what FramePipeline does per packet in mode sequence (place_run /
//                     place_one): the u64 sequence at a fixed offset, FrameTracker::place_hot(),
//                     place() when that declines, a PlacementEntry written. The baseline.
//   sequence place()  the same through FrameTracker::place() alone (no inline fast path).
//   fields / spead / vita49   what place_span_packet does: decoder->decode(), the spans'
//                     bounds checked, SpanTracker::place(), a SpanEntry per placed span.
// Both sides: closed frames popped and their buffers released at once (the application
// takes every frame), expire() once per 64 packets (a burst), one stream, frames of
// --packets-per-frame packets in order, nothing lost. "decode ns" times decode() alone over
// the same packets; what the tracker adds is the difference.
//
// Packets: --frames frames generated once (bench/span_traffic.h: real fields / SPEAD /
// VITA-49 packets from tests/protocols), laid out as in a buffer pool (stride rounded to 64
// bytes, frame bytes 16-byte aligned), reused pass after pass with each packet's frame field
// (sequence rows: the sequence number) rewritten before the pass, outside the timing. So the
// headers are in cache when timed, the same for every row.
//
// Before timing, each case runs two passes with its spans copied into host frame buffers and
// every closed frame compared byte for byte with the generator's frame (sequence: every frame
// complete); after timing, the counters must say every packet was placed and every frame
// completed (exit status 3 otherwise). Rounds: each case runs --seconds / --rounds at a time,
// cases taking turns; the table shows each case's median round.
//
//   netdaq_cpu_decoders [--seconds S] [--rounds R] [--payloads LIST] [--frames F]
//                       [--packets-per-frame P] [--max-ratio X] [--json PATH]
// --max-ratio X: exit status 5 when a decoder's ratio is above X (not set: the target 1.3 is
// reported, never enforced; timings on shared CI machines are noise).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu/host/frame_tracker.h"
#include "gpu/host/packet_fields.h"
#include "gpu/host/span_tracker.h"
#include "gpu/place_job.h"
#include "protocols/decoder.h"
#include "span_traffic.h"

namespace {

using namespace netdaq;
using namespace netdaq::gpu;
using benchspan::Proto;
using benchspan::SpanTraffic;
using Clock = std::chrono::steady_clock;

constexpr double kTarget = 1.3;
constexpr uint32_t kBurst = 64;      // expire() once per this many packets, as place_burst() does
constexpr uint32_t kEntries = 1024;  // a job's placement list (written round robin)
constexpr uint32_t kSeqHeader = 16;  // sequence packets: junk u32, u64 LE sequence at 4, samples at 16
constexpr uint32_t kBuffers = 8, kOpen = 4;

// Packets in one block of memory, as in a pool of buffers: packet i at data(i), len(i) bytes.
class Pool {
 public:
  Pool(size_t count, uint32_t len, uint32_t lead) : count_(count), len_(len), lead_(lead) {
    stride_ = (lead + len + 63) / 64 * 64;
    mem_.reset(new (std::align_val_t(64)) std::byte[stride_ * count]);
    std::memset(mem_.get(), 0, stride_ * count);
  }
  std::byte* data(size_t i) const { return mem_.get() + i * stride_ + lead_; }
  uint32_t len() const { return len_; }
  size_t count() const { return count_; }

 private:
  struct Free {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  size_t count_, stride_;
  uint32_t len_, lead_;
  std::unique_ptr<std::byte[], Free> mem_;
};

// A case: prepare(pass) rewrites the packets' frame fields for pass `pass` (untimed), run()
// handles every packet of the pool once (timed), problems() checks the counters afterwards.
class Case {
 public:
  virtual ~Case() = default;
  virtual void prepare(uint64_t pass) = 0;
  virtual void run() noexcept = 0;
  virtual std::string problems(uint64_t packets) const = 0;
  virtual size_t packets() const = 0;
};

std::string want(const char* what, uint64_t got, uint64_t expected) {
  if (got == expected) return "";
  return std::string(what) + " " + std::to_string(got) + " (want " + std::to_string(expected) + ") ";
}

class SequenceCase final : public Case {
 public:
  SequenceCase(size_t packets, uint32_t payload, uint32_t ppf, bool hot)
      : pool_(packets, kSeqHeader + payload, 0), ppf_(ppf), hot_(hot), tracker_(config(ppf)) {
    for (size_t i = 0; i < packets; ++i)
      for (uint32_t b = 0; b < pool_.len(); ++b) pool_.data(i)[b] = std::byte(i * 31 + b);
  }
  static TrackerConfig config(uint32_t ppf) {
    TrackerConfig t;
    t.packets_per_frame = ppf;
    t.max_open_frames = kOpen;
    t.frame_buffers = kBuffers;
    t.seq_bits = 64;
    return t;
  }
  void prepare(uint64_t pass) override {
    for (size_t i = 0; i < pool_.count(); ++i) {
      const uint64_t seq = pass * pool_.count() + i;
      std::memcpy(pool_.data(i) + 4, &seq, 8);
    }
  }
  void run() noexcept override {
    uint32_t k = next_;
    const size_t n = pool_.count();
    for (size_t i = 0; i < n; ++i) {
      if (i % kBurst == 0) tracker_.expire(0);
      const std::byte* p = pool_.data(i);
      const uint64_t seq = load_uint(p + 4, 8, ByteOrder::little);
      uint32_t slot;
      if ((hot_ && tracker_.place_hot(seq, &slot)) || tracker_.place(seq, 0, &slot) == Placement::placed)
        entries_[k++ % kEntries] = PlacementEntry{reinterpret_cast<uint64_t>(p + kSeqHeader), slot, 0};
      if (tracker_.has_closed()) {
        ClosedFrame c;
        while (tracker_.pop_closed(&c)) tracker_.release_buffer(c.buffer);
      }
    }
    next_ = k;
  }
  std::string problems(uint64_t packets) const override {
    const TrackerStats& s = tracker_.stats();
    return want("placed", s.placed, packets) + want("frames_complete", s.frames_complete, packets / ppf_) +
           want("duplicate+late+no_buffer", s.duplicate + s.late + s.no_buffer, 0) +
           want("frames_incomplete+skipped+dropped", s.frames_incomplete + s.frames_skipped + s.frames_dropped, 0);
  }
  size_t packets() const override { return pool_.count(); }

 private:
  Pool pool_;
  uint32_t ppf_;
  bool hot_;
  FrameTracker tracker_;
  PlacementEntry entries_[kEntries];
  uint32_t next_ = 0;
};

SpanTrackerConfig tracker_config(const ReorderConfig& c) {
  SpanTrackerConfig t;
  t.frame_bytes = protocols::frame_bytes_of(c);
  t.granule = protocols::granule_of(c);
  t.max_open_frames = kOpen;
  t.frame_buffers = kBuffers;
  t.max_streams = 1;
  return t;
}

// decode + SpanTracker::place (+ the frame bytes copied on the CPU when checking).
class SpanCase final : public Case {
 public:
  SpanCase(const SpanTraffic& t, bool decode_only)
      : t_(t), pool_(t.packets(), t.header + t.payload, (16 - t.header % 16) % 16), cfg_(t.config()),
        decoder_(protocols::make_decoder(cfg_)), tracker_(tracker_config(cfg_)), decode_only_(decode_only) {
    for (size_t i = 0; i < t.packets(); ++i)
      std::memcpy(pool_.data(i), t.t.packets[i].payload.data(), pool_.len());
  }
  void prepare(uint64_t pass) override {
    for (size_t i = 0; i < pool_.count(); ++i) t_.stamp(pool_.data(i), pass * pool_.count() + i);
  }
  void run() noexcept override {
    if (decode_only_) {
      for (size_t i = 0; i < pool_.count(); ++i) {
        decoder_->decode(std::span<const std::byte>(pool_.data(i), pool_.len()), pool_.len(), d_);
        sink_ += d_.spans[0].frame;
      }
      return;
    }
    place_all(nullptr);
  }
  std::string problems(uint64_t packets) const override {
    if (decode_only_) return "";
    const SpanStats& s = tracker_.stats();
    return want("bad verdicts", bad_, 0) + want("placed", s.placed, packets) +
           want("frames_complete", s.frames_complete, packets / t_.packets_per_frame) +
           want("duplicate+late+no_buffer+malformed", s.duplicate + s.late + s.no_buffer + s.malformed, 0) +
           want("frames_incomplete+skipped+dropped", s.frames_incomplete + s.frames_skipped + s.frames_dropped, 0);
  }
  size_t packets() const override { return pool_.count(); }

  // Two passes with the spans copied into host frame buffers: every closed frame must be the
  // generator's, byte for byte. Returns the problems ("" if none). Run on a fresh case.
  std::string check() {
    const uint64_t fb = t_.frame_bytes();
    std::vector<std::byte> frames(fb * kBuffers);
    std::string why;
    uint64_t closed = 0;
    for (uint64_t pass = 0; pass < 2; ++pass) {
      prepare(pass);
      place_all([&](const PlacedSpan& ps, const std::byte* packet) {
        std::memcpy(&frames[ps.buffer * fb + ps.offset], packet + ps.packet_offset, ps.bytes);
      }, [&](const SpanClosedFrame& c) {
        const FrameMeta& m = tracker_.meta(c.buffer);
        const auto& truth = t_.truth(m.frame);
        if (!c.complete || m.size != truth.size() || std::memcmp(&frames[c.buffer * fb], truth.data(), truth.size()) != 0)
          if (why.empty()) why = "frame " + std::to_string(m.frame) + " differs from the generator's ";
        std::memset(&frames[c.buffer * fb], 0x5A, fb);
        ++closed;
      });
    }
    return why + want("frames checked", closed, 2 * pool_.count() / t_.packets_per_frame) + problems(2 * pool_.count());
  }

 private:
  // The timed loop (copy, on_closed: null) and the checked one.
  template <class Copy = std::nullptr_t, class OnClosed = std::nullptr_t>
  void place_all(Copy copy, OnClosed on_closed = nullptr) noexcept {
    uint32_t k = next_;
    const size_t n = pool_.count();
    const uint32_t len = pool_.len();
    const uint64_t fb = t_.frame_bytes();
    for (size_t i = 0; i < n; ++i) {
      if (i % kBurst == 0) tracker_.expire(0);
      const std::byte* p = pool_.data(i);
      decoder_->decode(std::span<const std::byte>(p, len), len, d_);
      bool ok = d_.verdict == protocols::Verdict::data && d_.nspans != 0;
      for (unsigned s = 0; ok && s < d_.nspans; ++s)  // the pipeline's packet_bytes() check
        ok = uint64_t{d_.spans[s].packet_offset} + d_.spans[s].bytes <= len;
      if (!ok) {
        ++bad_;
        continue;
      }
      // placed_ is a member (as in FramePipeline): a local PlacedSpan[4] is value-initialized
      // (96 bytes, a rep stos) on every packet, ~5 ns.
      PlacedSpan* const placed = placed_;
      const uint64_t stream = d_.has_stream ? d_.stream : 0;
      uint32_t np = 1;
      if (!tracker_.place_hot(d_, stream, placed)) {  // what FramePipeline does
        SpanOutcome outcome;
        np = tracker_.place(d_, stream, 0, placed, &outcome);
      }
      for (uint32_t s = 0; s < np; ++s) {
        const PlacedSpan& ps = placed[s];
        entries_[k++ % kEntries] =
            SpanEntry{reinterpret_cast<uint64_t>(p + ps.packet_offset), uint64_t{ps.buffer} * fb + ps.offset, ps.bytes, 0};
        if constexpr (!std::is_same_v<Copy, std::nullptr_t>) copy(ps, p);
      }
      if (tracker_.has_closed()) {
        SpanClosedFrame c;
        while (tracker_.pop_closed(&c)) {
          if constexpr (!std::is_same_v<OnClosed, std::nullptr_t>) on_closed(c);
          tracker_.release_buffer(c.buffer);
        }
      }
    }
    next_ = k;
  }

  const SpanTraffic& t_;
  Pool pool_;
  ReorderConfig cfg_;
  std::unique_ptr<protocols::Decoder> decoder_;
  SpanTracker tracker_;
  bool decode_only_;
  protocols::Decoded d_;
  PlacedSpan placed_[protocols::kMaxSpans];
  SpanEntry entries_[kEntries];
  uint32_t next_ = 0;
  uint64_t bad_ = 0;

 public:
  uint64_t sink_ = 0;
};

// A case being timed: its passes so far and the ns/packet of each round.
struct Timed {
  std::string name;
  std::unique_ptr<Case> c;
  uint64_t passes = 0;
  std::vector<double> rounds;
  double median() const {
    std::vector<double> v = rounds;
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
  }
  // Passes until `budget` seconds of timed work; appends this round's ns/packet.
  void round(double budget) {
    Clock::duration spent{};
    uint64_t packets = 0;
    do {
      c->prepare(passes++);
      const auto a = Clock::now();
      c->run();
      spent += Clock::now() - a;
      packets += c->packets();
    } while (std::chrono::duration<double>(spent).count() < budget);
    rounds.push_back(std::chrono::duration<double, std::nano>(spent).count() / double(packets));
  }
};

struct Row {
  uint32_t payload = 0;
  std::string name;
  double ns = 0, decode_ns = 0, ratio = 0;  // ratio: against the sequence row (the pipeline's path)
  uint64_t packets = 0;
  bool decoder = false;
  std::string problems;
};

std::vector<uint32_t> list(const char* text) {
  std::vector<uint32_t> v;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    v.push_back(static_cast<uint32_t>(std::strtoul(p, &end, 10)));
    if (end == p) break;
    p = *end == ',' ? end + 1 : end;
  }
  return v;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0, max_ratio = 0;
  int nrounds = 5;
  uint32_t frames = 16, ppf = 256;
  std::vector<uint32_t> payloads{1024, 8192};
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--seconds" && has) seconds = std::stod(argv[++i]);
    else if (a == "--rounds" && has) nrounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--payloads" && has) payloads = list(argv[++i]);
    else if (a == "--frames" && has) frames = std::max(1ul, std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--packets-per-frame" && has) ppf = std::max(1ul, std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--max-ratio" && has) max_ratio = std::stod(argv[++i]);
    else if (a == "--json" && has) json = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--seconds S] [--rounds R] [--payloads LIST] [--frames F] [--packets-per-frame P] "
                   "[--max-ratio X] [--json PATH]\n",
                   argv[0]);
      return a == "--help" ? 0 : 2;
    }
  }
  const std::string cpu = cpu_model();
  std::printf("cpu: %s; %u frames of %u packets, %.2f s per case in %d rounds (median shown)\n", cpu.c_str(), frames,
              ppf, seconds, nrounds);
  std::vector<Row> rows;
  bool ok = true;
  for (uint32_t payload : payloads) {
    std::vector<SpanTraffic> traffic;
    for (Proto p : benchspan::kProtos) traffic.push_back(benchspan::make_span_traffic(p, payload, ppf, frames));
    const size_t packets = size_t{frames} * ppf;
    // Checked first, on fresh cases (the timed ones start from frame 0 too).
    for (const SpanTraffic& t : traffic) {
      SpanCase c(t, false);
      const std::string why = c.check();
      if (!why.empty()) {
        std::printf("WRONG FRAMES: %s %u B: %s\n", benchspan::name_of(t.proto), payload, why.c_str());
        ok = false;
      }
    }
    {
      SequenceCase c(packets, payload, ppf, true);
      for (uint64_t pass = 0; pass < 2; ++pass) {
        c.prepare(pass);
        c.run();
      }
      const std::string why = c.problems(2 * packets);
      if (!why.empty()) {
        std::printf("WRONG FRAMES: sequence %u B: %s\n", payload, why.c_str());
        ok = false;
      }
    }
    std::vector<Timed> cases;
    cases.push_back({"sequence", std::make_unique<SequenceCase>(packets, payload, ppf, true)});
    cases.push_back({"sequence place()", std::make_unique<SequenceCase>(packets, payload, ppf, false)});
    for (const SpanTraffic& t : traffic) {
      cases.push_back({benchspan::name_of(t.proto), std::make_unique<SpanCase>(t, false)});
      cases.push_back({std::string(benchspan::name_of(t.proto)) + " decode", std::make_unique<SpanCase>(t, true)});
    }
    for (Timed& c : cases) c.round(std::min(0.02, seconds / nrounds));  // warm-up (caches, clocks)
    for (Timed& c : cases) c.rounds.clear();
    for (int r = 0; r < nrounds; ++r)  // cases take turns, starting with a different one each round
      for (size_t k = 0; k < cases.size(); ++k) cases[(k + r) % cases.size()].round(seconds / nrounds);
    const double base = cases[0].median();
    for (size_t k = 0; k < cases.size(); ++k) {
      const Timed& c = cases[k];
      if (c.name.ends_with(" decode")) continue;
      Row row;
      row.payload = payload;
      row.name = c.name;
      row.ns = c.median();
      row.ratio = row.ns / base;
      row.packets = c.passes * c.c->packets();
      row.decoder = k >= 2;
      if (row.decoder) row.decode_ns = cases[k + 1].median();
      row.problems = c.c->problems(row.packets);
      if (!row.problems.empty()) ok = false;
      rows.push_back(row);
    }
  }
  std::printf("%7s  %-17s %9s %10s %11s %11s  %s\n", "payload", "case", "ns/pkt", "decode ns", "tracker ns",
              "x sequence", "check");
  bool over = false;
  for (const Row& r : rows) {
    char target[48] = "";
    if (r.decoder) {
      std::snprintf(target, sizeof target, "  (<= %.1f %s)", kTarget, r.ratio <= kTarget ? "ok" : "OVER");
      if (max_ratio > 0 && r.ratio > max_ratio) over = true;
    }
    char dec[32] = "-", trk[32] = "-";
    if (r.decoder) {
      std::snprintf(dec, sizeof dec, "%.2f", r.decode_ns);
      std::snprintf(trk, sizeof trk, "%.2f", r.ns - r.decode_ns);
    }
    std::printf("%7u  %-17s %9.2f %10s %11s %10.2fx  %s%s\n", r.payload, r.name.c_str(), r.ns, dec, trk, r.ratio,
                r.problems.empty() ? "ok" : ("FAIL: " + r.problems).c_str(), target);
  }
  if (!json.empty()) {
    std::FILE* f = std::fopen(json.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", json.c_str());
      return 1;
    }
    std::fprintf(f, "{\"bench\": \"cpu_decoders\", \"cpu\": \"%s\", \"seconds\": %.3f, \"rounds\": %d, \"frames\": %u, "
                 "\"packets_per_frame\": %u, \"target_ratio\": %.2f, \"results\": [", cpu.c_str(), seconds, nrounds, frames, ppf, kTarget);
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::fprintf(f,
                   "%s\n  {\"payload\": %u, \"case\": \"%s\", \"ns_per_packet\": %.3f, \"decode_ns_per_packet\": %.3f, "
                   "\"ratio\": %.3f, \"decoder\": %s, \"within_target\": %s, \"packets\": %llu, \"check_ok\": %s, "
                   "\"problems\": \"%s\"}",
                   i ? "," : "", r.payload, r.name.c_str(), r.ns, r.decode_ns, r.ratio, r.decoder ? "true" : "false",
                   !r.decoder || r.ratio <= kTarget ? "true" : "false", (unsigned long long)r.packets,
                   r.problems.empty() ? "true" : "false", r.problems.c_str());
    }
    std::fprintf(f, "\n], \"ok\": %s}\n", ok ? "true" : "false");
    std::fclose(f);
  }
  if (!ok) {
    std::printf("FAILED: wrong frames or counters (above)\n");
    return 3;
  }
  if (over) {
    std::printf("a decoder is above --max-ratio %.2f\n", max_ratio);
    return 5;
  }
  return 0;
}
