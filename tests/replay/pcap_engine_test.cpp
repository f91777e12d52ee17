// The pcap engine through the public API, on capture files written here (no root needed):
// payloads and frames byte for byte, pcapng, loops, recorded pace, filters, and every record
// accounted (records read == delivered + drops), with clear errors for bad files and options.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "replay_util.h"

using namespace ndqtest;
using namespace netdaq;

namespace {

constexpr uint16_t kPort = 46000;
constexpr uint64_t kT0 = 1'700'000'000'123'456'789ull;

// n netdaq payloads of `size` bytes to kPort, `gap_ns` apart.
std::vector<Record> udp_records(size_t n, size_t size = 200, uint64_t gap_ns = 1000, bool ipv6 = false) {
  std::vector<Record> r;
  for (size_t i = 0; i < n; ++i) r.push_back({kT0 + i * gap_ns, udp_frame(netdaq_payload(0, i, size), kPort, ipv6)});
  return r;
}

std::vector<Bytes> payloads_of(const std::vector<Record>& recs) {
  std::vector<Bytes> out;
  for (const auto& r : recs) out.emplace_back(r.data.begin() + 42, r.data.end());
  return out;
}

uint64_t drops(const QueueStats& s) { return s.total_drops(); }

class PcapEngineModes : public ::testing::TestWithParam<PollMode> {};

}  // namespace

TEST_P(PcapEngineModes, PayloadsAreDeliveredByteForByteAndTheQueueFinishes) {
  TempFile f;
  const auto recs = udp_records(1000);
  write_pcap(f.path, recs);
  PcapIface pi;
  pi.file = f.path;
  pi.mode = GetParam();
  Session s(pi.build());
  const Drained d = drain(s.rx_queue("replay"));
  ASSERT_TRUE(d.finished);
  ASSERT_EQ(d.payloads.size(), recs.size()) << describe(d.stats);
  EXPECT_EQ(d.payloads, payloads_of(recs));
  for (size_t i = 0; i < recs.size(); ++i) {
    ASSERT_EQ(d.frames[i], recs[i].data) << "Packet::frame() is the whole recorded frame, " << i;
    ASSERT_EQ(d.timestamps[i], recs[i].ts_ns) << "the capture time, to the nanosecond, " << i;
  }
  EXPECT_EQ(d.stats.packets, recs.size());
  EXPECT_EQ(drops(d.stats), 0u) << describe(d.stats);
  EXPECT_EQ(records_read(d.stats), recs.size());
  EXPECT_FALSE(s.rx_queue("replay").poll()) << "nothing after the end";
  EXPECT_TRUE(capabilities_of(s.config().interfaces[0])->finite_source);
}

INSTANTIATE_TEST_SUITE_P(Modes, PcapEngineModes, ::testing::Values(PollMode::direct, PollMode::worker),
                         [](const auto& info) { return info.param == PollMode::direct ? "Direct" : "Worker"; });

TEST(PcapEngine, PcapngAndIpv6AreRead) {
  TempFile f;
  auto recs = udp_records(50);
  const auto v6 = udp_records(50, 300, 1000, true);
  recs.insert(recs.end(), v6.begin(), v6.end());
  write_pcapng(f.path, recs);
  PcapIface pi;
  pi.file = f.path;
  Session s(pi.build());
  const Drained d = drain(s.rx_queue("replay"));
  ASSERT_TRUE(d.finished);
  ASSERT_EQ(d.payloads.size(), recs.size()) << describe(d.stats);
  for (size_t i = 0; i < recs.size(); ++i) {
    const size_t hdr = i < 50 ? 42 : 62;
    ASSERT_EQ(d.payloads[i], Bytes(recs[i].data.begin() + hdr, recs[i].data.end())) << i;
    ASSERT_EQ(d.timestamps[i], recs[i].ts_ns) << i;
  }
}

TEST(PcapEngine, NonUdpAndCutShortRecordsAreDroppedAsMalformedAndEveryRecordIsAccounted) {
  TempFile f;
  std::vector<Record> recs;
  size_t udp = 0, arp = 0, cut = 0;
  for (size_t i = 0; i < 300; ++i) {
    if (i % 10 == 3) {
      recs.push_back({kT0 + i, arp_frame()});
      ++arp;
    } else if (i % 10 == 7) {
      Bytes fr = udp_frame(netdaq_payload(0, i, 500), kPort);
      const uint32_t wire = uint32_t(fr.size());
      fr.resize(100);  // snaplen 100: cut short in the capture
      recs.push_back({kT0 + i, fr, wire});
      ++cut;
    } else {
      recs.push_back({kT0 + i, udp_frame(netdaq_payload(0, i, 100), kPort)});
      ++udp;
    }
  }
  write_pcap(f.path, recs);
  PcapIface pi;
  pi.file = f.path;
  Session s(pi.build());
  const Drained d = drain(s.rx_queue("replay"));
  ASSERT_TRUE(d.finished);
  EXPECT_EQ(d.payloads.size(), udp);
  EXPECT_EQ(d.stats.drop(DropReason::malformed), arp + cut) << describe(d.stats);
  EXPECT_EQ(d.stats.packets + drops(d.stats), recs.size()) << "sent == received + drops: " << describe(d.stats);
  EXPECT_EQ(records_read(d.stats), recs.size());

  // Whole frames: the ARP records too; the cut ones are still malformed.
  PcapIface frames = pi;
  frames.pcap.deliver = PcapDeliver::frames;
  Session s2(frames.build());
  const Drained d2 = drain(s2.rx_queue("replay"));
  ASSERT_TRUE(d2.finished);
  EXPECT_EQ(d2.payloads.size(), udp + arp);
  EXPECT_EQ(d2.stats.drop(DropReason::malformed), cut) << describe(d2.stats);
  EXPECT_EQ(d2.stats.packets + drops(d2.stats), recs.size());
  size_t k = 0;
  for (const auto& r : recs) {
    if (r.wire_len) continue;
    ASSERT_EQ(d2.payloads[k], r.data) << k;
    ASSERT_EQ(d2.frames[k], r.data) << k;
    ++k;
  }
  EXPECT_TRUE(capabilities_of(s2.config().interfaces[0])->raw_frames);
}

TEST(PcapEngine, AddressAndFlowsFilterTheFileAsFlowMisses) {
  TempFile f;
  std::vector<Record> recs;
  for (size_t i = 0; i < 200; ++i)
    recs.push_back({kT0 + i, udp_frame(netdaq_payload(0, i, 64), uint16_t(i % 2 ? kPort : kPort + 1))});
  recs.push_back({kT0 + 500, udp_frame(netdaq_payload(0, 500, 64), kPort, false, 0x0a000001)});  // to 10.0.0.1
  write_pcap(f.path, recs);
  PcapIface pi;
  pi.file = f.path;
  pi.address = "udp://127.0.0.1:" + std::to_string(kPort);
  {
    Session s(pi.build());
    const Drained d = drain(s.rx_queue("replay"));
    ASSERT_TRUE(d.finished);
    EXPECT_EQ(d.payloads.size(), 100u);
    EXPECT_EQ(d.stats.drop(DropReason::flow_miss), 101u) << describe(d.stats);
    EXPECT_EQ(d.stats.packets + drops(d.stats), recs.size());
  }
  pi.address = "udp://0.0.0.0:" + std::to_string(kPort);  // any address: the one to 10.0.0.1 too
  {
    Session s(pi.build());
    const Drained d = drain(s.rx_queue("replay"));
    EXPECT_EQ(d.payloads.size(), 101u);
  }
  pi.address.clear();  // a flow instead
  FlowConfig fl;
  fl.id = 7;
  fl.match.udp_dst = uint16_t(kPort + 1);
  pi.flows = {fl};
  {
    Session s(pi.build());
    auto& q = s.rx_queue("replay");
    size_t n = 0;
    while (!q.finished()) {
      auto b = q.poll();
      for (const auto& p : b) {
        EXPECT_EQ(p.flow(), 7u);
        ++n;
      }
    }
    EXPECT_EQ(n, 100u);
    EXPECT_EQ(q.stats().drop(DropReason::flow_miss), 101u);
  }
}

TEST(PcapEngine, LoopRepeatsTheFileNTimesAndZeroLoopsUntilStopped) {
  TempFile f;
  const auto recs = udp_records(100);
  write_pcap(f.path, recs);
  PcapIface pi;
  pi.file = f.path;
  pi.pcap.loop = 3;
  {
    Session s(pi.build());
    const Drained d = drain(s.rx_queue("replay"));
    ASSERT_TRUE(d.finished);
    ASSERT_EQ(d.payloads.size(), 300u);
    const auto one = payloads_of(recs);
    for (size_t i = 0; i < 300; ++i) ASSERT_EQ(d.payloads[i], one[i % 100]) << i;
    EXPECT_EQ(records_read(d.stats), 300u);
  }
  pi.pcap.loop = 0;
  pi.mode = PollMode::worker;
  {
    Session s(pi.build());
    auto& q = s.rx_queue("replay");
    size_t n = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (n < 1000 && std::chrono::steady_clock::now() < deadline) n += q.poll().size();
    EXPECT_GE(n, 1000u) << "loop 0 keeps going";
    EXPECT_FALSE(q.finished());
  }
}

TEST(PcapEngine, RecordedPaceTakesAboutTheRecordedDurationScaledBySpeed) {
  TempFile f;
  const auto recs = udp_records(41, 100, 10'000'000);  // 0.4 s recorded
  write_pcap(f.path, recs);
  PcapIface pi;
  pi.file = f.path;
  pi.pcap.pace = PcapPace::recorded;
  {
    Session s(pi.build());
    const Drained d = drain(s.rx_queue("replay"));
    ASSERT_TRUE(d.finished);
    EXPECT_EQ(d.payloads.size(), 41u);
    EXPECT_GE(d.seconds, 0.35) << "recorded pace: about 0.4 s";
    EXPECT_LT(d.seconds, 10.0);
  }
  pi.pcap.speed = 4;
  pi.pcap.loop = 2;
  {
    Session s(pi.build());
    const Drained d = drain(s.rx_queue("replay"));
    ASSERT_TRUE(d.finished);
    EXPECT_EQ(d.payloads.size(), 82u);
    EXPECT_GE(d.seconds, 0.15) << "2 passes of 0.4 s at 4x: about 0.2 s";
    EXPECT_LT(d.seconds, 0.39) << "faster than one pass at recorded speed";
  }
  pi.pcap = {};
  {
    Session s(pi.build());
    const Drained d = drain(s.rx_queue("replay"));
    EXPECT_LT(d.seconds, 0.35) << "asap does not wait for the recorded times";
  }
}

TEST(PcapEngine, TruncatedFileFailsTheOpenNamingFileAndRecord) {
  TempFile f;
  Bytes b = pcap_bytes(udp_records(5));
  b.resize(b.size() - 30);  // the 5th record ends early
  write_file(f.path, b);
  PcapIface pi;
  pi.file = f.path;
  try {
    Session s(pi.build());
    FAIL() << "a truncated file opened";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(f.path), std::string::npos) << what;
    EXPECT_NE(what.find("record 5"), std::string::npos) << what;
  }
  // check_file: false: the first 4 arrive, then the error ends the stream (counted, logged).
  pi.pcap.check_file = false;
  Session s(pi.build());
  const Drained d = drain(s.rx_queue("replay"));
  ASSERT_TRUE(d.finished);
  EXPECT_EQ(d.payloads.size(), 4u);
  EXPECT_EQ(d.stats.errors, 1u);
}

TEST(PcapEngine, CorruptOrMissingFileFailsNamingTheFile) {
  TempFile f;
  Bytes b = pcap_bytes(udp_records(3));
  b[0] = std::byte{0};
  write_file(f.path, b);
  PcapIface pi;
  pi.file = f.path;
  try {
    Session s(pi.build());
    FAIL() << "a corrupt file opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(f.path + ": not a readable pcap or pcapng file"), std::string::npos)
        << e.what();
  }
  pi.file = f.path + ".missing";
  try {
    Session s(pi.build());
    FAIL() << "a missing file opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_NE(std::string(e.what()).find(pi.file + ": cannot open the capture"), std::string::npos) << e.what();
  }
  for (size_t cut : {size_t{0}, size_t{10}}) {  // empty, or a file header cut short
    const Bytes header = pcap_bytes({});
    write_file(f.path, Bytes(header.begin(), header.begin() + static_cast<long>(cut)));
    pi.file = f.path;
    EXPECT_THROW(Session s(pi.build()), Error) << cut;
  }
}

TEST(PcapEngine, EmptyPoolMakesRecordsWaitNotDrop) {
  TempFile f;
  const auto recs = udp_records(200);
  write_pcap(f.path, recs);
  PcapIface pi;
  pi.file = f.path;
  pi.num_bufs = 64;
  pi.batch = 4;  // the pool budget: ring_depth 16 x batch 4 = 64
  Session s(pi.build());
  auto& q = s.rx_queue("replay");
  std::vector<RxBurst> held;
  size_t n = 0;
  while (auto b = q.poll()) {  // until the pool is empty: the application holds every buffer
    n += b.size();
    held.push_back(std::move(b));
  }
  EXPECT_EQ(n, 64u);
  EXPECT_FALSE(q.finished());
  held.clear();
  const Drained d = drain(q);
  EXPECT_EQ(d.payloads.size(), 200u - 64u);
  EXPECT_EQ(drops(d.stats), 0u) << describe(d.stats);
}

TEST(PcapConfig, OptionErrorsNameFileLineAndKey) {
  TempFile f;
  std::ofstream(f.path) << "memory_regions:\n  - {name: b, buf_size: 2048, num_bufs: 64}\n"
                           "interfaces:\n  - name: r\n    engine: pcap\n    address: udp://example.org:5\n"
                           "    rx:\n      queues:\n        - {id: 0, memory_regions: [b]}\n"
                           "    tx:\n      destination: udp://127.0.0.1:9\n      queues:\n        - {id: 0, memory_regions: [b]}\n"
                           "    pcap:\n      speed: 3\n      pace: later\n";
  try {
    Config::load(f.path);
    FAIL() << "loaded";
  } catch (const ConfigError& e) {
    const std::string w = e.what();
    EXPECT_TRUE(std::regex_search(w, std::regex(f.path + ":16:[0-9]+: interfaces\\[0\\]\\.pcap\\.pace = 'later': .*asap.*recorded"))) << w;
  }
  std::ofstream(f.path) << "memory_regions:\n  - {name: b, buf_size: 2048, num_bufs: 64}\n"
                           "interfaces:\n  - name: r\n    engine: pcap\n    address: udp://example.org:5\n"
                           "    rx:\n      queues:\n        - {id: 0, memory_regions: [b]}\n"
                           "    tx:\n      destination: udp://127.0.0.1:9\n      queues:\n        - {id: 0, memory_regions: [b]}\n"
                           "    pcap:\n      speed: 3\n";
  try {
    Config::load(f.path);
    FAIL() << "loaded";
  } catch (const ConfigError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("interfaces[0].pcap.file"), std::string::npos) << w;
    EXPECT_NE(w.find("is required for the pcap engine"), std::string::npos) << w;
    EXPECT_TRUE(std::regex_search(w, std::regex(f.path + ":15:[0-9]+: interfaces\\[0\\]\\.pcap\\.speed = '3': is only used with pace: recorded"))) << w;
    EXPECT_TRUE(std::regex_search(w, std::regex(f.path + ":6:[0-9]+: interfaces\\[0\\]\\.address = 'udp://example.org:5': must be an IP literal"))) << w;
    EXPECT_NE(w.find("interfaces[0].tx.queues"), std::string::npos) << w;
  }
}
