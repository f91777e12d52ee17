// `netdaq bench`, stage 1, the plan: its options checked and completed (batch, thread CPUs),
// the config of the session it opens (bench_config.cpp) and the traffic options.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "netdaq/netdaq.h"
#include "traffic.h"

namespace netdaq::cli {

struct BenchOptions {
  std::string protocol = "udp";
  uint32_t size = 1472;
  std::optional<double> duration;
  uint64_t count = 0;
  double rate_mbps = 0, rate_pps = 0;
  uint32_t queues = 1;
  std::string address = "127.0.0.1:47000";
  std::string destination;
  std::string source;            // rdma: the sender's local IP (picks its device)
  std::string rdma_op = "send";  // rdma: send or write_imm
  uint32_t rdma_depth = 256;     // rdma: receives posted / sends in flight per queue
  bool rx_only = false, tx_only = false;
  bool busy_poll = false;  // threads never sleep when idle (latency)
  std::string mode = "direct";
  uint32_t batch = 0;  // 0: from the size (a burst of at most 1 MiB, 16..256 packets)
  bool json = false;
  bool quiet = false;
  bool no_verify = false;
  double idle_timeout = 2;
  uint32_t drain_ms = 500;
  uint32_t rcvbuf = 64u << 20, sndbuf = 8u << 20;
  bool no_gso = false, no_gro = false;
  std::vector<int> tx_cpu, rx_cpu;
  bool no_pin = false;
  uint32_t num_bufs = 0;
  // --ping-pong (bench_pingpong.h): round trip / 2, as ib_send_lat; a second pair of
  // interfaces carries each message back
  bool ping_pong = false;
  std::string echo_address;      // where the way back's receiver listens (default: port + 1)
  std::string echo_destination;  // where the way back's sender sends (default: echo_address)
  double reply_timeout = 1;      // seconds each way of a message may take before it is lost

  bool has_rx() const noexcept { return !tx_only; }
  bool has_tx() const noexcept { return !rx_only; }
};

// False (and why, on stderr) when the options contradict each other.
bool check_bench_options(const BenchOptions& o);
// Fills in what the options left to the bench: the queue count, the batch, the thread CPUs,
// and for --ping-pong the count and the way back's addresses.
void complete_bench_options(BenchOptions& o);
// The session's config: an interface for rx and one for tx, socket or rdma (bench_config.cpp).
Config bench_config(const BenchOptions& o);
TrafficOptions bench_traffic_options(const BenchOptions& o);

// "udp://10.0.0.2:47000" -> "udp://10.0.0.2" and 47000; false without a port.
bool split_port(const std::string& address, std::string* host, uint32_t* port);
// The host of an address without its scheme and port: "rdma://10.77.0.2:18800" -> "10.77.0.2".
std::string host_of(const std::string& address);

}  // namespace netdaq::cli
