// The config of `netdaq bench`'s session: interfaces "bench-rx" and "bench-tx" (socket engine
// for udp and tcp, rdma engine for rdma) with --queues queues each, a memory region per queue
// sized for the batch (and, rdma, for the buffers the device holds). --ping-pong adds the way
// back, "bench-echo-rx" and "bench-echo-tx". Receivers come first: they listen before a
// sender connects.
#include <algorithm>

#include "bench_pingpong.h"
#include "bench_plan.h"
#include "netdaq/engines/rdma.h"
#include "run_block.h"

namespace netdaq::cli {

namespace {

std::string with_scheme(const std::string& a, const std::string& proto) {
  if (a.find("://") != std::string::npos) return a;
  return proto + "://" + a;
}

// Pools: the buffers cycle through a FIFO, so a pool no larger than the bursts in flight
// keeps them warm in cache (the copy into a buffer, the check of it and the next receive
// into it hit L2). Direct mode holds one burst in the application and one being received;
// worker mode holds a ring of bursts, deep enough to ride out the consumer thread losing
// its CPU for a while (64 bursts). Pools get 2x what the queue holds (worker: one spare
// burst).
struct QueueLayout {
  uint32_t buf_size;  // one payload, rounded up to a cache line
  uint32_t batch;
  PollMode rx_mode;
  uint32_t rx_depth, tx_depth;
  uint32_t rx_bufs, tx_bufs;
};

QueueLayout queue_layout(const BenchOptions& o) {
  QueueLayout l;
  l.buf_size = std::max<uint32_t>(64, (o.size + 63) / 64 * 64);
  l.batch = o.batch;
  l.rx_mode = o.mode == "worker" ? PollMode::worker : PollMode::direct;
  l.rx_depth = l.rx_mode == PollMode::worker ? 64 : 2;
  l.tx_depth = 2;
  l.rx_bufs = o.num_bufs ? o.num_bufs
                         : (l.rx_mode == PollMode::worker ? (l.rx_depth + 2) * l.batch : 2 * (l.rx_depth + 1) * l.batch);
  l.tx_bufs = o.num_bufs ? o.num_bufs : 2 * l.tx_depth * l.batch;
  return l;
}

// One region per queue, so each queue's buffers stay warm in its own pool.
void add_queue(Config& c, std::vector<QueueConfig>& queues, const QueueLayout& l, const std::string& region,
               uint32_t num_bufs, uint32_t depth, PollMode mode, int cpu) {
  MemoryRegionConfig r;
  r.name = region;
  r.buf_size = l.buf_size;
  r.num_bufs = num_bufs;
  c.memory_regions.push_back(r);
  QueueConfig q;
  q.id = static_cast<uint16_t>(queues.size());
  q.mode = mode;
  q.batch_size = l.batch;
  q.timeout_us = 100;
  q.ring_depth = depth;
  q.memory_regions = {region};
  if (mode == PollMode::worker) q.cpu_core = cpu;
  queues.push_back(q);
}

SocketOptions socket_options(const BenchOptions& o) {
  SocketOptions so;
  so.gro = !o.no_gro;
  so.gso = !o.no_gso;
  so.rcvbuf = o.rcvbuf;
  so.sndbuf = o.sndbuf;
  return so;
}

// --protocol rdma is the rdma engine's (rdma_cm); udp and tcp the socket engine's.
bool rdma(const BenchOptions& o) { return o.protocol == kRdmaEngine; }

RdmaOptions rdma_options(const BenchOptions& o) {
  RdmaOptions r;
  r.op = o.rdma_op == "write_imm" ? RdmaOp::write_imm : RdmaOp::send;
  r.recv_depth = r.send_depth = o.rdma_depth;
  r.signal_every = std::min<uint32_t>(r.signal_every, o.rdma_depth);
  return r;
}

// One end's receiving interface: NAME listening on ADDRESS, its regions PREFIX0, PREFIX1...
InterfaceConfig rx_interface(Config& c, const BenchOptions& o, const QueueLayout& l, const std::string& name,
                             const std::string& address, const std::string& prefix) {
  InterfaceConfig rx;
  rx.name = name;
  rx.engine = rdma(o) ? kRdmaEngine : kSocketEngine;
  rx.address = with_scheme(address, o.protocol);
  if (rdma(o)) rx.options.get<RdmaOptions>() = rdma_options(o);
  else rx.options.get<SocketOptions>() = socket_options(o);
  const uint32_t lent = rdma(o) ? o.rdma_depth : 0;  // posted receives / the write_imm ring
  for (uint32_t i = 0; i < o.queues; ++i)
    add_queue(c, rx.rx.queues, l, prefix + std::to_string(i), l.rx_bufs + lent, l.rx_depth, l.rx_mode,
              i < o.rx_cpu.size() ? o.rx_cpu[i] : -1);
  return rx;
}

// One end's sending interface: NAME sending to DESTINATION (rdma: from the device of SOURCE).
InterfaceConfig tx_interface(Config& c, const BenchOptions& o, const QueueLayout& l, const std::string& name,
                             const std::string& destination, const std::string& source, const std::string& prefix) {
  InterfaceConfig tx;
  tx.name = name;
  tx.engine = rdma(o) ? kRdmaEngine : kSocketEngine;
  tx.tx.destination = with_scheme(destination, o.protocol);
  tx.tx.rate_mbps = o.rate_mbps / o.queues;  // the pacer is per queue
  tx.tx.rate_pps = o.rate_pps / o.queues;
  if (rdma(o)) {
    tx.options.get<RdmaOptions>() = rdma_options(o);
    if (!source.empty()) tx.address = with_scheme(source, o.protocol);
  } else {
    tx.options.get<SocketOptions>() = socket_options(o);
  }
  const uint32_t lent = rdma(o) ? o.rdma_depth : 0;  // sends in flight
  for (uint32_t i = 0; i < o.queues; ++i)
    add_queue(c, tx.tx.queues, l, prefix + std::to_string(i), l.tx_bufs + lent, l.tx_depth, PollMode::direct, -1);
  return tx;
}

}  // namespace

Config bench_config(const BenchOptions& o) {
  Config c;
  c.source = "<netdaq bench>";
  c.log.level = "warn";
  run_block(c).tx_payload_size = o.size;
  const QueueLayout l = queue_layout(o);
  const std::string destination = o.destination.empty() ? o.address : o.destination;
  if (o.has_rx()) c.interfaces.push_back(rx_interface(c, o, l, "bench-rx", o.address, "rx"));
  // --ping-pong: B (bench-rx) sends each message back from its own address (rdma: its device)
  if (o.ping_pong) c.interfaces.push_back(rx_interface(c, o, l, kEchoRx, o.echo_address, "echo-rx"));
  if (o.has_tx()) c.interfaces.push_back(tx_interface(c, o, l, "bench-tx", destination, o.source, "tx"));
  if (o.ping_pong)
    c.interfaces.push_back(tx_interface(c, o, l, kEchoTx, o.echo_destination, host_of(o.address), "echo-tx"));
  return c;
}

}  // namespace netdaq::cli
