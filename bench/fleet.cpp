// Frames over UCX (issue 36, item 6): one side of bench/fleet_vs_ucx_perftest.sh, which runs a
// builder process and a sink process of this program (pinned, in two network namespaces for
// tcp) and ucx_perftest on the same transport and message size, alternating (bench/fleet.md).
//
//   netdaq_bench_fleet builder --listen HOST:PORT [--receiver builder|frames] --size BYTES
//                      --frames N --warmup W [--check sampled|full] [--buffers B]
//                      [--transport tcp|shm|automatic] [--max-seconds S] [--idle-ms MS] [--json PATH]
//   netdaq_bench_fleet sink --to HOST:PORT --size BYTES --frames N --warmup W [--credits C]
//                      [--buffers B] [--transport ...] [--max-seconds S] [--json PATH]
//
// The sink (FrameSink, route frame, nodes 1, when_full wait) sends N frames of BYTES from B
// frame buffers in memory holding the sensor pattern (netdaq/sensor_pattern.h). Frame n goes
// out of buffer n % B with frame number (n / B) x 256 + n % B: the pattern's bytes from 8 on
// depend on the frame number mod 256 only, so a buffer written once for frame number b serves
// every frame it sends after its first 8 bytes (the frame number) are rewritten, which the sink
// does when FrameSink::done() hands the buffer back. The builder (EventBuilder nodes 1, or with
// --receiver frames a FrameReceiver) pops every frame, checks it and releases it:
// "sampled" checks its size, completeness, its first 8 bytes, 64 bytes at a place that moves
// from frame to frame and its last 64 bytes (a few ns per frame, so the timed rounds measure
// the transfer, as ucx_perftest's receiver that reads nothing); "full" compares every byte
// against the pattern (the script's verify round, untimed).
// Timing: the builder's clock runs from its W-th popped frame to its N-th: N - W frames; the
// sink's from its W-th send to the drain's end (every credit back). The first W frames warm
// up the connection (ucx_perftest -w). Each process writes its figures as JSON (--json) and a
// one-line summary; a builder prints "listening PORT" once its port is open.
// Exit status: 0 ok; 1 setup or usage error; 3 a check failed (bytes, counts, a frame missing,
// the time bound ran out).
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "netdaq/fleet.h"
#include "netdaq/sensor_pattern.h"

namespace {

using namespace netdaq;
using namespace netdaq::fleet;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0, Clock::time_point t1) { return std::chrono::duration<double>(t1 - t0).count(); }
Clock::time_point after(Clock::time_point t, double seconds) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

struct Options {
  std::string role;
  std::string address;
  std::string receiver = "builder";
  uint64_t size = 1 << 20;
  uint64_t frames = 2000;
  uint64_t warmup = 100;
  std::string check = "sampled";
  uint32_t buffers = 0;  // sink: frame buffers (0: 2 x credits); builder: ReceiverConfig::buffers (0: default)
  uint32_t credits = 8;
  Transport transport = Transport::tcp;
  double max_seconds = 60;
  uint32_t idle_ms = 3000;
  std::string json;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "netdaq_bench_fleet: %s (see the header of bench/fleet.cpp)\n", what.c_str());
  std::exit(1);
}

uint64_t to_u64(const std::string& opt, const std::string& v) {
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || *end || v[0] == '-') usage_error(opt + ": a whole number, not '" + v + "'");
  return x;
}

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) usage_error("the first argument is the role: builder or sink");
  o.role = argv[1];
  if (o.role != "builder" && o.role != "sink") usage_error("role '" + o.role + "': builder or sink");
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage_error(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--listen" || a == "--to") o.address = v;
    else if (a == "--receiver") o.receiver = v;
    else if (a == "--size") o.size = to_u64(a, v);
    else if (a == "--frames") o.frames = to_u64(a, v);
    else if (a == "--warmup") o.warmup = to_u64(a, v);
    else if (a == "--check") o.check = v;
    else if (a == "--buffers") o.buffers = uint32_t(to_u64(a, v));
    else if (a == "--credits") o.credits = uint32_t(to_u64(a, v));
    else if (a == "--max-seconds") o.max_seconds = double(to_u64(a, v));
    else if (a == "--idle-ms") o.idle_ms = uint32_t(to_u64(a, v));
    else if (a == "--json") o.json = v;
    else if (a == "--transport") {
      if (v == "tcp") o.transport = Transport::tcp;
      else if (v == "shm") o.transport = Transport::shm;
      else if (v == "automatic") o.transport = Transport::automatic;
      else usage_error("--transport '" + v + "': tcp, shm or automatic");
    } else usage_error("unknown option " + a);
  }
  if (o.address.empty()) usage_error(o.role == "sink" ? "--to HOST:PORT is required" : "--listen HOST:PORT is required");
  if (o.size < 128) usage_error("--size: at least 128 bytes");
  if (o.warmup < 1 || o.frames <= o.warmup) usage_error("--warmup: at least 1, and --frames more than --warmup");
  if (o.check != "sampled" && o.check != "full") usage_error("--check '" + o.check + "': sampled or full");
  if (o.receiver != "builder" && o.receiver != "frames") usage_error("--receiver '" + o.receiver + "': builder or frames");
  if (o.credits < 1) usage_error("--credits: at least 1");
  if (o.buffers == 0 && o.role == "sink") o.buffers = std::min<uint32_t>(256, 2 * o.credits);
  if (o.role == "sink" && o.buffers > 256)
    usage_error("--buffers (sink): 1 to 256 (frame numbers repeat their pattern every 256)");
  return o;
}

// The JSON both roles write: a flat object of numbers and strings, in order.
class Json {
 public:
  void num(const char* k, double v) { add(k, fmt(v)); }
  void u64(const char* k, uint64_t v) { add(k, std::to_string(v)); }
  void str(const char* k, const std::string& v) { add(k, "\"" + v + "\""); }  // no quotes or backslashes in ours
  void boolean(const char* k, bool v) { add(k, v ? "true" : "false"); }
  std::string text() const { return "{" + body_ + "}\n"; }

 private:
  static std::string fmt(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
  }
  void add(const char* k, const std::string& v) { body_ += (body_.empty() ? "\"" : ", \"") + std::string(k) + "\": " + v; }
  std::string body_;
};

void write_json(const Options& o, const Json& j) {
  std::fputs(j.text().c_str(), stdout);
  if (o.json.empty()) return;
  std::ofstream f(o.json);
  f << j.text();
  if (!f) usage_error("cannot write " + o.json);
}

// ---- the builder side: checks ----

class Checker {
 public:
  Checker(uint64_t size, bool full) : size_(size), full_(full) {}
  // "" when frame `frame`'s bytes are right; else what is wrong (the first difference).
  std::string check(uint64_t frame, std::span<const std::byte> b) {
    if (b.size() != size_) return "size " + std::to_string(b.size()) + ", expected " + std::to_string(size_);
    if (full_) {
      const auto& ref = reference(frame);
      for (uint64_t k = 0; k < 8; ++k)
        if (b[k] != sensor_pattern_byte(frame, k)) return at(frame, k, b[k]);
      if (std::memcmp(b.data() + 8, ref.data() + 8, size_ - 8) != 0)
        for (uint64_t k = 8; k < size_; ++k)
          if (b[k] != ref[k]) return at(frame, k, b[k]);
      return "";
    }
    for (uint64_t k = 0; k < 8; ++k)
      if (b[k] != sensor_pattern_byte(frame, k)) return at(frame, k, b[k]);
    const uint64_t mid = 8 + (frame * 0x9E3779B97F4A7C15ull >> 20) % (size_ - 8 - 64);
    for (uint64_t k = mid; k < mid + 64; ++k)
      if (b[k] != sensor_pattern_byte(frame, k)) return at(frame, k, b[k]);
    for (uint64_t k = size_ - 64; k < size_; ++k)
      if (b[k] != sensor_pattern_byte(frame, k)) return at(frame, k, b[k]);
    return "";
  }

 private:
  // The pattern of frame numbers = frame (mod 256) from byte 8 on, written once per residue.
  const std::vector<std::byte>& reference(uint64_t frame) {
    auto& r = refs_[frame % 256];
    if (r.empty()) {
      r.resize(size_);
      write_sensor_pattern(r, frame % 256);
    }
    return r;
  }
  static std::string at(uint64_t frame, uint64_t k, std::byte got) {
    return "frame " + std::to_string(frame) + " byte " + std::to_string(k) + ": " + std::to_string(int(got)) +
           ", the pattern has " + std::to_string(int(sensor_pattern_byte(frame, k)));
  }
  uint64_t size_;
  bool full_;
  std::vector<std::vector<std::byte>> refs_ = std::vector<std::vector<std::byte>>(256);
};

struct Popped {
  uint64_t frame = 0;
  std::span<const std::byte> bytes;
  bool complete = false;
};

// What the builder loop needs of EventBuilder and FrameReceiver alike.
template <class R, class F>
struct Side {
  R& r;
  F f{};
  bool pop(Popped& p) {
    if (!r.pop(f)) return false;
    if constexpr (std::is_same_v<F, BuiltFrame>) p = {f.frame, f.bytes, f.complete && f.nodes_present == 1};
    else p = {f.meta.frame, f.bytes, f.meta.complete};
    return true;
  }
  void release() { r.release(f); }
};

template <class R, class F>
int run_builder(const Options& o, R& rx, Json& j) {
  Side<R, F> side{rx};
  Checker checker(o.size, o.check == "full");
  std::printf("listening %u\n", unsigned(rx.port()));
  std::fflush(stdout);
  uint64_t popped = 0, bad = 0, incomplete = 0;
  std::string first_bad;
  const auto start = Clock::now();
  auto t0 = start, t1 = start, first = start, last = start;
  const auto deadline = after(start, o.max_seconds);
  bool timed_out = false, idle = false;
  uint64_t polls = 0;
  while (popped < o.frames) {
    rx.progress();
    Popped p;
    while (popped < o.frames && side.pop(p)) {
      const auto now = Clock::now();
      if (!p.complete) ++incomplete;
      std::string why = checker.check(p.frame, p.bytes);
      if (!why.empty() && bad++ == 0) first_bad = why;
      side.release();
      ++popped;
      last = now;
      if (popped == 1) first = now;
      if (popped == o.warmup) t0 = now;
      if (popped == o.frames) t1 = now;
    }
    if ((++polls & 255) == 0) {
      const auto now = Clock::now();
      if (now > deadline) { timed_out = true; break; }
      if (popped > 0 && now - last > std::chrono::milliseconds(o.idle_ms)) { idle = true; break; }
    }
  }
  // Let the sink's last credits go back before this process ends (its drain waits for them).
  const auto linger = Clock::now() + std::chrono::milliseconds(300);
  while (Clock::now() < linger) rx.progress();

  const bool all = popped == o.frames;
  const double secs = all ? since(t0, t1) : 0;
  const uint64_t timed = o.frames - o.warmup;
  j.str("role", "builder");
  j.str("receiver", o.receiver == "builder" ? "EventBuilder" : "FrameReceiver");
  j.str("transport", to_string(o.transport));
  j.str("check", o.check);
  j.u64("size", o.size);
  j.u64("frames_expected", o.frames);
  j.u64("warmup", o.warmup);
  j.u64("frames", popped);
  j.u64("bad", bad);
  j.u64("incomplete", incomplete);
  j.boolean("timed_out", timed_out);
  j.boolean("idle_stop", idle);
  if (all && secs > 0) {
    j.u64("timed_frames", timed);
    j.num("seconds", secs);
    j.num("frames_per_s", double(timed) / secs);
    j.num("gbytes_per_s", double(timed) * double(o.size) / secs / 1e9);
  }
  j.num("first_to_last_s", since(first, last));
  if (!first_bad.empty()) j.str("first_bad", first_bad);
  return all && !bad && !incomplete ? 0 : 3;
}

void receiver_stats(Json& j, const ReceiverStats& s) {
  j.u64("rx_fragments", s.fragments);
  j.u64("rx_placed", s.placed);
  j.u64("rx_no_buffer", s.no_buffer);
  j.u64("rx_too_big", s.too_big);
  j.u64("rx_malformed", s.malformed);
  j.u64("rx_late", s.late);
  j.u64("rx_duplicate", s.duplicate);
  j.u64("rx_receive_failed", s.receive_failed);
}

int builder(const Options& o) {
  ReceiverConfig rc;
  rc.listen = parse_address(o.address);
  rc.max_bytes = o.size;
  if (o.buffers) rc.buffers = o.buffers;
  rc.transport = o.transport;
  Json j;
  int rcode = 0;
  if (o.receiver == "builder") {
    BuilderConfig bc;
    bc.receiver = rc;
    bc.nodes = 1;
    bc.timeout_ms = 2000;
    EventBuilder b(bc);
    rcode = run_builder<EventBuilder, BuiltFrame>(o, b, j);
    const BuilderStats s = b.stats();
    j.u64("buffers", rc.buffers);
    j.u64("built_complete", s.frames_complete);
    j.u64("built_incomplete", s.frames_incomplete);
    j.u64("built_timed_out", s.frames_timed_out);
    receiver_stats(j, s.receiver);
    if (s.receiver.no_buffer || s.receiver.too_big || s.receiver.malformed || s.receiver.late ||
        s.receiver.duplicate || s.receiver.receive_failed || s.frames_timed_out)
      rcode = 3;
  } else {
    FrameReceiver r(rc);
    rcode = run_builder<FrameReceiver, InFrame>(o, r, j);
    const ReceiverStats s = r.stats();
    j.u64("buffers", rc.buffers);
    receiver_stats(j, s);
    if (s.no_buffer || s.too_big || s.malformed || s.receive_failed) rcode = 3;
  }
  j.boolean("ok", rcode == 0);
  write_json(o, j);
  return rcode;
}

// ---- the sink side ----

int sink(const Options& o) {
  SinkConfig c;
  c.destinations = {parse_address(o.address)};
  c.node = 0;
  c.nodes = 1;
  c.route = Route::frame;
  c.credits = o.credits;
  c.when_full = WhenFull::wait;
  c.wait_ms = 5000;
  c.transport = o.transport;
  const auto start = Clock::now();
  const auto deadline = after(start, o.max_seconds);

  // Buffer b holds the pattern of frame number b (and of every b + 256 k past its first 8 bytes).
  const uint32_t nb = o.buffers;
  std::vector<std::vector<std::byte>> buf(nb);
  for (uint32_t b = 0; b < nb; ++b) {
    buf[b].resize(o.size);
    write_sensor_pattern(buf[b], b);
  }
  std::vector<char> busy(nb, 0);

  FrameSink s(c);
  bool connected = false;
  while (Clock::now() < start + std::chrono::seconds(10) && !(connected = s.stats().total.connected)) s.progress();
  if (!connected) {
    std::fprintf(stderr, "sink: not connected to %s within 10 s\n", o.address.c_str());
    return 1;
  }
  auto reap = [&] {
    uint64_t tok;
    while (s.done(tok)) busy[tok] = 0;
  };
  uint64_t sent = 0, waits = 0;
  auto t0 = Clock::now();
  bool timed_out = false;
  for (uint64_t n = 0; n < o.frames; ++n) {
    const uint32_t b = uint32_t(n % nb);
    if (busy[b]) {
      ++waits;
      uint64_t spins = 0;
      while (busy[b]) {
        s.progress();
        reap();
        if ((++spins & 1023) == 0 && Clock::now() > deadline) break;
      }
      if (busy[b]) { timed_out = true; break; }
    }
    const uint64_t frame = (n / nb) * 256 + b;
    write_sensor_pattern(std::span<std::byte>(buf[b].data(), 8), frame);
    if (n == o.warmup) t0 = Clock::now();
    OutFrame f;
    f.stream = 0;
    f.frame = frame;
    f.bytes = buf[b];
    f.bytes_present = o.size;
    f.complete = true;
    f.token = b;
    busy[b] = 1;
    s.send(f);
    ++sent;
    s.progress();
    reap();
  }
  const double left_ms = std::max(0.0, since(Clock::now(), deadline) * 1000);
  const bool drained = s.drain(uint32_t(std::min(left_ms, 30000.0)));
  const auto t1 = Clock::now();
  reap();
  const SinkStats st = s.stats();
  const SinkDestinationStats& t = st.total;
  const uint64_t timed = o.frames - o.warmup;
  const double secs = since(t0, t1);
  Json j;
  j.str("role", "sink");
  j.str("transport", to_string(o.transport));
  j.u64("size", o.size);
  j.u64("frames_expected", o.frames);
  j.u64("warmup", o.warmup);
  j.u64("credits", o.credits);
  j.u64("buffers", nb);
  j.u64("sent", sent);
  j.u64("waits_for_buffer", waits);
  j.boolean("drained", drained);
  j.boolean("timed_out", timed_out);
  j.u64("fragments", t.fragments);
  j.u64("acked", t.acked);
  j.u64("bytes_acked", t.bytes_acked);
  j.u64("refused", t.refused);
  j.u64("no_credit", t.no_credit);
  j.u64("peer_down", t.peer_down);
  j.u64("in_flight_lost", t.in_flight_lost);
  j.u64("in_flight", t.in_flight);
  j.u64("disconnects", t.disconnects);
  const bool ok = sent == o.frames && drained && t.acked == o.frames && t.fragments == o.frames;
  if (ok && secs > 0) {
    j.u64("timed_frames", timed);
    j.num("seconds", secs);
    j.num("frames_per_s", double(timed) / secs);
    j.num("gbytes_per_s", double(timed) * double(o.size) / secs / 1e9);
  }
  j.boolean("ok", ok);
  write_json(o, j);
  return ok ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    return o.role == "builder" ? builder(o) : sink(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netdaq_bench_fleet %s: %s\n", o.role.c_str(), e.what());
    return 1;
  }
}
