// The real traffic peers themselves (peers.h), checked against the kernel: a plain UDP socket
// in namespace A receives exactly what testpmd / tcpreplay in namespace B say they sent, and
// testpmd's af_xdp receiver counts every frame testpmd's sender sent. With CI=true a missing
// tool fails the tests instead of skipping them.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "netns_lab.h"
#include "peers.h"
#include "test_util.h"
#include "veth_fates.h"

using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

constexpr uint16_t kPort = 9001;  // a fresh namespace: every port is free

// The kernel's UDP receive counters of a namespace (/proc/net/snmp read inside it).
struct UdpCounters {
  uint64_t in_datagrams = 0;   // delivered to a socket
  uint64_t rcvbuf_errors = 0;  // dropped: socket buffer full
};
UdpCounters udp_counters(const NetnsLab& lab, const std::string& ns) {
  std::string out;
  lab.exec_in(ns, {"cat", "/proc/net/snmp"}, &out);
  std::istringstream in(out);
  std::string names, values, line;
  while (std::getline(in, line))
    if (line.rfind("Udp:", 0) == 0) (names.empty() ? names : values) = line;
  std::map<std::string, uint64_t> c;
  std::istringstream n(names), v(values);
  std::string name, value;
  while (n >> name && v >> value)
    if (name != "Udp:") c[name] = std::stoull(value);
  return {c["InDatagrams"], c["RcvbufErrors"]};
}

void expect_sizes(const std::vector<Bytes>& got, size_t size) {
  size_t wrong = 0;
  for (const auto& d : got) wrong += d.size() != size;
  EXPECT_EQ(wrong, 0u) << "datagrams of another size than " << size;
}

void print_rate(const char* what, const PeerReport& r) {
  std::printf("[   rate   ] %s: %llu packets in %.3f s = %.3f Mpps\n", what,
              static_cast<unsigned long long>(r.packets), r.seconds, r.pps() / 1e6);
}

}  // namespace

// testpmd txonly over the af_packet PMD sends exactly the count asked, all of the size
// asked, and the kernel receives every one.
class TestpmdTxOnly : public ::testing::TestWithParam<size_t> {};

TEST_P(TestpmdTxOnly, KernelReceivesExactlyTheCountSent) {
  NDQ_REQUIRE_ROOT();
  NDQ_REQUIRE_TOOL("dpdk-testpmd", "dpdk-dev");
  const size_t size = GetParam();
  constexpr uint64_t kN = 20000;
  NetnsLab lab;
  UdpSink sink(lab, lab.a(), kPort);
  const auto before = udp_counters(lab, lab.a().ns);

  TestpmdTxOptions o;
  o.ns = lab.b().ns;
  o.veth = lab.b().veth;
  o.flow = lab_flow(lab, lab.b(), lab.a(), 9000, kPort);
  o.payload_size = size;
  o.count = kN;
  const PeerReport r = testpmd_txonly_af_packet(o);
  ASSERT_TRUE(r.ok) << describe(r);
  EXPECT_EQ(r.packets, kN) << describe(r);
  EXPECT_EQ(r.dropped, 0u) << describe(r);

  const auto got = sink.finish(kN, 10s);
  const auto after = udp_counters(lab, lab.a().ns);
  EXPECT_EQ(got.size(), kN);
  expect_sizes(got, size);
  EXPECT_EQ(after.in_datagrams - before.in_datagrams, kN);
  EXPECT_EQ(after.rcvbuf_errors - before.rcvbuf_errors, 0u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, TestpmdTxOnly, ::testing::Values(size_t{64}, size_t{1472}),
                         [](const auto& info) { return "Payload" + std::to_string(info.param); });

// Duration mode sends at full speed; the kernel accounts for every frame testpmd counted
// (delivered to the socket, or dropped for a full socket buffer).
TEST(TestpmdTxOnlyDuration, KernelAccountsForEveryPacketSent) {
  NDQ_REQUIRE_ROOT();
  NDQ_REQUIRE_TOOL("dpdk-testpmd", "dpdk-dev");
  NetnsLab lab;
  UdpSink sink(lab, lab.a(), kPort);
  const auto before = udp_counters(lab, lab.a().ns);
  TestpmdTxOptions o;
  o.ns = lab.b().ns;
  o.veth = lab.b().veth;
  o.flow = lab_flow(lab, lab.b(), lab.a(), 9000, kPort);
  o.payload_size = 64;
  o.duration = 300ms;
  const PeerReport r = testpmd_txonly_af_packet(o);
  ASSERT_TRUE(r.ok) << describe(r);
  EXPECT_GT(r.packets, 1000u) << describe(r);
  EXPECT_GE(r.seconds, 0.3);
  EXPECT_LT(r.seconds, 2.0);
  print_rate("testpmd txonly af_packet -> kernel UDP socket", r);

  const auto got = sink.finish(r.packets, 10s);
  const auto after = udp_counters(lab, lab.a().ns);
  const uint64_t delivered = after.in_datagrams - before.in_datagrams;
  const uint64_t rcvbuf = after.rcvbuf_errors - before.rcvbuf_errors;
  EXPECT_EQ(delivered + rcvbuf, r.packets) << "delivered " << delivered << " + socket buffer drops " << rcvbuf;
  EXPECT_EQ(got.size(), delivered);
  expect_sizes(got, 64);
}

// tcpreplay of a pcap from write_udp_pcap: exactly its packets arrive, in order, every
// payload byte as written.
class Tcpreplay : public ::testing::TestWithParam<size_t> {};

TEST_P(Tcpreplay, KernelReceivesEveryPacketOfThePcap) {
  NDQ_REQUIRE_ROOT();
  NDQ_REQUIRE_TOOL("tcpreplay", "tcpreplay");
  const size_t size = GetParam();
  constexpr uint64_t kN = 20000;
  NetnsLab lab;
  TempFile pcap;
  write_udp_pcap(pcap.path, lab_flow(lab, lab.b(), lab.a(), 9000, kPort), kN, size);
  UdpSink sink(lab, lab.a(), kPort);
  const auto before = udp_counters(lab, lab.a().ns);

  const PeerReport r = tcpreplay({lab.b().ns, lab.b().veth, pcap.path});
  ASSERT_TRUE(r.ok) << describe(r);
  EXPECT_EQ(r.packets, kN) << describe(r);
  EXPECT_EQ(r.dropped, 0u) << describe(r);
  print_rate("tcpreplay --topspeed", r);

  const auto got = sink.finish(kN, 10s);
  const auto after = udp_counters(lab, lab.a().ns);
  ASSERT_EQ(got.size(), kN);
  EXPECT_EQ(after.rcvbuf_errors - before.rcvbuf_errors, 0u);
  for (uint64_t i = 0; i < kN; ++i) ASSERT_TRUE(check_payload(got[i], i, size)) << "datagram " << i;
}

INSTANTIATE_TEST_SUITE_P(Sizes, Tcpreplay, ::testing::Values(size_t{64}, size_t{1472}),
                         [](const auto& info) { return "Payload" + std::to_string(info.param); });

// --pps paces: 2,000 packets at 10,000 pps take about 0.2 s and all arrive.
TEST(TcpreplayPps, PacesAndDeliversEveryPacket) {
  NDQ_REQUIRE_ROOT();
  NDQ_REQUIRE_TOOL("tcpreplay", "tcpreplay");
  constexpr uint64_t kN = 2000;
  NetnsLab lab;
  TempFile pcap;
  write_udp_pcap(pcap.path, lab_flow(lab, lab.b(), lab.a(), 9000, kPort), kN, 200);
  UdpSink sink(lab, lab.a(), kPort);
  const PeerReport r = tcpreplay({lab.b().ns, lab.b().veth, pcap.path, 10000});
  ASSERT_TRUE(r.ok) << describe(r);
  EXPECT_EQ(r.packets, kN);
  EXPECT_GT(r.seconds, 0.15) << describe(r);
  EXPECT_LT(r.seconds, 1.0) << describe(r);
  EXPECT_EQ(sink.finish(kN, 5s).size(), kN);
}

// testpmd rxonly over the af_xdp PMD counts every frame testpmd's sender sent: received or
// dropped, exactly, and the kernel's veth counters agree frame for frame, whether or not the
// loaded machine drops (veth_fates.h says where the kernel counts each fate). IPv6 is off on
// both veths, so the kernels add no frames of their own (router solicitations, MLD reports).
TEST(TestpmdRxAfXdp, CountsEveryFrameSent) {
  NDQ_REQUIRE_ROOT();
  NDQ_REQUIRE_TOOL("dpdk-testpmd", "dpdk-dev");
  NDQ_REQUIRE_TOOL("ethtool", "ethtool");
  constexpr uint64_t kN = 20000;
  NetnsLab lab;
  for (const auto* side : {&lab.a(), &lab.b()})
    ASSERT_EQ(lab.exec_in(side->ns, {"sysctl", "-qw", "net.ipv6.conf." + side->veth + ".disable_ipv6=1"}), 0);
  TestpmdRxAfXdp rx(lab.a().ns, lab.a().veth);
  ASSERT_TRUE(rx.wait_ready()) << describe(rx.stop());
  const VethFates before = veth_fates(lab, lab.b(), lab.a());

  TestpmdTxOptions o;
  o.ns = lab.b().ns;
  o.veth = lab.b().veth;
  o.flow = lab_flow(lab, lab.b(), lab.a(), 9000, kPort);
  o.count = kN;
  const PeerReport tx = testpmd_txonly_af_packet(o);
  const VethFates k = await_veth_fates(lab, lab.b(), lab.a(), before, tx.packets);
  const PeerReport r = rx.stop();
  ASSERT_TRUE(tx.ok) << describe(tx);
  ASSERT_TRUE(r.ok) << describe(r);
  std::printf("[   rxonly ] af_xdp: %llu received, %llu dropped of %llu sent; %s\n",
              static_cast<unsigned long long>(r.packets), static_cast<unsigned long long>(r.dropped),
              static_cast<unsigned long long>(tx.packets), k.describe().c_str());
  EXPECT_EQ(tx.packets, kN);
  EXPECT_EQ(tx.dropped, 0u) << describe(tx);
  EXPECT_EQ(k.xdp_packets + k.dropped_by_sender, kN) << "every frame sent reached A's XDP or was dropped by B's veth";
  EXPECT_EQ(k.xdp_fates(), k.xdp_packets) << "each frame A's XDP saw was redirected or dropped, counted once";
  EXPECT_GT(r.packets, 0u) << describe(r);
  EXPECT_EQ(r.packets, k.xdp_redirect) << "every frame XDP redirected to the socket was received";
  EXPECT_EQ(r.dropped, k.xdp_drops + k.drops) << "the PMD's drops are the ones A's XDP counted";
  EXPECT_EQ(r.packets + r.dropped + k.dropped_by_sender, kN) << describe(r) << "; " << k.describe();
  EXPECT_EQ(r.errors, 0u) << describe(r);
}

// The convenience form runs for the given time and reports what it saw (here: nothing but
// the kernel's own noise, no sender).
TEST(TestpmdRxAfXdp, RunsForADurationAndStops) {
  NDQ_REQUIRE_ROOT();
  NDQ_REQUIRE_TOOL("dpdk-testpmd", "dpdk-dev");
  NetnsLab lab;
  const auto t0 = std::chrono::steady_clock::now();
  const PeerReport r = testpmd_rxonly_af_xdp(lab.a().ns, lab.a().veth, 300ms);
  ASSERT_TRUE(r.ok) << describe(r);
  EXPECT_GE(r.seconds, 0.3);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_LE(r.packets, 16u) << describe(r);
}

// A peer that cannot use its interface says why instead of reporting zero packets.
TEST(PeerErrors, MissingInterfaceIsAnErrorNotZeroPackets) {
  NDQ_REQUIRE_ROOT();
  NDQ_REQUIRE_TOOL("dpdk-testpmd", "dpdk-dev");
  NetnsLab lab;
  TestpmdTxOptions o;
  o.ns = lab.b().ns;
  o.veth = "nosuchveth0";
  o.flow = lab_flow(lab, lab.b(), lab.a(), 9000, kPort);
  o.count = 10;
  const PeerReport tx = testpmd_txonly_af_packet(o);
  EXPECT_FALSE(tx.ok);
  EXPECT_NE(tx.error.find("no port"), std::string::npos) << describe(tx);

  TestpmdRxAfXdp rx(lab.a().ns, "nosuchveth0");
  EXPECT_FALSE(rx.wait_ready(5s));
  const PeerReport r = rx.stop();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no port"), std::string::npos) << describe(r);
}

// A pcap frame is what the kernel would accept: right lengths, IPv4 header checksum.
TEST(UdpFrame, HeaderFieldsAndChecksum) {
  UdpFlow f{"02:00:00:00:00:01", "02:00:00:00:00:02", "10.1.2.3", "10.4.5.6", 1234, 5678};
  const Bytes fr = udp_frame(f, 7, make_payload(3, 100));
  ASSERT_EQ(fr.size(), kUdpFrameOverhead + 100);
  auto u16 = [&](size_t at) { return (unsigned(fr[at]) << 8) | unsigned(fr[at + 1]); };
  EXPECT_EQ(u16(12), 0x0800u);
  EXPECT_EQ(u16(16), 128u);  // IPv4 total length
  EXPECT_EQ(u16(38), 108u);  // UDP length
  EXPECT_EQ(u16(34), 1234u);
  EXPECT_EQ(u16(36), 5678u);
  uint32_t sum = 0;  // a correct header sums to 0xffff
  for (size_t i = 14; i < 34; i += 2) sum += u16(i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  EXPECT_EQ(sum, 0xffffu);
  EXPECT_EQ(Bytes(fr.begin() + 42, fr.end()), make_payload(3, 100));
  EXPECT_THROW(udp_frame({"nope", "02:00:00:00:00:02", "10.1.2.3", "10.4.5.6"}, 0, {}), std::invalid_argument);
}
