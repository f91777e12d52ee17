// Capture -> replay on real traffic: netdaq payloads sent over a veth pair (socket engine in
// namespace B) are recorded by `netdaq capture` (afxdp, namespace A) into a pcap, then replayed
// through the pcap engine with the library API: every payload byte for byte, in order, and every
// count; the same capture as pcapng; at the recorded pace in about the recorded time.
// Needs root and the afxdp engine; with CI=true their absence fails the tests.
#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include "afxdp_util.h"
#include "netns_lab.h"
#include "replay_util.h"

using namespace ndqtest;
using namespace netdaq;

namespace {

constexpr size_t kN = 3000, kSize = 1000;
constexpr uint16_t kPort = 46320;

std::vector<Bytes> stream(size_t n) {
  std::vector<Bytes> p;
  for (size_t i = 0; i < n; ++i) p.push_back(netdaq_payload(0, i, kSize, 1000 + i));
  return p;
}

// The records of a capture file, read with libpcap (to rewrite them as pcapng).
std::vector<Record> records_of(const std::string& path) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (!p) {
    ADD_FAILURE() << errbuf;
    return {};
  }
  std::vector<Record> out;
  pcap_pkthdr* h = nullptr;
  const u_char* d = nullptr;
  while (pcap_next_ex(p, &h, &d) == 1) {
    const auto* b = reinterpret_cast<const std::byte*>(d);
    out.push_back({uint64_t(h->ts.tv_sec) * 1'000'000'000ull + uint64_t(h->ts.tv_usec), Bytes(b, b + h->caplen),
                   h->len});
  }
  pcap_close(p);
  return out;
}

}  // namespace

TEST(CaptureReplay, NetdaqCaptureReplaysByteIdenticalPayloadsAndCounts) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  TempFile pcap;
  const std::vector<Bytes> sent = stream(kN);
  const Captured cap = capture_stream(lab, kPort, sent, pcap.path);
  ASSERT_TRUE(cap.ok);
  EXPECT_NE(cap.output.find("wrote 3,000 packets"), std::string::npos) << cap.output;
  std::string err;
  const std::vector<Bytes> captured = udp_payloads_of(pcap.path, &err);
  ASSERT_TRUE(err.empty()) << err;
  ASSERT_EQ(captured, sent) << "the capture holds every payload sent, in order";

  // 1. pcap, filtered by the receiver's own address as the capture saw it
  PcapIface pi;
  pi.file = pcap.path;
  pi.address = "udp://" + lab.a().ip4 + ":" + std::to_string(kPort);
  pi.num_bufs = 4096;
  {
    Session s(pi.build());
    const Drained d = drain(s.rx_queue("replay"));
    ASSERT_TRUE(d.finished);
    ASSERT_EQ(d.payloads.size(), kN) << describe(d.stats);
    size_t differ = 0;
    for (size_t i = 0; i < kN; ++i) differ += d.payloads[i] != sent[i];
    EXPECT_EQ(differ, 0u) << "payloads that differ from the ones sent, at the same position";
    EXPECT_EQ(d.stats.packets, kN);
    EXPECT_EQ(d.stats.bytes, kN * kSize);
    EXPECT_EQ(d.stats.total_drops(), 0u) << describe(d.stats);
    EXPECT_EQ(records_read(d.stats), kN);
  }
  // 2. the same records as pcapng, in worker mode
  const std::vector<Record> recs = records_of(pcap.path);
  ASSERT_EQ(recs.size(), kN);
  TempFile ng;
  write_pcapng(ng.path, recs);
  pi.file = ng.path;
  pi.mode = PollMode::worker;
  {
    Session s(pi.build());
    const Drained d = drain(s.rx_queue("replay"));
    ASSERT_TRUE(d.finished);
    ASSERT_EQ(d.payloads, sent) << describe(d.stats);
    for (size_t i = 0; i < kN; ++i) ASSERT_EQ(d.timestamps[i], recs[i].ts_ns) << i;
    EXPECT_EQ(d.stats.packets + d.stats.total_drops(), kN);
  }
  // 3. recorded pace: about as long as the capture took (loose bounds: a loaded machine)
  const double recorded = double(recs.back().ts_ns - recs.front().ts_ns) / 1e9;
  ASSERT_GT(recorded, 0.05) << "the sender was paced at 20,000 packets/s";
  pi.file = pcap.path;
  pi.mode = PollMode::direct;
  pi.pcap.pace = PcapPace::recorded;
  {
    Session s(pi.build());
    const Drained d = drain(s.rx_queue("replay"), std::chrono::milliseconds(int(recorded * 1000) * 5 + 10000));
    ASSERT_TRUE(d.finished);
    EXPECT_EQ(d.payloads.size(), kN);
    EXPECT_GE(d.seconds, recorded * 0.8) << "recorded " << recorded << " s";
    EXPECT_LT(d.seconds, recorded * 5 + 5) << "recorded " << recorded << " s";
    std::printf("[  replay  ] %zu packets recorded over %.3f s replayed in %.3f s at recorded pace\n", kN, recorded,
                d.seconds);
  }
}
