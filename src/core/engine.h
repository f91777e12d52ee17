// The one interface between the core and the engines. The core never includes an engine's
// headers; engines register a factory by name (see engine_registry.cpp).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "core/buffer_pool.h"
#include "core/counters.h"
#include "netdaq/burst.h"
#include "netdaq/config.h"
#include "netdaq/shared_rings.h"
#include "netdaq/stats.h"

namespace netdaq::detail {

// What the core hands an engine to open one queue. Pointers stay valid for the port's life.
struct QueueResources {
  const Config* config = nullptr;
  const InterfaceConfig* iface = nullptr;
  const QueueConfig* queue = nullptr;
  std::string name;                                  // "<iface>/rx<id>" or the queue's name
  std::array<BufferPool*, kMaxSegments> pools{};     // pool of each segment
  unsigned segments = 1;                             // 2 with header-data split
  QueueCounters* counters = nullptr;
};

// Fills packet i's segments from freshly allocated pool buffers (data, cap, buf; len = 0).
// Returns how many packets got all their segments; the rest of the buffers are returned.
uint32_t attach_buffers(const QueueResources& q, Packet* pkts, uint32_t n) noexcept;
// Returns the buffers of n packets to the queue's pools: one of each pool per packet with
// header-data split, else one per segment (a frame in two buffers of the one pool).
void return_buffers(const QueueResources& q, Packet* pkts, uint32_t n) noexcept;
// The sum of n packets' size(), for engines that do not count bytes while filling.
uint64_t packet_bytes(const Packet* pkts, uint32_t n) noexcept;
// Segment 0 of each packet starts head bytes further in (headers a TX engine writes there).
inline void skip_headroom(Packet* pkts, uint32_t n, uint32_t head) noexcept {
  for (uint32_t i = 0; i < n; ++i) {
    auto& f = fields(pkts[i]);
    f.data[0] += head;
    f.cap[0] -= head;
  }
}

// Packet p becomes one buffer (pool index idx at data, cap bytes of room, len of them filled)
// with no flow, immediate or timestamp: where a TX allocation or a one-buffer receive starts.
inline void one_buffer_packet(Packet& p, uint32_t idx, std::byte* data, uint32_t cap, uint32_t len = 0) noexcept {
  PacketFields& f = fields(p);
  f.nseg = 1;
  f.flow = 0;
  f.has_immediate = 0;
  f.timestamp_ns = 0;
  f.buf[0] = idx;
  f.data[0] = data;
  f.cap[0] = cap;
  f.len[0] = len;
}

class RxPort {
 public:
  virtual ~RxPort() = default;
  // Receives up to max packets into pkts[0..max): each gets its segments' data/len/cap/buf.
  // Non-blocking; never throws; counts its own drops and errors in q.counters (but not
  // delivered packets: the core does that). Returns the number of packets filled and adds
  // their bytes (sum of Packet::size()) to `bytes`: engines count them while filling, so the
  // core and the application need no second pass over the burst.
  virtual uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept = 0;
  // Called once on every packet slot the queue will pass to receive(), before the first
  // receive: an engine may set the fields that never change there instead of per packet.
  virtual void prepare(Packet* pkts, size_t n) noexcept { (void)pkts, (void)n; }
  // Returns received packets' buffers: pkts are slots receive() filled, in the order it filled
  // them (an engine may keep state per slot). Default: back to the queue's pools.
  virtual void release(Packet* pkts, uint32_t n) noexcept { return_buffers(resources(), pkts, n); }
  // A finite source (EngineCapabilities::finite_source) has ended: receive() returns no packet
  // again. Asked by the receiving thread after a receive(); may also be read from others.
  virtual bool finished() const noexcept { return false; }
  // Refreshes counters the OS keeps (e.g. kernel drops); called from the stats reader.
  virtual void refresh_counters() noexcept {}
  // Adds the engine's mode and raw counters to a stats snapshot (stats reader thread).
  virtual void add_details(QueueStats& s) const { (void)s; }
  virtual const QueueResources& resources() const noexcept = 0;
  // Engines whose rings the kernel shares (AF_XDP): hands them to another consumer and never
  // touches them again (receive() then returns 0). false: the engine cannot (the default).
  virtual bool hand_over_rings(HandedOverRings& out) noexcept { (void)out; return false; }
};

// What TxPort::transmit did with the packets at the front of pkts.
struct TxResult {
  uint32_t taken = 0;       // consumed from the front, in order: sent, or dropped and counted
  uint32_t sent = 0;        // of those, handed to the kernel or the NIC
  uint64_t sent_bytes = 0;  // their bytes (sum of Packet::size())
  // Every one of pkts[0, n) sent.
  static TxResult all_sent(const Packet* pkts, uint32_t n) noexcept { return {n, n, packet_bytes(pkts, n)}; }
};

class TxPort {
 public:
  virtual ~TxPort() = default;
  // Takes up to n packets (ownership of the taken ones passes to the port, which returns
  // their buffers when the hardware is done). Non-blocking; never throws. Packets it refuses
  // for now (ring or socket buffer full) stay with the caller, who retries; it may count
  // them as tx_full. A taken packet the port dropped (a send error that retrying would not
  // fix) has had its buffers returned and is counted by the port (tx_error): taken, not sent.
  virtual TxResult transmit(Packet* pkts, uint32_t n) noexcept = 0;
  // Reclaims completed buffers (engines with asynchronous completion).
  virtual void poll_completions() noexcept {}
  virtual void refresh_counters() noexcept {}
  virtual void add_details(QueueStats& s) const { (void)s; }
  // Bytes the engine writes in front of each packet's segment 0 (headers it adds); the
  // application's buffer starts after them.
  virtual uint32_t headroom() const noexcept { return 0; }
  // Buffers for TxQueue::allocate (up to n; fewer when the pool runs low), segment 0
  // starting headroom() bytes in, and back from bursts released unsent. Ports whose buffers
  // live in an allocator of their own (dpdk: mbufs for good over the region, as testpmd's)
  // override both.
  virtual uint32_t alloc_buffers(const QueueResources& q, Packet* pkts, uint32_t n) noexcept {
    n = attach_buffers(q, pkts, n);
    if (const uint32_t head = headroom()) skip_headroom(pkts, n, head);
    return n;
  }
  virtual void free_buffers(const QueueResources& q, Packet* pkts, uint32_t n) noexcept { return_buffers(q, pkts, n); }
  // Engines whose TX rings the kernel shares (AF_XDP): hands them, up to `buffers` pool
  // buffers and the headers for payloads of payload_bytes to another producer, and never
  // touches them again (transmit() and poll_completions() are not called after it). May throw
  // (allocation). false: the engine cannot (the default); `why` may say more.
  virtual bool hand_over_rings(HandedOverTxRings& out, uint32_t payload_bytes, uint32_t buffers, std::string& why) {
    (void)out, (void)payload_bytes, (void)buffers, (void)why;
    return false;
  }
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::unique_ptr<RxPort> open_rx(const QueueResources& q) = 0;  // throws Error
  virtual std::unique_ptr<TxPort> open_tx(const QueueResources& q) = 0;
  // Called once every queue of the interface is open, before workers start (e.g. to start
  // a device whose queues must all be set up first). Throws Error.
  virtual void start() {}
  // Called before the ports are destroyed: unblock anything that waits.
  virtual void stop() noexcept {}
  // Runtime flow steering (engines that program the NIC). Throw Error(unsupported) by default.
  virtual void add_flow(const FlowConfig& flow);
  virtual void remove_flow(uint32_t id);
  // Counters of the interface's flows (engines that classify packets).
  virtual std::vector<FlowStats> flow_stats() const { return {}; }
};

using EngineFactory = std::unique_ptr<Engine> (*)(const Config& config, const InterfaceConfig& iface);

void register_engine(const std::string& name, EngineFactory factory);
EngineFactory find_engine(const std::string& name);  // nullptr if not built in
std::vector<std::string> registered_engines();

}  // namespace netdaq::detail
