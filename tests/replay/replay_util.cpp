#include "replay_util.h"

#include <pcap/pcap.h>

#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace ndqtest {

namespace {

void put16be(Bytes& b, uint16_t v) {
  b.push_back(std::byte(v >> 8));
  b.push_back(std::byte(v & 0xff));
}
void put32be(Bytes& b, uint32_t v) {
  put16be(b, uint16_t(v >> 16));
  put16be(b, uint16_t(v));
}
template <class T>
void put_le(Bytes& b, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) b.push_back(std::byte((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
}
void append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

}  // namespace

Bytes udp_frame(const Bytes& payload, uint16_t dport, bool ipv6, uint32_t dst_ip4) {
  Bytes f(12, std::byte{0});
  f[0] = std::byte{0x02};
  f[6] = std::byte{0x02};
  f[11] = std::byte{0x01};
  put16be(f, ipv6 ? 0x86dd : 0x0800);
  Bytes udp;
  put16be(udp, 40000);
  put16be(udp, dport);
  put16be(udp, uint16_t(8 + payload.size()));
  put16be(udp, 0);
  append(udp, payload);
  if (ipv6) {
    put32be(f, 6u << 28);
    put16be(f, uint16_t(udp.size()));
    f.push_back(std::byte{17});
    f.push_back(std::byte{64});
    for (int k = 0; k < 2; ++k) {
      for (int i = 0; i < 15; ++i) f.push_back(std::byte{0});
      f.push_back(std::byte{1});
    }
  } else {
    f.push_back(std::byte{0x45});
    f.push_back(std::byte{0});
    put16be(f, uint16_t(20 + udp.size()));
    put16be(f, 0);
    put16be(f, 0x4000);
    f.push_back(std::byte{64});
    f.push_back(std::byte{17});
    put16be(f, 0);
    put32be(f, 0x7f000001);
    put32be(f, dst_ip4);
  }
  append(f, udp);
  return f;
}

Bytes arp_frame() {
  Bytes f(12, std::byte{0xff});
  put16be(f, 0x0806);
  f.resize(f.size() + 28, std::byte{0});
  return f;
}

Bytes netdaq_payload(uint32_t stream, uint64_t seq, size_t size, uint64_t send_ns) {
  Bytes b(size);
  if (!netdaq::write_payload(b, stream, seq, send_ns)) throw std::runtime_error("payload too short");
  return b;
}

Bytes pcap_bytes(const std::vector<Record>& records, bool nanosecond) {
  Bytes b;
  put_le<uint32_t>(b, nanosecond ? 0xA1B23C4D : 0xA1B2C3D4);
  put_le<uint16_t>(b, 2);
  put_le<uint16_t>(b, 4);
  put_le<uint32_t>(b, 0);
  put_le<uint32_t>(b, 0);
  put_le<uint32_t>(b, 262144);
  put_le<uint32_t>(b, 1);  // Ethernet
  for (const auto& r : records) {
    put_le<uint32_t>(b, uint32_t(r.ts_ns / 1'000'000'000));
    const uint64_t frac = r.ts_ns % 1'000'000'000;
    put_le<uint32_t>(b, uint32_t(nanosecond ? frac : frac / 1000));
    put_le<uint32_t>(b, uint32_t(r.data.size()));
    put_le<uint32_t>(b, r.wire_len ? r.wire_len : uint32_t(r.data.size()));
    append(b, r.data);
  }
  return b;
}

Bytes pcapng_bytes(const std::vector<Record>& records) {
  Bytes out;
  const auto block = [&out](uint32_t type, Bytes body) {
    body.resize((body.size() + 3) & ~size_t{3}, std::byte{0});
    const uint32_t n = uint32_t(12 + body.size());
    put_le<uint32_t>(out, type);
    put_le<uint32_t>(out, n);
    append(out, body);
    put_le<uint32_t>(out, n);
  };
  Bytes shb;
  put_le<uint32_t>(shb, 0x1A2B3C4D);
  put_le<uint16_t>(shb, 1);
  put_le<uint16_t>(shb, 0);
  put_le<uint64_t>(shb, ~uint64_t{0});
  block(0x0A0D0D0A, shb);
  Bytes idb;
  put_le<uint16_t>(idb, 1);  // Ethernet
  put_le<uint16_t>(idb, 0);
  put_le<uint32_t>(idb, 262144);
  put_le<uint16_t>(idb, 9);  // if_tsresol
  put_le<uint16_t>(idb, 1);
  idb.push_back(std::byte{9});  // 10^-9
  idb.resize(idb.size() + 3, std::byte{0});
  put_le<uint32_t>(idb, 0);  // opt_endofopt
  block(1, idb);
  for (const auto& r : records) {
    Bytes epb;
    put_le<uint32_t>(epb, 0);
    put_le<uint32_t>(epb, uint32_t(r.ts_ns >> 32));
    put_le<uint32_t>(epb, uint32_t(r.ts_ns));
    put_le<uint32_t>(epb, uint32_t(r.data.size()));
    put_le<uint32_t>(epb, r.wire_len ? r.wire_len : uint32_t(r.data.size()));
    append(epb, r.data);
    block(6, epb);
  }
  return out;
}

void write_pcap(const std::string& path, const std::vector<Record>& records) { write_file(path, pcap_bytes(records)); }
void write_pcapng(const std::string& path, const std::vector<Record>& records) {
  write_file(path, pcapng_bytes(records));
}

std::vector<Bytes> udp_payloads_of(const std::string& path, std::string* err) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline(path.c_str(), errbuf);
  if (!p) {
    *err = errbuf;
    return {};
  }
  std::vector<Bytes> out;
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  int rc;
  while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
    const auto* f = reinterpret_cast<const std::byte*>(data);
    // Ethernet (no VLAN) + IPv4 (IHL) / IPv6 + UDP: enough for the frames these tests make
    if (h->caplen < 14) continue;
    size_t off = 14;
    const bool v6 = uint8_t(f[12]) == 0x86 && uint8_t(f[13]) == 0xdd;
    off += v6 ? 40 : (uint8_t(f[14]) & 0x0f) * 4u;
    if (off + 8 > h->caplen) continue;
    const size_t len = (size_t(uint8_t(f[off + 4])) << 8 | uint8_t(f[off + 5])) - 8;
    if (off + 8 + len > h->caplen) continue;
    out.emplace_back(f + off + 8, f + off + 8 + len);
  }
  if (rc == PCAP_ERROR) *err = pcap_geterr(p);
  pcap_close(p);
  return out;
}

netdaq::Config PcapIface::build() const {
  netdaq::Config c;
  c.memory_regions.push_back({"bufs", netdaq::MemoryKind::host, buf_size, num_bufs});
  netdaq::InterfaceConfig i;
  i.name = "replay";
  i.engine = netdaq::kPcapEngine;
  i.address = address;
  netdaq::QueueConfig q;
  q.id = 0;
  q.mode = mode;
  q.batch_size = batch;
  q.ring_depth = 16;
  q.timeout_us = 200;
  q.memory_regions = {"bufs"};
  i.rx.queues.push_back(q);
  i.rx.flows = flows;
  netdaq::PcapOptions& o = i.options.get<netdaq::PcapOptions>();
  o = pcap;
  o.file = file;
  c.interfaces.push_back(std::move(i));
  c.log.level = "warn";
  return c;
}

Drained drain(netdaq::RxQueue& q, std::chrono::milliseconds timeout) {
  Drained d;
  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline = t0 + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    netdaq::RxBurst b = q.poll();
    if (!b) {
      if (q.finished()) {
        d.finished = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    for (const auto& p : b) {
      d.payloads.push_back(bytes_of(p));
      const auto fr = p.frame();
      d.frames.emplace_back(fr.begin(), fr.end());
      d.timestamps.push_back(p.timestamp_ns());
    }
  }
  d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  d.stats = q.stats();
  return d;
}

uint64_t records_read(const netdaq::QueueStats& s) {
  for (const auto& [name, value] : s.engine_counters)
    if (name == "records") return value;
  ADD_FAILURE() << "no engine counter 'records' in " << describe(s);
  return 0;
}

}  // namespace ndqtest

#include "afxdp_util.h"
#include "netns_lab.h"
#include "peers.h"
#include "test_paths.h"

namespace ndqtest {

Captured capture_stream(NetnsLab& lab, uint16_t port, const std::vector<Bytes>& payloads, const std::string& pcap,
                        double pps) {
  Captured c;
  TempFile cfg;
  std::ofstream(cfg.path)
      << "memory_regions:\n  - {name: umem, kind: host, buf_size: 2048, num_bufs: 8192}\n"
         "interfaces:\n  - name: cap\n    engine: afxdp\n    address: " << lab.a().veth
      << "\n    rx:\n      queues:\n        - {id: 0, batch_size: 64, ring_depth: 16, memory_regions: [umem]}\n"
         "      flows:\n        - {id: 1, queue: 0, match: {udp_dst: " << port << "}}\nlog:\n  level: warn\n";
  PeerProcess cap(lab.a().ns, {NETDAQ_CLI, "capture", cfg.path, "-o", pcap, "-n", std::to_string(payloads.size()),
                               "-d", "40"});
  if (!cap.wait_for_output("Ctrl-C stops", std::chrono::seconds(15))) {
    ADD_FAILURE() << cap.command() << "\n" << cap.output();
    return c;
  }
  Iface ts;
  ts.destination = "udp://" + lab.a().ip4 + ":" + std::to_string(port);
  ts.tx_queues = 1;
  ts.rate_pps = pps;
  auto tx = lab.run_in(lab.b().ns, [&] { return std::make_unique<netdaq::Session>(ts.build()); });
  const size_t sent = send_payloads(tx->tx_queue("if0"), payloads, std::chrono::seconds(30));
  EXPECT_EQ(sent, payloads.size());
  const int status = cap.wait(std::chrono::seconds(20));
  c.output = cap.output();
  if (status != 0) {
    ADD_FAILURE() << cap.command() << " exited " << status << "\n" << c.output;
    return c;
  }
  c.ok = true;
  return c;
}

}  // namespace ndqtest
