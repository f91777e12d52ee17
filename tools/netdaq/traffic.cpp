#include "traffic.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <memory>
#include <thread>

#include "signals.h"

namespace netdaq::cli {

// ---- latency histogram ----

namespace {
unsigned bucket_of(uint64_t v) noexcept {
  if (v < LatencyHistogram::kSub) return static_cast<unsigned>(v);
  const unsigned lg = 63u - static_cast<unsigned>(std::countl_zero(v));  // >= 4
  const unsigned sub = static_cast<unsigned>(v >> (lg - 4)) & (LatencyHistogram::kSub - 1);
  return (lg - 3) * LatencyHistogram::kSub + sub;
}
uint64_t bucket_low(unsigned b) noexcept {
  if (b < LatencyHistogram::kSub) return b;
  const unsigned lg = b / LatencyHistogram::kSub + 3;
  const uint64_t sub = b % LatencyHistogram::kSub;
  return (uint64_t{1} << lg) | (sub << (lg - 4));
}
}  // namespace

void LatencyHistogram::add(uint64_t ns) noexcept {
  ++counts[std::min<unsigned>(bucket_of(ns), counts.size() - 1)];
  ++n;
  sum += ns;
  min = std::min(min, ns);
  max = std::max(max, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& o) noexcept {
  for (size_t i = 0; i < counts.size(); ++i) counts[i] += o.counts[i];
  n += o.n;
  sum += o.sum;
  min = std::min(min, o.min);
  max = std::max(max, o.max);
}

uint64_t LatencyHistogram::percentile(double p) const noexcept {
  if (n == 0) return 0;
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(p / 100.0 * static_cast<double>(n) + 0.5));
  uint64_t acc = 0;
  for (unsigned b = 0; b < counts.size(); ++b) {
    acc += counts[b];
    if (acc >= rank) return std::clamp(bucket_low(b), min, max);
  }
  return max;
}

// ---- threads ----

bool pin_thread(int cpu) noexcept {
  if (cpu < 0) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

namespace {

void sleep_us(uint32_t us) noexcept {
  timespec ts{0, static_cast<long>(us) * 1000};
  nanosleep(&ts, nullptr);
}

// Idle policy of the CLI's loops: retry at once a few times (a poll is a syscall in direct
// mode), then sleep in short steps so that a sender and a receiver can share the cores of a
// small box. No sched_yield(): on a CPU shared with a busy process it hands that process a
// whole time slice (milliseconds), while a short sleep gets the CPU back on wake-up.
inline void idle_wait(uint32_t& empty) noexcept {
  ++empty;
  if (empty < 16) return;
  sleep_us(empty < 512 ? 10 : 50);
}

void thread_setup(int cpu, const char* name) noexcept {
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);  // 1 µs: short sleeps stay short
  pthread_setname_np(pthread_self(), name);
  pin_thread(cpu);
}

// Writes the payload format of `size` bytes into p: the header and as much as fits in
// segment 0, the rest of the pattern in segment 1 (header-data split tx queues).
void write_split_payload(Packet& p, uint32_t size, uint32_t stream, uint64_t seq, uint64_t now) noexcept {
  const auto head = p.buffer(0);
  const uint32_t first = std::min<uint32_t>(size, static_cast<uint32_t>(head.size()));
  write_payload(head.first(first), stream, seq, now);
  p.set_size(first, 0);
  if (p.segments() > 1) {
    fill_pattern(p.buffer(1).first(size - first), stream, seq, first);
    p.set_size(size - first, 1);
  }
}

struct Sender {
  TxQueue* q = nullptr;
  uint32_t stream = 0;
  uint64_t count = 0;  // 0: unlimited
  int cpu = -1;
  // results
  uint64_t sent = 0, bytes = 0, first_ns = 0, last_ns = 0;
  std::atomic<bool> done{false};
};

// After a stop (deadline, count or Ctrl-C) a sender still offers the rest of its current
// burst for up to this long, so that stopping does not leave packets unsent.
constexpr uint64_t kFinishBurstNs = 500'000'000;

void sender_loop(Sender& s, const TrafficOptions& opt, uint64_t deadline_ns, const std::atomic<bool>& stop) noexcept {
  thread_setup(s.cpu, "ndq-tx");
  const uint32_t size = opt.payload_size;
  const uint32_t batch = std::max<uint32_t>(1, s.q->config().batch_size);
  uint64_t seq = 0;
  uint32_t idle = 0;
  auto stopping = [&] {
    return stop.load(std::memory_order_relaxed) || (deadline_ns && payload_clock_ns() >= deadline_ns);
  };
  while (!(s.count && seq >= s.count) && !stopping()) {
    const uint64_t want = s.count ? std::min<uint64_t>(batch, s.count - seq) : batch;
    TxBurst burst = s.q->allocate(want);
    if (!burst) {  // pool empty: buffers still with the engine
      idle_wait(idle);
      continue;
    }
    const uint64_t now = payload_clock_ns();
    for (Packet& p : burst) write_split_payload(p, size, s.stream, seq++, now);
    if (!s.first_ns) s.first_ns = now;
    // send() takes what the engine accepts now (pacing, full socket buffer): retry the rest.
    uint32_t spins = 0;
    bool restamp = false;
    uint64_t give_up_ns = 0;  // set once stopping: finish this burst, but not forever
    while (burst) {
      if (restamp) {  // the send time is when the packet is offered to the engine
        const uint64_t t = payload_clock_ns();
        for (Packet& p : burst) stamp_payload(p.buffer(0).first(std::min<size_t>(size, p.buffer(0).size())), t);
      }
      restamp = true;
      const size_t n = burst.send();
      if (n) {
        s.sent += n;
        s.bytes += n * size;
        spins = 0;
        continue;
      }
      if (stopping()) {
        const uint64_t t = payload_clock_ns();
        if (!give_up_ns) give_up_ns = t + kFinishBurstNs;
        if (t >= give_up_ns) break;
      }
      idle_wait(spins);
    }
    if (burst) {  // the engine took nothing for a while after the stop: counted tx_unsent
      burst.release();
      break;
    }
    idle = 0;
  }
  s.last_ns = payload_clock_ns();
  s.done.store(true, std::memory_order_release);
}

struct StreamState {
  explicit StreamState(uint64_t window) : tracker(window) {}
  SequenceTracker tracker;
  LatencyHistogram latency;
};

struct Receiver {
  RxQueue* q = nullptr;
  gpu::FramePipeline* pipeline = nullptr;  // checked bursts go on to the GPU
  uint64_t frames_out = 0;
  int cpu = -1;
  bool count_only = false;  // raw frames (dpdk.raw_frames): not netdaq payloads, only counted
  std::vector<std::unique_ptr<StreamState>> streams;  // by stream id
  std::vector<StreamState*> active;                   // the non-null entries of streams
  uint64_t foreign = 0, packets = 0, bytes = 0, first_ns = 0, last_ns = 0;
  // Published once per burst for the controller.
  std::atomic<uint64_t> pub_unique{0}, pub_lost{0}, pub_reordered{0}, pub_dups{0}, pub_malformed{0}, pub_last_ns{0};
};

constexpr uint32_t kMaxStreams = 1u << 16;  // higher stream ids count as foreign

void receiver_loop(Receiver& r, const TrafficOptions& opt, const std::atomic<bool>& stop) noexcept {
  thread_setup(r.cpu, "ndq-rx");
  uint32_t idle = 0;
  uint32_t untimed = 0;  // count_only: bursts since the clock was last read
  StreamState* last = nullptr;
  uint32_t last_id = 0;
  auto stamp = [&r](uint64_t now) {
    if (!r.first_ns) r.first_ns = now;
    r.last_ns = now;
    r.pub_last_ns.store(now, std::memory_order_relaxed);
  };
  while (!stop.load(std::memory_order_relaxed)) {
    RxBurst b = r.q->poll();
    if (!b) {
      if (untimed) stamp(payload_clock_ns()), untimed = 0;  // the last bursts ended about now
      idle_wait(idle);
      continue;
    }
    idle = 0;
    if (r.count_only) {
      // Count and release, like a receiver that only drains the queue. The clock (tens of ns
      // on a VM) is read on the first burst and every 16th, and when the queue runs dry.
      r.bytes += b.bytes();
      r.packets += b.size();
      b.release();
      if (++untimed == 16 || !r.first_ns) stamp(payload_clock_ns()), untimed = 0;
      continue;
    }
    const uint64_t now = payload_clock_ns();
    if (!r.first_ns) r.first_ns = now;
    r.last_ns = now;
    for (const Packet& p : b) {
      const uint32_t size = p.size();
      ++r.packets;
      r.bytes += size;
      PayloadHeader h;
      const PayloadStatus st = verify_payload(p, &h, opt.verify);
      if ((st != PayloadStatus::ok && st != PayloadStatus::corrupt) || h.stream >= kMaxStreams) {
        ++r.foreign;
        continue;
      }
      StreamState* ss = last;
      if (!ss || last_id != h.stream) {
        if (h.stream >= r.streams.size()) r.streams.resize(h.stream + 1);
        auto& slot = r.streams[h.stream];
        if (!slot) {
          slot = std::make_unique<StreamState>(opt.window);
          r.active.push_back(slot.get());
        }
        ss = last = slot.get();
        last_id = h.stream;
      }
      if (st == PayloadStatus::corrupt || (opt.expected_size && size != opt.expected_size)) {
        ss->tracker.add_malformed();
        continue;
      }
      ss->tracker.add(h.sequence);
      ss->latency.add(now > h.send_ns ? now - h.send_ns : 0);
    }
    if (r.pipeline) {
      r.pipeline->submit(std::move(b));
      while (gpu::Frame f = r.pipeline->next_frame()) ++r.frames_out;
    } else {
      b.release();
    }
    uint64_t u = 0, l = 0, o = 0, d = 0, m = r.foreign;
    for (StreamState* s : r.active) {
      u += s->tracker.unique();
      l += s->tracker.lost_so_far();
      o += s->tracker.reordered();
      d += s->tracker.duplicates();
      m += s->tracker.malformed();
    }
    r.pub_unique.store(u, std::memory_order_relaxed);
    r.pub_lost.store(l, std::memory_order_relaxed);
    r.pub_reordered.store(o, std::memory_order_relaxed);
    r.pub_dups.store(d, std::memory_order_relaxed);
    r.pub_malformed.store(m, std::memory_order_relaxed);
    r.pub_last_ns.store(now, std::memory_order_relaxed);
  }
  if (untimed) stamp(payload_clock_ns());
  if (r.pipeline) {  // the rest: frames still open, and GPU work in flight
    r.pipeline->flush();
    try {
      r.pipeline->synchronize();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "netdaq: gpu pipeline of %s: %s\n", r.q->name().c_str(), e.what());
    }
    while (gpu::Frame f = r.pipeline->next_frame()) ++r.frames_out;
  }
}

uint64_t drops_of(const QueueStats& s) noexcept {
  return s.total_drops() - s.drop(DropReason::tx_full);
}

}  // namespace

uint64_t TrafficResult::total_lost() const noexcept {
  uint64_t n = 0;
  for (auto& s : streams) n += s.lost;
  return n;
}
uint64_t TrafficResult::total_drops() const noexcept {
  uint64_t n = 0;
  for (auto& s : stats) n += drops_of(s);
  return n;
}
uint64_t TrafficResult::total_malformed() const noexcept {
  uint64_t n = 0;
  for (auto& s : streams) n += s.malformed;
  for (auto& r : rx) n += r.foreign;
  return n;
}

// Bytes one packet of this tx queue can carry (all its segments' buffers together).
uint64_t packet_room(const Config& cfg, const QueueConfig& q) {
  uint64_t room = 0;
  for (const auto& name : q.memory_regions)
    if (const auto* r = cfg.find_region(name)) room += r->buf_size;
  return room;
}

TrafficResult run_traffic(Session& session, const TrafficOptions& opt, const LiveCallback& live) {
  const auto txq = session.tx_queues();
  const auto rxq = session.rx_queues();
  for (auto* q : txq) {
    const uint64_t room = packet_room(session.config(), q->config());
    if (room < opt.payload_size)
      throw Error(Errc::invalid_config, "tx queue " + q->name() + ": payload size " + std::to_string(opt.payload_size) +
                                            " is larger than its buffers (" + std::to_string(room) + " bytes)");
  }
  if (!txq.empty() && opt.payload_size < kPayloadHeaderSize)
    throw Error(Errc::invalid_config, "payload size " + std::to_string(opt.payload_size) + " is below the " +
                                          std::to_string(kPayloadHeaderSize) + "-byte payload header");

  std::vector<std::unique_ptr<Sender>> senders;
  std::vector<std::unique_ptr<Receiver>> receivers;
  for (size_t i = 0; i < txq.size(); ++i) {
    auto s = std::make_unique<Sender>();
    s->q = txq[i];
    s->stream = static_cast<uint32_t>(i);
    s->count = i < opt.tx_counts.size() ? opt.tx_counts[i] : 0;
    s->cpu = i < opt.tx_cpu.size() ? opt.tx_cpu[i] : -1;
    senders.push_back(std::move(s));
  }
  for (size_t i = 0; i < rxq.size(); ++i) {
    auto r = std::make_unique<Receiver>();
    r->q = rxq[i];
    r->cpu = i < opt.rx_cpu.size() ? opt.rx_cpu[i] : -1;
    r->pipeline = i < opt.rx_pipelines.size() ? opt.rx_pipelines[i] : nullptr;
    const InterfaceConfig* iface = session.config().find_interface(rxq[i]->interface());
    r->count_only = iface && iface->engine == "dpdk" && iface->dpdk.raw_frames && !r->pipeline;
    receivers.push_back(std::move(r));
  }

  std::atomic<bool> tx_stop{false}, rx_stop{false};
  const uint64_t t0 = payload_clock_ns();
  const uint64_t deadline = opt.duration_s > 0 ? t0 + static_cast<uint64_t>(opt.duration_s * 1e9) : 0;
  std::vector<std::thread> threads;
  for (auto& r : receivers) threads.emplace_back([&, rp = r.get()] { receiver_loop(*rp, opt, rx_stop); });
  for (auto& s : senders) threads.emplace_back([&, sp = s.get()] { sender_loop(*sp, opt, deadline, tx_stop); });

  TrafficResult res;
  const uint64_t interval = uint64_t{std::max<uint32_t>(opt.stats_interval_ms, 10)} * 1'000'000;
  uint64_t next_tick = t0 + interval, last_tick = t0;
  uint64_t prev_rx_p = 0, prev_rx_b = 0, prev_tx_p = 0, prev_tx_b = 0;
  uint64_t drain_start = 0;
  uint64_t rx_expected_total = 0;
  for (auto c : opt.rx_expected) rx_expected_total += c;

  auto rx_unique = [&] {
    uint64_t u = 0;
    for (auto& r : receivers) u += r->pub_unique.load(std::memory_order_relaxed);
    return u;
  };
  auto rx_last = [&] {
    uint64_t t = 0;
    for (auto& r : receivers) t = std::max(t, r->pub_last_ns.load(std::memory_order_relaxed));
    return t;
  };

  for (;;) {
    const uint64_t now = payload_clock_ns();
    if (stop_requested() && !res.interrupted) {
      res.interrupted = true;
      tx_stop.store(true);
    }
    if (!senders.empty()) {
      const bool done = std::all_of(senders.begin(), senders.end(), [](auto& s) { return s->done.load(std::memory_order_acquire); });
      if (done && !drain_start) drain_start = now;
      if (drain_start) {
        if (receivers.empty()) break;
        uint64_t sent = 0;
        for (auto& s : senders) sent += s->sent;  // safe: done (acquire) above
        const uint64_t last_rx = rx_last();
        const bool quiet = now > last_rx + 20'000'000;  // no packet for 20 ms
        if (now - drain_start >= uint64_t{opt.drain_ms} * 1'000'000 || (rx_unique() >= sent && quiet)) break;
      }
    } else {
      if (res.interrupted) break;
      if (deadline && now >= deadline) break;
      if (rx_expected_total && rx_unique() >= rx_expected_total) break;
      const uint64_t last_rx = rx_last();
      if (opt.idle_timeout_s > 0 && last_rx && now > last_rx + static_cast<uint64_t>(opt.idle_timeout_s * 1e9)) break;
    }
    if (live && now >= next_tick) {
      LiveSample ls;
      ls.t = double(now - t0) / 1e9;
      const double dt = double(now - last_tick) / 1e9;
      uint64_t rxp = 0, rxb = 0, txp = 0, txb = 0;
      for (const auto& s : session.stats()) {
        (s.is_rx ? rxp : txp) += s.packets;
        (s.is_rx ? rxb : txb) += s.bytes;
        ls.drops += drops_of(s);
      }
      ls.rx_packets = rxp;
      ls.tx_packets = txp;
      ls.rx_pps = double(rxp - prev_rx_p) / dt;
      ls.rx_gbps = double(rxb - prev_rx_b) * 8 / dt / 1e9;
      ls.tx_pps = double(txp - prev_tx_p) / dt;
      ls.tx_gbps = double(txb - prev_tx_b) * 8 / dt / 1e9;
      prev_rx_p = rxp, prev_rx_b = rxb, prev_tx_p = txp, prev_tx_b = txb;
      for (auto& r : receivers) {
        ls.reordered += r->pub_reordered.load(std::memory_order_relaxed);
        ls.lost += r->pub_lost.load(std::memory_order_relaxed);
        ls.duplicates += r->pub_dups.load(std::memory_order_relaxed);
        ls.malformed += r->pub_malformed.load(std::memory_order_relaxed);
      }
      live(ls);
      last_tick = now;
      next_tick += interval;
      if (next_tick <= now) next_tick = now + interval;
    }
    sleep_us(2000);
  }
  tx_stop.store(true);
  rx_stop.store(true);
  for (auto& t : threads) t.join();
  res.elapsed_s = double(payload_clock_ns() - t0) / 1e9;
  res.stats = session.stats();
  res.flows = session.flow_stats();

  // Results. Expected count of stream i: what sender i sent (or rx_expected[i]).
  std::vector<bool> has_expected;
  std::vector<uint64_t> expected;
  for (auto& s : senders) {
    if (s->stream >= expected.size()) expected.resize(s->stream + 1), has_expected.resize(s->stream + 1);
    expected[s->stream] = s->sent;
    has_expected[s->stream] = true;
    TxResult t;
    t.queue = s->q->name();
    t.stream = s->stream;
    t.sent = s->sent;
    t.bytes = s->bytes;
    t.seconds = s->first_ns && s->last_ns > s->first_ns ? double(s->last_ns - s->first_ns) / 1e9 : 0;
    t.first_ns = s->first_ns;
    t.last_ns = s->last_ns;
    res.tx.push_back(std::move(t));
  }
  if (senders.empty()) {
    for (size_t i = 0; i < opt.rx_expected.size(); ++i) {
      if (i >= expected.size()) expected.resize(i + 1), has_expected.resize(i + 1);
      expected[i] = opt.rx_expected[i];
      has_expected[i] = true;
    }
  }
  std::vector<bool> seen(expected.size(), false);
  for (auto& r : receivers) {
    RxResult x;
    x.queue = r->q->name();
    x.packets = r->packets;
    x.bytes = r->bytes;
    x.seconds = r->last_ns > r->first_ns ? double(r->last_ns - r->first_ns) / 1e9 : 0;
    x.foreign = r->foreign;
    x.first_ns = r->first_ns;
    x.last_ns = r->last_ns;
    res.rx.push_back(x);
    if (r->pipeline) res.gpu.push_back(GpuResult{x.queue, r->pipeline->stats(), r->frames_out, x.seconds});
    for (uint32_t id = 0; id < r->streams.size(); ++id) {
      auto& ss = r->streams[id];
      if (!ss) continue;
      StreamResult sr;
      sr.rx_queue = x.queue;
      sr.stream = id;
      if (id < expected.size() && has_expected[id]) {
        sr.expected_known = true;
        sr.expected = expected[id];
        ss->tracker.finish(expected[id]);
        seen[id] = true;
      } else {
        ss->tracker.finish();
      }
      const auto& t = ss->tracker;
      sr.received = t.received();
      sr.unique = t.unique();
      sr.lost = t.lost();
      sr.duplicates = t.duplicates();
      sr.reordered = t.reordered();
      sr.malformed = t.malformed();
      sr.late = t.late();
      sr.latency = ss->latency;
      res.streams.push_back(std::move(sr));
    }
  }
  // Streams sent (or expected) that no receiver saw at all: every packet lost.
  if (!receivers.empty()) {
    for (uint32_t id = 0; id < expected.size(); ++id) {
      if (!has_expected[id] || seen[id]) continue;
      StreamResult sr;
      sr.rx_queue = "-";
      sr.stream = id;
      sr.expected_known = true;
      sr.expected = expected[id];
      sr.lost = expected[id];
      res.streams.push_back(std::move(sr));
    }
  }
  return res;
}

}  // namespace netdaq::cli
