// Real traffic peers for integration tests and benchmarks: programs nobody here wrote
// (dpdk-testpmd, tcpreplay) run inside a NetnsLab namespace, bounded in packets and time,
// and report exactly what they sent or received; plus a pcap writer for tcpreplay.
//
//   NetnsLab lab;
//   TestpmdTxOptions o;                        // testpmd txonly, af_packet PMD on b's veth
//   o.ns = lab.b().ns; o.veth = lab.b().veth;
//   o.flow = lab_flow(lab, lab.b(), lab.a(), 9000, port);
//   o.payload_size = 64; o.count = 20000;
//   PeerReport r = testpmd_txonly_af_packet(o);  // r.packets: what testpmd says it sent
//
// Every peer runs as a child process (nsenter --net, no shell) with its output captured; it
// is stopped and waited for before a helper returns, also when the helper throws. DPDK's
// runtime directory (/var/run/dpdk/<prefix>) is removed after each testpmd run.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "netns_lab.h"
#include "peer_process.h"
#include "test_util.h"

namespace ndqtest {

// One IPv4/UDP flow: the addresses written into every frame.
struct UdpFlow {
  std::string src_mac, dst_mac;  // "aa:bb:cc:dd:ee:ff"
  std::string src_ip, dst_ip;    // IPv4 dotted quad
  uint16_t src_port = 9000, dst_port = 9000;
};

// Ethernet (14) + IPv4 (20) + UDP (8) header bytes in front of a UDP payload.
inline constexpr size_t kUdpFrameOverhead = 42;

// The flow from lab side `from` to side `to`: their veth MACs (NetnsLab::mac) and IPv4
// addresses.
UdpFlow lab_flow(const NetnsLab& lab, const NetnsLab::Side& from, const NetnsLab::Side& to, uint16_t src_port,
                 uint16_t dst_port);

// The k-th CPU this process may run on (modulo their number): CPU choices that hold on
// machines with fewer CPUs or under a restricted affinity (taskset, cgroups).
unsigned allowed_cpu(unsigned k);

// What a peer did.
struct PeerReport {
  bool ok = false;        // it ran, exited cleanly and its final counters were read
  uint64_t packets = 0;   // sent (TX peers) / received (RX peers)
  uint64_t dropped = 0;   // TX: testpmd TX-dropped, tcpreplay failed packets;
                          // RX: testpmd RX-dropped (imissed) + RX-nombufs
  uint64_t errors = 0;    // RX-error / TX errors the peer reports
  double seconds = 0;     // how long it sent / received (see each helper)
  std::string error;      // why !ok
  std::string command;    // the command line
  std::string output;     // its stdout + stderr
  double pps() const { return seconds > 0 ? static_cast<double>(packets) / seconds : 0; }
};
// "command, error, counts" and the output's tail, for failure messages.
std::string describe(const PeerReport& r);

// ---- dpdk-testpmd over the af_packet PMD: a txonly sender ----
struct TestpmdTxOptions {
  std::string ns, veth;      // runs in ns on veth (af_packet PMD); its MAC is the source MAC
  UdpFlow flow;              // dst_mac, IPs and ports (flow.src_mac is ignored)
  size_t payload_size = 64;  // UDP payload bytes, 0..1472 (frames of 42 + payload_size bytes)
  uint64_t count = 0;        // > 0: send exactly this many, then exit
  std::chrono::milliseconds duration{0};     // count == 0: send at full speed this long
  std::chrono::milliseconds timeout{30000};  // bound on the whole run (startup included)
  // testpmd's main and forwarding lcores run on the main_cpu-th and fwd_cpu-th CPU this
  // process may use (modulo their number; on 2 CPUs: CPUs 0 and 1).
  unsigned main_cpu = 0, fwd_cpu = 1;
};
// packets = testpmd's TX-packets (frames the PMD queued to the kernel), dropped = its
// TX-dropped (frames the PMD refused). count mode: seconds is the wall time of the whole
// process (startup included; use duration mode for rates); duration mode: the time
// forwarding ran. Throws std::invalid_argument on bad options.
PeerReport testpmd_txonly_af_packet(const TestpmdTxOptions& o);

// ---- dpdk-testpmd over the af_xdp PMD: an rxonly receiver on queue 0 of a veth ----
// Counts every frame arriving on the interface (ARP and IPv6 neighbour/router messages of
// the peer's kernel too). libxdp loads its program without the dispatcher ("No bpffs found"
// warning: nsenter keeps the host's /sys, which has no bpffs here); that is harmless.
class TestpmdRxAfXdp {
 public:
  // CPUs as in TestpmdTxOptions; the defaults are the other way round, so that a sender
  // with default CPUs forwards on the other CPU.
  TestpmdRxAfXdp(const std::string& ns, const std::string& veth, unsigned main_cpu = 1, unsigned fwd_cpu = 0);
  ~TestpmdRxAfXdp();
  TestpmdRxAfXdp(const TestpmdRxAfXdp&) = delete;
  TestpmdRxAfXdp& operator=(const TestpmdRxAfXdp&) = delete;
  // True once it forwards (XDP program attached, socket bound): start senders after this.
  bool wait_ready(std::chrono::milliseconds timeout = std::chrono::milliseconds(15000));
  // Stops it and returns RX-packets, RX-dropped (+ RX-nombufs), RX-error since it was
  // ready; seconds = ready to stop. Idempotent (later calls return the same report).
  PeerReport stop();

 private:
  std::string prefix_;
  std::unique_ptr<PeerProcess> proc_;
  std::chrono::steady_clock::time_point ready_at_{};
  bool ready_ = false, stopped_ = false;
  PeerReport report_;
};
// Starts it, waits until ready, receives for `duration`, stops.
PeerReport testpmd_rxonly_af_xdp(const std::string& ns, const std::string& veth, std::chrono::milliseconds duration);

// ---- tcpreplay ----
struct TcpreplayOptions {
  std::string ns, veth, pcap;  // replays pcap out of veth, in namespace ns
  uint64_t pps = 0;            // packets per second; 0: --topspeed
  std::chrono::milliseconds timeout{30000};
};
// packets = tcpreplay's "Actual: N packets", dropped = its "Failed packets", seconds = its
// own send time ("sent in S seconds").
PeerReport tcpreplay(const TcpreplayOptions& o);

// A kernel UDP socket bound to side.ip4:port in a lab namespace (a receive buffer past
// rmem_max, as root), read by its own thread into memory: an independent receiver.
class UdpSink {
 public:
  UdpSink(NetnsLab& lab, const NetnsLab::Side& side, uint16_t port);
  ~UdpSink();
  UdpSink(const UdpSink&) = delete;
  UdpSink& operator=(const UdpSink&) = delete;
  // Waits until `count` datagrams arrived or `timeout` passed, then `settle` more for
  // extras; stops reading and returns them in arrival order.
  std::vector<Bytes> finish(size_t count, std::chrono::milliseconds timeout,
                            std::chrono::milliseconds settle = std::chrono::milliseconds(100));
  // Datagrams received so far.
  size_t received();

 private:
  void loop();
  void stop();

  Socket sock_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<Bytes> got_;
};

// ---- pcap files ----
// One Ethernet/IPv4/UDP frame of flow carrying payload: IPv4 header checksum computed, UDP
// checksum 0 (none), DF set, TTL 64, IP id ip_id. Throws std::invalid_argument on bad
// addresses or a payload over 65,507 bytes.
Bytes udp_frame(const UdpFlow& flow, uint16_t ip_id, const Bytes& payload);

// payload(seq, size): the UDP payload of packet seq (0, 1, ...), exactly size bytes.
using PayloadFn = std::function<Bytes(uint64_t seq, size_t size)>;
// Writes count frames of flow (DLT_EN10MB, microsecond timestamps 1 µs apart) with
// payload_size-byte payloads from payload (default make_payload: seq in the first 8 bytes).
// Throws std::runtime_error (libpcap errors, a payload of the wrong size).
void write_udp_pcap(const std::string& path, const UdpFlow& flow, uint64_t count, size_t payload_size,
                    const PayloadFn& payload = make_payload);

}  // namespace ndqtest
