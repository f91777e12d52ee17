#include "traffic_plan.h"

#include <algorithm>
#include <string>

#include "engine_traits.h"

namespace netdaq::cli {

namespace {

// Bytes one packet of this tx queue can carry (all its segments' buffers together).
uint64_t packet_room(const Config& cfg, const QueueConfig& q) {
  uint64_t room = 0;
  for (const auto& name : q.memory_regions)
    if (const auto* r = cfg.find_region(name)) room += r->buf_size;
  return room;
}

// Pre-flight: a payload fits every tx queue's buffers and holds at least its header.
void check_payload_fits(const Session& session, const std::vector<TxQueue*>& txq, uint32_t payload_size) {
  for (auto* q : txq) {
    const uint64_t room = packet_room(session.config(), q->config());
    if (room < payload_size)
      throw Error(Errc::invalid_config, "tx queue " + q->name() + ": payload size " + std::to_string(payload_size) +
                                            " is larger than its buffers (" + std::to_string(room) + " bytes)");
  }
  if (!txq.empty() && payload_size < kPayloadHeaderSize)
    throw Error(Errc::invalid_config, "payload size " + std::to_string(payload_size) + " is below the " +
                                          std::to_string(kPayloadHeaderSize) + "-byte payload header");
}

template <class T>
T nth_or(const std::vector<T>& v, size_t i, T otherwise) {
  return i < v.size() ? v[i] : otherwise;
}

}  // namespace

bool Workers::senders_done() const noexcept {
  return std::all_of(senders.begin(), senders.end(), [](auto& s) { return s->done.load(std::memory_order_acquire); });
}

uint64_t Workers::sent() const noexcept {
  uint64_t n = 0;
  for (auto& s : senders) n += s->sent;  // safe: done (acquire) was seen
  return n;
}

uint64_t Workers::rx_unique() const noexcept {
  uint64_t u = 0;
  for (auto& r : receivers) u += r->pub_unique.load(std::memory_order_relaxed);
  return u;
}

uint64_t Workers::rx_last_ns() const noexcept {
  uint64_t t = 0;
  for (auto& r : receivers) t = std::max(t, r->pub_last_ns.load(std::memory_order_relaxed));
  return t;
}

bool Workers::rx_finished() const noexcept {
  return !receivers.empty() && std::all_of(receivers.begin(), receivers.end(), [](auto& r) {
    return r->pub_finished.load(std::memory_order_acquire);
  });
}

Workers plan_traffic(Session& session, const TrafficOptions& opt) {
  const auto txq = session.tx_queues();
  const auto rxq = session.rx_queues();
  check_payload_fits(session, txq, opt.payload_size);
  Workers w;
  for (size_t i = 0; i < txq.size(); ++i) {
    auto s = std::make_unique<Sender>();
    s->q = txq[i];
    s->stream = static_cast<uint32_t>(i);  // sender i sends stream i
    s->count = nth_or<uint64_t>(opt.tx_counts, i, 0);
    s->cpu = nth_or(opt.tx_cpu, i, -1);
    w.senders.push_back(std::move(s));
  }
  for (size_t i = 0; i < rxq.size(); ++i) {
    auto r = std::make_unique<Receiver>();
    r->q = rxq[i];
    r->cpu = nth_or(opt.rx_cpu, i, -1);
    r->pipeline = nth_or<gpu::FramePipeline*>(opt.rx_pipelines, i, nullptr);
    r->rings = nth_or<gpu::XskFrameReceiver*>(opt.rx_rings, i, nullptr);
    if (const ReorderConfig* g = nth_or<const ReorderConfig*>(opt.rx_frames, i, nullptr); r->rings && g)
      r->ring_packet_bytes = g->payload_offset + g->payload_size;
    r->published = r->pipeline || r->rings ? nth_or<PublishedPipelineStats*>(opt.rx_published, i, nullptr) : nullptr;
    const InterfaceConfig* iface = session.config().find_interface(rxq[i]->interface());
    r->count_only = iface && counts_only(*iface) && !r->pipeline && !r->rings;
    w.receivers.push_back(std::move(r));
  }
  return w;
}

}  // namespace netdaq::cli
