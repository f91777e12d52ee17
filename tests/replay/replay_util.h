// Shared pieces of the replay tests (pcap engine, `netdaq replay`): capture files written
// byte by byte (pcap with nanosecond timestamps, pcapng, records cut short, truncated files),
// configs of the pcap engine, and a drain that polls a queue until its file has ended.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "../integration/test_util.h"
#include "netdaq/netdaq.h"

namespace ndqtest {

struct Record {
  uint64_t ts_ns = 0;
  Bytes data;             // what the file holds (caplen bytes)
  uint32_t wire_len = 0;  // 0: data.size()
};

// An Ethernet/IPv4 (or IPv6) UDP frame to dst:dport (127.0.0.1 / ::1 by default) around payload.
Bytes udp_frame(const Bytes& payload, uint16_t dport, bool ipv6 = false, uint32_t dst_ip4 = 0x7f000001);
// An ARP request frame (not IP): malformed for deliver: payloads.
Bytes arp_frame();
// A netdaq payload (include/netdaq/payload.h) of `size` bytes: what `netdaq run` sends.
Bytes netdaq_payload(uint32_t stream, uint64_t seq, size_t size, uint64_t send_ns = 1);

Bytes pcap_bytes(const std::vector<Record>& records, bool nanosecond = true);
Bytes pcapng_bytes(const std::vector<Record>& records);  // if_tsresol: nanoseconds
void write_pcap(const std::string& path, const std::vector<Record>& records);
void write_pcapng(const std::string& path, const std::vector<Record>& records);

// The UDP payloads of every record of a capture, in file order (libpcap; *err on failure).
std::vector<Bytes> udp_payloads_of(const std::string& path, std::string* err);

// Interface "replay" of the pcap engine on `file`: one rx queue (id 0).
struct PcapIface {
  std::string file;
  std::string address;  // optional filter, udp://IP:PORT
  netdaq::PcapOptions pcap;
  netdaq::PollMode mode = netdaq::PollMode::direct;
  uint32_t batch = 32;
  uint32_t buf_size = 2048;
  uint32_t num_bufs = 1024;
  std::vector<netdaq::FlowConfig> flows;
  netdaq::Config build() const;
};

// What a drained queue gave: every packet's bytes (and frame, timestamp), in order.
struct Drained {
  std::vector<Bytes> payloads;
  std::vector<Bytes> frames;
  std::vector<uint64_t> timestamps;
  netdaq::QueueStats stats;
  bool finished = false;  // the queue said finished() before the timeout
  double seconds = 0;     // first poll to finished
};
// Polls q until finished() (or timeout), keeping every packet.
Drained drain(netdaq::RxQueue& q, std::chrono::milliseconds timeout = std::chrono::seconds(20));

// The "records" engine counter of a pcap queue (every record read, every pass).
uint64_t records_read(const netdaq::QueueStats& s);

}  // namespace ndqtest

namespace ndqtest {

class NetnsLab;

// Real veth traffic recorded with `netdaq capture` (afxdp engine, namespace A): a socket-engine
// session in namespace B sends `payloads` (paced at pps) to A's IPv4 address and `port`.
// Returns the capture's output; fails the calling test (ADD_FAILURE) when a step fails.
// Needs root and the afxdp engine (NDQ_REQUIRE_AFXDP first).
struct Captured {
  bool ok = false;
  std::string output;  // what netdaq capture printed
};
Captured capture_stream(NetnsLab& lab, uint16_t port, const std::vector<Bytes>& payloads, const std::string& pcap,
                        double pps = 20000);

}  // namespace ndqtest
