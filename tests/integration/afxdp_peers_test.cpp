// Real peers into the afxdp engine, counted exactly: dpdk-testpmd's txonly sender (af_packet
// PMD in namespace B) into netdaq afxdp RX in A, and tcpreplay of a pcap that `netdaq capture`
// (the CLI, afxdp) wrote from traffic netdaq's socket engine sent. Every packet is checked
// (frame size, UDP destination port, flow id, payload bytes), and the engine's drop counters
// must stay at zero. With CI=true a missing tool or privilege fails instead of skipping.
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <future>
#include <memory>
#include <span>
#include <thread>

#include "afxdp_util.h"
#include "peers.h"
#include "test_paths.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

std::string mac_text(std::span<const std::byte> b, size_t at) {
  char s[18];
  std::snprintf(s, sizeof s, "%02x:%02x:%02x:%02x:%02x:%02x", unsigned(b[at]), unsigned(b[at + 1]),
                unsigned(b[at + 2]), unsigned(b[at + 3]), unsigned(b[at + 4]), unsigned(b[at + 5]));
  return s;
}

void pin_this_thread(unsigned cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// An afxdp receiver in A on queue 0 with one flow (id 1) on port, with room for a burst
// of the sender's speed: rings of 8,192 (and a UMEM of 16,384 buffers) absorb ~8 ms of
// 1 Mpps if this test's polling thread loses its CPU for a moment.
// Rings as deep as AF_XDP allows: a full-speed peer's whole run fits in them (kTestpmdFrames),
// so exact delivery does not depend on how fast a loaded (or ASan) receiver drains them.
constexpr uint32_t kRxRing = 16384;
constexpr uint64_t kTestpmdFrames = 16000;
static_assert(kTestpmdFrames < kRxRing);

AfxdpIface rx_iface(const NetnsLab& lab, uint16_t port) {
  AfxdpIface rs{.dev = lab.a().veth, .rx_queues = {0}, .flows = {udp_flow(1, 0, port)}, .num_bufs = 2 * kRxRing};
  rs.afxdp.rx_ring = kRxRing;
  rs.afxdp.fill_ring = kRxRing;
  return rs;
}

// What the polling thread saw: counts and every way a packet can be wrong.
struct Tally {
  uint64_t packets = 0, wrong_size = 0, wrong_port = 0, wrong_flow = 0, wrong_ethertype = 0;
  std::vector<Bytes> payloads;  // when kept
};

// Polls q on its own thread (pinned to cpu) until stop, or a hard bound of `limit`.
class Poller {
 public:
  Poller(RxQueue& q, unsigned cpu, size_t frame_size, uint16_t port, bool keep, std::chrono::seconds limit = 45s)
      : done_(std::async(std::launch::async, [=, this, &q] {
          pin_this_thread(cpu);
          Tally t;
          const auto deadline = Clock::now() + limit;
          while (!stop_.load(std::memory_order_relaxed) && Clock::now() < deadline) {
            RxBurst b = q.poll();
            if (b.empty()) {
              std::this_thread::sleep_for(5us);
              continue;
            }
            for (const Packet& p : b) {
              const auto f = p.frame();
              ++t.packets;
              t.wrong_size += f.size() != frame_size || p.size() + kUdpFrameOverhead != frame_size;
              t.wrong_ethertype += f.size() < kUdpFrameOverhead || be16(f, 12) != 0x0800;
              t.wrong_port += f.size() < kUdpFrameOverhead || be16(f, 36) != port;
              t.wrong_flow += p.flow() != 1;
              if (keep) t.payloads.push_back(bytes_of(p));
            }
            count_.store(t.packets, std::memory_order_relaxed);
          }
          return t;
        })) {}
  ~Poller() { stop_ = true; }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  // Waits until `want` packets arrived (or timeout), then `settle` more for extras; stops.
  Tally finish(uint64_t want, std::chrono::milliseconds timeout, std::chrono::milliseconds settle = 300ms) {
    const auto deadline = Clock::now() + timeout;
    while (count() < want && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
    std::this_thread::sleep_for(settle);
    stop_ = true;
    return done_.get();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> count_{0};
  std::future<Tally> done_;
};

::testing::AssertionResult clean(const Tally& t) {
  if (t.wrong_size || t.wrong_port || t.wrong_flow || t.wrong_ethertype)
    return ::testing::AssertionFailure() << "of " << t.packets << " packets: " << t.wrong_size << " of another size, "
                                         << t.wrong_ethertype << " not IPv4, " << t.wrong_port
                                         << " to another UDP port, " << t.wrong_flow << " without flow id 1";
  return ::testing::AssertionSuccess();
}

// The receive queue's counters: exactly n packets, nothing dropped anywhere (pool_empty,
// ring_full, flow_miss, ...), the raw XSK counters at zero too.
void expect_no_drops(const QueueStats& st, uint64_t n) {
  EXPECT_EQ(st.packets, n) << describe(st);
  EXPECT_EQ(st.total_drops(), 0u) << describe(st);
  EXPECT_EQ(st.errors, 0u) << describe(st);
  EXPECT_EQ(engine_counter(st, "xsk_rx_dropped"), 0u) << describe(st);
  EXPECT_EQ(engine_counter(st, "xsk_rx_ring_full"), 0u) << describe(st);
}

const FlowStats* flow1(const std::vector<FlowStats>& v) {
  for (auto& f : v)
    if (!f.unmatched && f.flow == 1) return &f;
  return nullptr;
}

// ---- testpmd txonly (af_packet, B) -> netdaq afxdp RX (A) ----

// UDP payloads of 22 and 1,472 bytes: 64 B and 1,514 B frames.
class AfxdpFromTestpmd : public ::testing::TestWithParam<size_t> {};

TEST_P(AfxdpFromTestpmd, ExactlyWhatTestpmdSentEveryFrameChecked) {
  NDQ_REQUIRE_AFXDP();
  NDQ_REQUIRE_TOOL("dpdk-testpmd", "dpdk-dev");
  const size_t payload = GetParam(), frame = kUdpFrameOverhead + payload;
  constexpr uint64_t kN = kTestpmdFrames;
  const uint16_t port = 46300;
  NetnsLab lab;
  const AfxdpIface rs = rx_iface(lab, port);
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(rs.build()); });
  auto& q = rx->rx_queue("x0");

  // testpmd's forwarding lcore on one CPU (it also runs the kernel's veth and XDP work, in its
  // softirqs), the polling thread on another. testpmd sends in bursts of 256 back to back
  // (start tx_first): exact in count, at full speed.
  TestpmdTxOptions o;
  o.ns = lab.b().ns;
  o.veth = lab.b().veth;
  o.flow = lab_flow(lab, lab.b(), lab.a(), 9000, port);
  o.payload_size = payload;
  o.count = kN;
  Poller poller(q, allowed_cpu(o.main_cpu), frame, port, false);
  const PeerReport tx = testpmd_txonly_af_packet(o);
  const Tally got = poller.finish(kN, 10s);

  ASSERT_TRUE(tx.ok) << describe(tx);
  EXPECT_EQ(tx.packets, kN) << describe(tx);
  EXPECT_EQ(tx.dropped, 0u) << describe(tx);
  EXPECT_EQ(got.packets, tx.packets) << "netdaq received vs testpmd's TX-packets";
  EXPECT_TRUE(clean(got));
  const QueueStats st = q.stats();
  EXPECT_TRUE(all_accounted(tx.packets, got.packets, {st}));
  expect_no_drops(st, kN);
  const auto fs = rx->flow_stats();
  ASSERT_NE(flow1(fs), nullptr);
  EXPECT_EQ(flow1(fs)->packets, kN);
  EXPECT_EQ(flow1(fs)->bytes, kN * frame) << "flow bytes count whole frames";
  std::printf("[   afxdp  ] testpmd %llu sent (%.2f s with startup), netdaq %llu received, mode %s\n",
              static_cast<unsigned long long>(tx.packets), tx.seconds, static_cast<unsigned long long>(got.packets),
              st.mode.c_str());
}

INSTANTIATE_TEST_SUITE_P(Frames, AfxdpFromTestpmd, ::testing::Values(size_t{22}, size_t{1472}),
                         [](const auto& info) { return "Frame" + std::to_string(kUdpFrameOverhead + info.param); });

// ---- netdaq capture (CLI, afxdp) -> pcap -> tcpreplay -> netdaq afxdp RX ----

std::string capture_yaml(const std::string& dev, uint16_t port) {
  return "memory_regions:\n  - {name: umem, kind: host, buf_size: 2048, num_bufs: 8192}\n"
         "interfaces:\n  - name: cap\n    engine: afxdp\n    address: " + dev +
         "\n    rx:\n      queues:\n        - {id: 0, batch_size: 64, ring_depth: 16, memory_regions: [umem]}\n"
         "      flows:\n        - {id: 1, queue: 0, match: {udp_dst: " + std::to_string(port) + "}}\n"
         "log:\n  level: warn\n";
}

// Every frame of a pcap file, in file order.
std::vector<Bytes> read_pcap(const std::string& path, std::string* err) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline(path.c_str(), errbuf);
  if (!p) {
    *err = errbuf;
    return {};
  }
  if (pcap_datalink(p) != DLT_EN10MB) *err = "link type " + std::to_string(pcap_datalink(p)) + ", not Ethernet";
  std::vector<Bytes> frames;
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  int rc;
  while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
    if (h->caplen != h->len) *err = "a frame was cut short in the file";
    const auto* b = reinterpret_cast<const std::byte*>(data);
    frames.emplace_back(b, b + h->caplen);
  }
  if (rc == PCAP_ERROR) *err = pcap_geterr(p);
  pcap_close(p);
  return frames;
}

// netdaq's socket engine in B sends N numbered payloads; `netdaq capture` (afxdp, in A)
// writes their frames to a pcap; tcpreplay sends that pcap from B's veth (the frames carry
// A's MAC as destination) into a netdaq afxdp session in A, which must receive exactly the
// N payloads, byte for byte as captured, in order.
TEST(AfxdpPeers, TcpreplayOfANetdaqCaptureArrivesExactly) {
  NDQ_REQUIRE_AFXDP();
  NDQ_REQUIRE_TOOL("tcpreplay", "tcpreplay");
  constexpr size_t kN = 10000, kSize = 1000;
  const uint16_t port = 46310;
  NetnsLab lab;
  const std::string mac_a = lab.mac(lab.a()), mac_b = lab.mac(lab.b());
  TempFile cfg, pcap;
  std::ofstream(cfg.path) << capture_yaml(lab.a().veth, port);

  {  // 1. capture
    PeerProcess cap(lab.a().ns, {NETDAQ_CLI, "capture", cfg.path, "-o", pcap.path, "-n", std::to_string(kN), "-d", "40"});
    ASSERT_TRUE(cap.wait_for_output("Ctrl-C stops", 15s)) << cap.command() << "\n" << cap.output();
    Iface ts;
    ts.destination = "udp://" + lab.a().ip4 + ":" + std::to_string(port);
    ts.tx_queues = 1;
    ts.rate_pps = 50000;
    auto tx = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(ts.build()); });
    EXPECT_EQ(send_sequence(tx->tx_queue("if0"), 0, kN, kSize), kN);
    EXPECT_TRUE(sender_accounted(kN, tx->tx_queue("if0").stats()));
    const int status = cap.wait(15s);
    ASSERT_EQ(status, 0) << cap.command() << "\n" << cap.output();
    const std::string out = cap.output();
    EXPECT_NE(out.find("wrote 10,000 packets"), std::string::npos) << out;
  }
  std::string err;
  const std::vector<Bytes> frames = read_pcap(pcap.path, &err);
  ASSERT_TRUE(err.empty()) << err;
  ASSERT_EQ(frames.size(), kN);
  std::vector<Bytes> captured;  // the UDP payloads, in capture order
  for (const Bytes& f : frames) {
    ASSERT_EQ(f.size(), kUdpFrameOverhead + kSize);
    ASSERT_EQ(mac_text(f, 0), mac_a) << "destination MAC";
    ASSERT_EQ(mac_text(f, 6), mac_b) << "source MAC";
    ASSERT_EQ(be16(f, 36), port);
    captured.emplace_back(f.begin() + kUdpFrameOverhead, f.end());
  }
  EXPECT_TRUE(exactly_sequence(captured, 0, kN, kSize)) << "the capture holds every payload sent, once";

  // 2. replay into a netdaq afxdp session
  const AfxdpIface rs = rx_iface(lab, port);
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(rs.build()); });
  auto& q = rx->rx_queue("x0");
  Poller poller(q, allowed_cpu(0), kUdpFrameOverhead + kSize, port, true);
  const PeerReport r = tcpreplay({lab.b().ns, lab.b().veth, pcap.path, 100000});
  const Tally got = poller.finish(kN, 10s);
  ASSERT_TRUE(r.ok) << describe(r);
  EXPECT_EQ(r.packets, kN) << describe(r);
  EXPECT_EQ(r.dropped, 0u) << describe(r);
  EXPECT_TRUE(clean(got));
  EXPECT_TRUE(all_accounted(r.packets, got.packets, {q.stats()}));
  ASSERT_EQ(got.payloads.size(), kN);
  size_t differ = 0;
  for (size_t i = 0; i < kN; ++i) differ += got.payloads[i] != captured[i];
  EXPECT_EQ(differ, 0u) << "payloads that differ from the captured frame at the same position";
  expect_no_drops(q.stats(), kN);
  std::printf("[   afxdp  ] tcpreplay --pps=100000: %llu sent in %.3f s, netdaq %llu received\n",
              static_cast<unsigned long long>(r.packets), r.seconds, static_cast<unsigned long long>(got.packets));
}

}  // namespace
