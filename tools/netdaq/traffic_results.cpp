#include "traffic_results.h"

#include <optional>
#include <string>
#include <vector>

#include "netdaq/gpu_xsk.h"

namespace netdaq::cli {

namespace {

// Per stream id: the packets it should deliver (what sender i sent; rx only: rx_expected[i]),
// nullopt where nobody knows.
std::vector<std::optional<uint64_t>> expected_counts(const Workers& w, const TrafficOptions& opt) {
  std::vector<std::optional<uint64_t>> expected;
  for (auto& s : w.senders) {
    if (s->stream >= expected.size()) expected.resize(s->stream + 1);
    expected[s->stream] = s->sent;
  }
  if (w.senders.empty()) {
    if (opt.rx_expected.size() > expected.size()) expected.resize(opt.rx_expected.size());
    for (size_t i = 0; i < opt.rx_expected.size(); ++i) expected[i] = opt.rx_expected[i];
  }
  return expected;
}

double seconds_between(uint64_t first_ns, uint64_t last_ns) noexcept {
  return last_ns > first_ns ? double(last_ns - first_ns) / 1e9 : 0;
}

TxResult tx_result(const Sender& s) {
  TxResult t;
  t.queue = s.q->name();
  t.stream = s.stream;
  t.sent = s.sent;
  t.bytes = s.bytes;
  t.seconds = s.first_ns ? seconds_between(s.first_ns, s.last_ns) : 0;
  t.first_ns = s.first_ns;
  t.last_ns = s.last_ns;
  return t;
}

RxResult rx_result(const Receiver& r) {
  RxResult x;
  x.queue = r.q->name();
  x.packets = r.packets;
  x.bytes = r.bytes;
  if (r.rings) {  // the packets went by in the rings' owner: its count
    x.packets = r.rings->stats().packets_in;
    x.bytes = x.packets * r.ring_packet_bytes;
  }
  x.seconds = seconds_between(r.first_ns, r.last_ns);
  x.foreign = r.foreign;
  x.first_ns = r.first_ns;
  x.last_ns = r.last_ns;
  return x;
}

// Finishes the stream's tracker: with the expected count, packets never seen are lost.
StreamResult stream_result(const std::string& queue, uint32_t id, StreamState& ss, std::optional<uint64_t> expected) {
  StreamResult sr;
  sr.rx_queue = queue;
  sr.stream = id;
  if (expected) {
    sr.expected_known = true;
    sr.expected = *expected;
    ss.tracker.finish(*expected);
  } else {
    ss.tracker.finish();
  }
  const auto& t = ss.tracker;
  sr.received = t.received();
  sr.unique = t.unique();
  sr.lost = t.lost();
  sr.duplicates = t.duplicates();
  sr.reordered = t.reordered();
  sr.malformed = t.malformed();
  sr.late = t.late();
  sr.latency = ss.latency;
  return sr;
}

// The queue's own counters saw none of the packets its rings' owner took: the summary's and
// the JSON's rx row show them. Returns what the kernel dropped before the rings (fill ring
// empty, RX ring full).
uint64_t count_ring_packets(TrafficResult& res, const RxResult& x) {
  for (QueueStats& s : res.stats)
    if (s.is_rx && s.queue == x.queue) {
      s.packets += x.packets, s.bytes += x.bytes;
      return drops_except_tx_full(s);
    }
  return 0;
}

// A stream sent (or expected) that no receiver saw at all: every packet lost.
StreamResult unseen_stream(uint32_t id, uint64_t expected) {
  StreamResult sr;
  sr.rx_queue = "-";
  sr.stream = id;
  sr.expected_known = true;
  sr.expected = expected;
  sr.lost = expected;
  return sr;
}

}  // namespace

void collect_results(Workers& w, const TrafficOptions& opt, TrafficResult& res) {
  const auto expected = expected_counts(w, opt);
  for (auto& s : w.senders) res.tx.push_back(tx_result(*s));
  std::vector<bool> seen(expected.size(), false);
  bool all_rings = !w.receivers.empty(), any_rings = false;
  uint64_t taken = 0;  // by the rings' owners, or dropped by the kernel before them
  for (auto& r : w.receivers) {
    const RxResult x = rx_result(*r);
    res.rx.push_back(x);
    if (r->pipeline)
      res.gpu.push_back(GpuResult{x.queue, r->pipeline->stats(), r->frames_out, x.seconds, r->pipeline->last_malformed()});
    all_rings = all_rings && r->rings;
    any_rings = any_rings || r->rings;
    if (r->rings) {
      res.gpu.push_back(GpuResult{x.queue, r->rings->stats(), r->frames_out, x.seconds, "", true});
      taken += x.packets + count_ring_packets(res, x);
    }
    for (uint32_t id = 0; id < r->streams.size(); ++id) {
      if (!r->streams[id]) continue;
      const auto exp = id < expected.size() ? expected[id] : std::nullopt;
      if (exp) seen[id] = true;
      res.streams.push_back(stream_result(x.queue, id, *r->streams[id], exp));
    }
  }
  if (w.receivers.empty()) return;  // nothing received: no stream to call lost
  // Some receiver owns its rings: its streams went unchecked, so none is called unseen; with
  // every receiver one, what was sent and not taken or dropped before the rings is lost.
  if (any_rings) {
    uint64_t sent = 0;
    for (auto& e : expected) sent += e.value_or(0);
    if (all_rings) res.rings_lost = sent > taken ? sent - taken : 0;
    return;
  }
  for (uint32_t id = 0; id < expected.size(); ++id)
    if (expected[id] && !seen[id]) res.streams.push_back(unseen_stream(id, *expected[id]));
}

uint64_t TrafficResult::total_lost() const noexcept {
  uint64_t n = rings_lost;
  for (auto& s : streams) n += s.lost;
  for (auto& g : gpu)
    if (g.rings) n += g.stats.packets_missing + g.stats.late + g.stats.no_buffer;  // in no frame
  return n;
}

uint64_t TrafficResult::total_drops() const noexcept {
  uint64_t n = 0;
  for (auto& s : stats) n += drops_except_tx_full(s);
  return n;
}

double TrafficResult::seconds_of(const QueueStats& s) const noexcept {
  for (auto& x : rx)
    if (s.is_rx && x.queue == s.queue) return x.seconds;
  for (auto& x : tx)
    if (!s.is_rx && x.queue == s.queue) return x.seconds;
  return 0;
}

uint64_t TrafficResult::total_malformed() const noexcept {
  uint64_t n = 0;
  for (auto& s : streams) n += s.malformed;
  for (auto& r : rx) n += r.foreign;
  for (auto& g : gpu)
    if (g.rings) n += g.stats.malformed;
  return n;
}

}  // namespace netdaq::cli
