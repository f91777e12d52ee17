// The dpdk engine on real devices inside a NetnsLab, with real traffic:
//   net_af_packet on A's veth: netdaq's socket engine (B) -> dpdk rx, every payload once; dpdk
//     tx -> a kernel UDP socket in B (the kernel accepts the engine's IPv4/UDP headers).
//   net_af_xdp on A's veth: dpdk-testpmd txonly (af_packet, B) and netdaq's afxdp engine (B)
//     -> dpdk rx, exact counts.
//   net_tap in A (ndqtap0): a kernel socket in A sends through the tap into DPDK's queues;
//     rte_flow steering by UDP port (per queue, flow ids, flow_stats), flows removed and added
//     at run time, RSS, flows the PMD refuses, isolated mode with the tap's remote netdev.
// One Session with dpdk per test (EAL once per process). With CI=true a missing tool,
// privilege or kernel feature fails instead of skipping.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <thread>

#include "dpdk_util.h"
#include "veth_fates.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {

using Clock = std::chrono::steady_clock;

// describe() plus the mode and the engine's counters (port and xstats included).
std::string details(const QueueStats& st) {
  std::string t = describe(st) + "; " + st.mode + ";";
  for (const auto& [k, v] : st.engine_counters) t += " " + k + "=" + std::to_string(v);
  return t;
}

// Rx drops: none but frames that are not IPv4/UDP (the kernels' IPv6 router solicitations,
// MLD reports, ARP on the link), which the engine counts as flow_miss and non_udp_frames.
::testing::AssertionResult only_non_udp_refused(const QueueStats& st) {
  const uint64_t non_udp = engine_counter(st, "non_udp_frames");
  if (st.total_drops() != st.drop(DropReason::flow_miss) || st.drop(DropReason::flow_miss) != non_udp ||
      st.errors != 0)
    return ::testing::AssertionFailure() << "drops other than non-UDP frames (" << non_udp << "): " << details(st);
  return ::testing::AssertionSuccess();
}

// Frames the link itself put into rx queues besides the test's (the kernels' IPv6 router
// solicitations, MLD reports, ARP): the engine counts them as non_udp_frames (and flow_miss).
// What reached the queues is what the test sent plus these.
uint64_t link_frames(const std::vector<QueueStats>& qs) {
  uint64_t n = 0;
  for (const auto& st : qs) n += engine_counter(st, "non_udp_frames");
  return n;
}

// Tx drops: none; tx_full only counts sends the ring refused for now, which were retried.
::testing::AssertionResult no_tx_loss(const QueueStats& st) {
  if (st.total_drops() != st.drop(DropReason::tx_full) || st.errors != 0)
    return ::testing::AssertionFailure() << details(st);
  return ::testing::AssertionSuccess();
}

void pin_this_thread(unsigned cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// One received packet: where it arrived, its flow id, UDP destination port, payload.
struct Got {
  size_t queue = 0;
  uint32_t flow = 0;
  uint16_t dst_port = 0;
  size_t frame_size = 0;
  Bytes payload;
};

// Polls the queues (round robin) on its own thread until stopped or `limit` passes; finish()
// waits for `want` packets (or a timeout), then `settle` more for extras.
class Gatherer {
 public:
  // keep_payloads false: the payloads stay empty (a receiver that keeps pace with a line-rate
  // sender: copying each packet out is slower than the sender on a small machine).
  Gatherer(std::vector<RxQueue*> qs, std::optional<unsigned> cpu = std::nullopt, std::chrono::seconds limit = 40s,
           bool keep_payloads = true)
      : done_(std::async(std::launch::async, [this, qs, cpu, limit, keep_payloads] {
          if (cpu) pin_this_thread(*cpu);
          std::vector<Got> out;
          out.reserve(1u << 16);
          const auto deadline = Clock::now() + limit;
          while (!stop_.load(std::memory_order_relaxed) && Clock::now() < deadline) {
            bool any = false;
            for (size_t i = 0; i < qs.size(); ++i) {
              RxBurst b = qs[i]->poll();
              for (const Packet& p : b) {
                const auto f = p.frame();
                out.push_back(Got{i, p.flow(), f.size() >= kUdpFrameOverhead ? be16(f, 36) : uint16_t{0}, f.size(),
                                  keep_payloads ? bytes_of(p) : Bytes{}});
              }
              any |= !b.empty();
            }
            count_.store(out.size(), std::memory_order_relaxed);
            if (!any) std::this_thread::sleep_for(5us);
          }
          return out;
        })) {}
  ~Gatherer() { stop_ = true; }
  size_t count() const { return count_.load(std::memory_order_relaxed); }
  std::vector<Got> finish(size_t want, std::chrono::milliseconds timeout, std::chrono::milliseconds settle = 200ms) {
    const auto deadline = Clock::now() + timeout;
    while (count() < want && Clock::now() < deadline) std::this_thread::sleep_for(2ms);
    std::this_thread::sleep_for(settle);
    stop_ = true;
    return done_.get();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<size_t> count_{0};
  std::future<std::vector<Got>> done_;
};

std::vector<Bytes> payloads_of(const std::vector<Got>& v) {
  std::vector<Bytes> out;
  for (const auto& g : v) out.push_back(g.payload);
  return out;
}

// The socket engine in B, sending to A's IPv4 address at `pps`; one datagram per frame (no
// GSO: a veth hands GSO super-packets to packet sockets unsegmented, up to 64 KiB).
std::unique_ptr<Session> socket_sender(NetnsLab& lab, uint16_t port, double pps) {
  Iface ts;
  ts.socket.gso = false;
  ts.destination = "udp://" + lab.a().ip4 + ":" + std::to_string(port);
  ts.tx_queues = 1;
  ts.rate_pps = pps;
  return lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(ts.build()); });
}

// ---- net_af_packet on a veth ----

// af_packet copies each frame into an mbuf of the queue's pool; its ring frames (framesz)
// must fit the mbuf's room after the headroom: 2048-byte buffers hold 1920 bytes, so framesz
// 1536 (the PMD's default of 2048 does not fit). The PMD assumes the frames lie back to back
// across blocks, so blocksz must be a multiple of framesz (with the default 4096-byte blocks
// the third frame is read from the wrong place and the ring stalls): 12288 = 8 x 1536.
// framecnt: 4096 frames in the kernel's ring, ~40 ms at the senders' rate.
std::string af_packet_device(unsigned n, const std::string& veth) {
  return "net_af_packet" + std::to_string(n) + ",iface=" + veth + ",blocksz=12288,framesz=1536,framecnt=4096";
}

// netdaq's socket engine in B -> netdaq dpdk (af_packet PMD on A's veth): every payload once.
// The kernel in A sees every frame too (af_packet is a tap): a socket there takes them (and
// keeps the kernel from answering ICMP port unreachable).
TEST(DpdkVeth, AfPacketReceivesEverySocketEnginePayload) {
  NDQ_REQUIRE_DPDK();
  NetnsLab lab;
  const uint16_t port = 46400;
  constexpr size_t kN = 20000, kSize = 1000;
  ASSERT_EQ(lab.exec_in(lab.b().ns, {"ping", "-c", "1", "-W", "2", lab.a().ip4}), 0);  // ARP before netdaq
  UdpSink kernel(lab, lab.a(), port);
  DpdkIface d;
  d.device = af_packet_device(0, lab.a().veth);
  d.num_bufs = 8192;
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(d.build()); });
  auto& q = rx->rx_queue("d0");
  Gatherer got({&q});
  auto tx = socket_sender(lab, port, 100000);
  // Paced by the slower of the two receivers (af_packet taps every frame to A's kernel too).
  const Delivered both = [&] { return std::min(got.count(), kernel.received()); };
  EXPECT_EQ(send_sequence(tx->tx_queue("if0"), 0, kN, kSize, both, kReceiverWindow), kN);
  const auto received = got.finish(kN, 20s);
  EXPECT_TRUE(exactly_sequence(payloads_of(received), 0, kN, kSize));
  size_t frames_ok = 0;
  for (const auto& g : received) frames_ok += g.frame_size == kUdpFrameOverhead + kSize && g.dst_port == port;
  EXPECT_EQ(frames_ok, kN);
  const QueueStats st = q.stats();
  EXPECT_TRUE(all_accounted(kN + link_frames({st}), received.size(), {st}));
  EXPECT_EQ(st.packets, kN) << details(st);
  EXPECT_TRUE(only_non_udp_refused(st));
  EXPECT_EQ(engine_counter(st, "port_imissed"), 0u) << details(st);
  EXPECT_EQ(st.pool_in_use, 0u);
  EXPECT_NE(st.mode.find("dpdk net_af_packet"), std::string::npos) << st.mode;
  const QueueStats ts = tx->tx_queue("if0").stats();
  EXPECT_TRUE(sender_accounted(kN, ts));
  EXPECT_EQ(ts.total_drops(), 0u);
  EXPECT_TRUE(exactly_sequence(kernel.finish(kN, 10s), 0, kN, kSize)) << "A's kernel got every frame too";
}

// netdaq dpdk tx (af_packet PMD on A's veth) -> a kernel UDP socket in B: the kernel accepts
// the Ethernet/IPv4/UDP headers the engine wrote, every payload once. af_packet offers no
// checksum offload: the CPU writes the IPv4 header checksum, which B's kernel checks; the UDP
// checksum is 0 (none, allowed for IPv4).
TEST(DpdkVeth, AfPacketSendsValidUdpToAKernelSocket) {
  NDQ_REQUIRE_DPDK();
  NetnsLab lab;
  const uint16_t port = 46401;
  constexpr size_t kN = 20000, kSize = 1000;
  UdpSink sink(lab, lab.b(), port);
  DpdkIface d;
  d.device = af_packet_device(1, lab.a().veth);
  d.tx_queues = 1;
  d.destination = "udp://" + lab.b().ip4 + ":" + std::to_string(port);
  d.dpdk.dst_mac = lab.mac(lab.b());
  d.dpdk.src_ip = lab.a().ip4;
  d.dpdk.src_port = 46402;
  Config c = d.build();
  c.interfaces[0].tx.rate_pps = 100000;  // the receiving thread in B reads at its pace
  auto s = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(c); });
  auto& tx = s->tx_queue("d0");
  EXPECT_EQ(send_sequence(tx, 0, kN, kSize), kN);
  EXPECT_TRUE(exactly_sequence(sink.finish(kN, 15s), 0, kN, kSize));
  const QueueStats st = tx.stats();
  EXPECT_TRUE(sender_accounted(kN, st));
  EXPECT_EQ(st.packets, kN) << details(st);
  EXPECT_TRUE(no_tx_loss(st));
  EXPECT_EQ(engine_counter(st, "port_opackets"), kN) << details(st);
  EXPECT_NE(st.mode.find("dpdk net_af_packet"), std::string::npos) << st.mode;
  EXPECT_NE(st.mode.find("checksums by the CPU"), std::string::npos) << st.mode;
}

// ---- net_af_xdp on a veth ----
// DPDK 22.11's af_xdp PMD makes the rx queue's mempool its UMEM (chunks = the mempool's
// objects, each mbuf's data right behind its header). netdaq's rx mempools hold mbuf headers
// only, their data in the region (rte_pktmbuf_pool_create_extbuf): the UMEM's chunks come out
// ~200 bytes, the kernel refuses them and rx queue setup fails ("xdp_umem_configure(): Failed
// to create umem"), with or without hugepages. These tests say what the engine must do.

std::string af_xdp_device(unsigned n, const std::string& veth) {
  return "net_af_xdp" + std::to_string(n) + ",iface=" + veth + ",start_queue=0,queue_count=1";
}

// The af_xdp PMD pairs rx and tx queues (its dev_configure refuses 1 rx + 0 tx with EINVAL):
// a tx queue that sends nothing comes along.
DpdkIface af_xdp_iface(unsigned n, const NetnsLab& lab) {
  DpdkIface d;
  d.device = af_xdp_device(n, lab.a().veth);
  d.tx_queues = 1;
  d.num_bufs = 16384;
  d.dpdk.rx_desc = 4096;
  return d;
}

// dpdk-testpmd txonly (af_packet PMD in B) -> netdaq dpdk (af_xdp PMD on A's veth): every
// frame of testpmd's TX-packets is received (each checked) or counted by the PMD as missed,
// the same drops the kernel's veth counted (veth_fates.h), whether or not the loaded machine
// drops; the PMD's XDP program is gone when the session closes.
TEST(DpdkVeth, AfXdpCountsEveryFrameTestpmdSent) {
  NDQ_REQUIRE_DPDK();
  NDQ_REQUIRE_TOOL("dpdk-testpmd", "dpdk-dev");
  NDQ_REQUIRE_TOOL("ethtool", "ethtool");
  NetnsLab lab;
  const uint16_t port = 46410;
  constexpr uint64_t kN = 20000;
  constexpr size_t kPayload = 1000;
  const DpdkIface d = af_xdp_iface(0, lab);
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(d.build()); });
  EXPECT_TRUE(xdp_attached(lab, lab.a()));
  auto& q = rx->rx_queue("d0");

  TestpmdTxOptions o;
  o.ns = lab.b().ns;
  o.veth = lab.b().veth;
  o.flow = lab_flow(lab, lab.b(), lab.a(), 9000, port);
  o.payload_size = kPayload;
  o.count = kN;
  Gatherer got({&q}, allowed_cpu(o.main_cpu), 40s, false);
  const VethFates before = veth_fates(lab, lab.b(), lab.a());
  const PeerReport tx = testpmd_txonly_af_packet(o);
  // Once every frame sent has met its fate in the kernel, the PMD has it, or missed it.
  const VethFates k = await_veth_fates(lab, lab.b(), lab.a(), before, tx.ok ? tx.packets : kN);
  const auto received = got.finish(tx.ok ? tx.packets - k.dropped() : kN, 10s, 300ms);
  ASSERT_TRUE(tx.ok) << describe(tx);
  EXPECT_EQ(tx.packets, kN) << describe(tx);
  EXPECT_EQ(tx.dropped, 0u) << describe(tx);
  size_t ok = 0;
  for (const auto& g : received) ok += g.frame_size == kUdpFrameOverhead + kPayload && g.dst_port == port;
  EXPECT_EQ(ok, received.size()) << "frames of another size or port";
  const QueueStats st = q.stats();
  const uint64_t missed = st.drop(DropReason::kernel);  // the PMD's imissed
  EXPECT_GT(received.size(), 0u) << details(st);
  EXPECT_EQ(received.size() + missed, tx.packets) << "received or missed, of testpmd's TX-packets; " << details(st);
  EXPECT_EQ(missed, k.dropped()) << "the PMD missed what the kernel dropped: " << k.describe();
  EXPECT_TRUE(all_accounted(tx.packets + link_frames({st}), received.size(), {st}));
  EXPECT_EQ(st.packets, received.size()) << details(st);
  EXPECT_EQ(st.total_drops(), missed + engine_counter(st, "non_udp_frames")) << "no drops but missed and non-UDP frames; "
                                                                          << details(st);
  EXPECT_EQ(st.pool_in_use, 0u);
  EXPECT_NE(st.mode.find("dpdk net_af_xdp"), std::string::npos) << st.mode;
  std::printf("[   dpdk   ] testpmd %llu sent, netdaq af_xdp %llu received; %s\n",
              static_cast<unsigned long long>(tx.packets), static_cast<unsigned long long>(received.size()),
              st.mode.c_str());
  rx.reset();
  EXPECT_FALSE(xdp_attached(lab, lab.a())) << "the af_xdp PMD left its XDP program on " << lab.a().veth;
}

// netdaq's afxdp engine sends from B (tx queue 0 of B's veth) -> netdaq dpdk (af_xdp PMD on
// A's veth): every payload once.
TEST(DpdkVeth, AfXdpReceivesEveryAfxdpEnginePayload) {
  NDQ_REQUIRE_DPDK();
  NDQ_REQUIRE(afxdp_built(), "netdaq was built without the afxdp engine");
  NetnsLab lab;
  const uint16_t port = 46411;
  constexpr size_t kN = 20000, kSize = 1000;
  const DpdkIface d = af_xdp_iface(1, lab);
  auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(d.build()); });
  auto& q = rx->rx_queue("d0");
  Gatherer got({&q});
  AfxdpIface ts{.dev = lab.b().veth, .tx_queue = 0, .destination = "udp://" + lab.a().ip4 + ":" + std::to_string(port),
                .dst_mac = lab.mac(lab.a()), .rate_pps = 100000};
  auto tx = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(ts.build()); });
  EXPECT_EQ(send_sequence(tx->tx_queue("x0"), 0, kN, kSize, [&] { return got.count(); }, kReceiverWindow), kN);
  const auto received = got.finish(kN, 20s);
  EXPECT_TRUE(exactly_sequence(payloads_of(received), 0, kN, kSize));
  const QueueStats st = q.stats();
  EXPECT_TRUE(all_accounted(kN + link_frames({st}), received.size(), {st}));
  EXPECT_EQ(st.packets, kN) << details(st);
  EXPECT_TRUE(only_non_udp_refused(st));
  const QueueStats sent_stats = tx->tx_queue("x0").stats();
  EXPECT_TRUE(sender_accounted(kN, sent_stats));
  EXPECT_EQ(sent_stats.total_drops(), 0u);
}

// ---- net_tap ----

constexpr const char* kTap = "ndqtap0";
const std::string kTapIp = "10.213.0.1", kPeerIp = "10.213.0.2", kPeerMac = "02:00:00:d5:00:02";

// Whether this kernel has the TC pieces the tap PMD's rte_flow uses (a multiq root qdisc, the
// flower classifier, skbedit and gact actions): "" when it has, else what `tc` said. Tried on
// a veth pair of its own in A with two tx queues (multiq refuses single-queue devices with
// EOPNOTSUPP, as the lab's veth is; the tap device is multi-queue), then removed.
std::string tap_flow_kernel_support(const NetnsLab& lab) {
  const std::string dev = "ndqprobe0";
  std::string out;
  std::string why;
  if (lab.exec_in(lab.a().ns, {"ip", "link", "add", dev, "numtxqueues", "2", "numrxqueues", "2", "type", "veth", "peer",
                               "name", "ndqprobe1"},
                  &out) != 0) {
    return "cannot make a veth pair to try TC on: " + out;
  }
  if (lab.exec_in(lab.a().ns, {"tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "multiq"}, &out) != 0) {
    why = "tc qdisc add ... multiq: " + out;
  } else if (lab.exec_in(lab.a().ns, {"tc", "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1",
                                      "flower", "ip_proto", "udp", "dst_port", "6000", "action", "skbedit",
                                      "queue_mapping", "0", "action", "gact", "pass"},
                         &out) != 0) {
    why = "tc filter add ... flower ... skbedit, gact: " + out;
  }
  lab.exec_in(lab.a().ns, {"ip", "link", "del", dev});
  return why.empty() ? why : "this kernel lacks what the tap PMD's rte_flow needs (" + why + ")";
}

// On a kernel without those TC pieces (the CI and development VMs: no cls_flower, multiq,
// skbedit or gact) steering cannot happen: the steering tests skip there, saying so, and
// DpdkTap.FlowsAreRefusedWhereTheKernelLacksTc checks what such a machine does instead
// (refuse the flows, naming them and the driver). They run for real in the ctest test
// guest_kernel_tests (a QEMU guest with Debian's stock kernel, required with
// CI=true), which sets NETDAQ_REQUIRE_TAP_FLOWS=1: there a missing piece is a failure.
bool tap_flows_required() { return env_is("NETDAQ_REQUIRE_TAP_FLOWS"); }
#define NDQ_REQUIRE_TAP_FLOWS(lab)                                                                        \
  do {                                                                                                    \
    NDQ_REQUIRE_TOOL("tc", "iproute2");                                                                   \
    const std::string tc_why_ = tap_flow_kernel_support(lab);                                             \
    if (!tc_why_.empty()) {                                                                               \
      if (tap_flows_required()) FAIL() << tc_why_ << " (NETDAQ_REQUIRE_TAP_FLOWS=1: flows must steer)";   \
      GTEST_SKIP() << tc_why_ << ": the ctest test guest_kernel_tests runs this in a kernel " \
                                 "that has them";                                                         \
    }                                                                                                     \
  } while (0)

// The tap PMD pairs rx and tx queues too (its dev_configure refuses 2 rx + 0 tx): tx queues
// that send nothing come along.
DpdkIface tap_iface(unsigned rx_queues, std::vector<FlowConfig> flows = {}, const std::string& extra = "") {
  DpdkIface d;
  d.device = std::string("net_tap0,iface=") + kTap + extra;
  d.rx_queues = rx_queues;
  d.tx_queues = rx_queues;
  d.flows = std::move(flows);
  return d;
}

// The dpdk session (the tap netdev appears in A), then the tap's kernel side: an address, and
// a neighbour that exists only as a static entry, so datagrams sent to it leave through the
// tap into DPDK's queues. IPv6 is off on the tap (no router solicitations, MLD).
std::unique_ptr<Session> open_tap(NetnsLab& lab, const DpdkIface& d) {
  lab.exec_in(lab.a().ns, {"sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"});
  auto s = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(d.build()); });
  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{"ip", "addr", "add", kTapIp + "/24", "dev", kTap},
        std::vector<std::string>{"ip", "link", "set", kTap, "up"},
        std::vector<std::string>{"ip", "neigh", "replace", kPeerIp, "lladdr", kPeerMac, "dev", kTap, "nud",
                                 "permanent"}}) {
    std::string out;
    if (lab.exec_in(lab.a().ns, cmd, &out) != 0) throw std::runtime_error("setting up " + std::string(kTap) + ": " + out);
  }
  return s;
}

// A kernel UDP socket in A: `count` payloads (seq first..) to kPeerIp:port, paced (64 per ms).
size_t kernel_send(NetnsLab& lab, const std::string& to, uint16_t port, uint64_t first, size_t count, size_t size,
                   Socket* from = nullptr) {
  Socket own;
  if (!from) {
    own = lab.run_in(lab.a().ns, [] { return Socket::udp(); });
    from = &own;
  }
  size_t ok = 0;
  for (size_t i = 0; i < count; ++i) {
    ok += from->send_to(to, port, make_payload(first + i, size));
    if (i % 64 == 63) std::this_thread::sleep_for(1ms);
  }
  return ok;
}

size_t on_queue(const std::vector<Got>& v, size_t queue, uint16_t port, std::optional<uint32_t> flow = std::nullopt) {
  size_t n = 0;
  for (const auto& g : v) n += g.queue == queue && g.dst_port == port && (!flow || g.flow == *flow);
  return n;
}

const FlowStats* find_flow(const std::vector<FlowStats>& v, uint32_t id) {
  for (const auto& f : v)
    if (!f.unmatched && f.flow == id) return &f;
  return nullptr;
}

FlowConfig port_flow(uint32_t id, uint16_t queue, uint16_t udp_dst) { return udp_flow(id, queue, udp_dst); }

::testing::AssertionResult flows_refused_by_tap(NetnsLab& lab) {
  const DpdkIface d = tap_iface(2, {port_flow(1, 0, 6000), port_flow(2, 1, 6001)});
  std::string error = "(no error)";
  lab.run_in(lab.a().ns, [&] {
    try {
      Session s(d.build());
    } catch (const Error& e) {
      error = e.code() == Errc::unsupported ? e.what() : std::string("wrong code: ") + e.what();
    }
  });
  if (error.find("flow 1 (udp_dst 6000 -> queue 0): driver net_tap cannot steer it") == std::string::npos)
    return ::testing::AssertionFailure() << error;
  return ::testing::AssertionSuccess();
}

// Where the kernel lacks the TC pieces, flows are refused with an error naming the flow and
// the driver (an Errc::unsupported Error), not accepted and silently never steered. On a
// kernel that has them (the guest) the steering tests above run instead.
TEST(DpdkTap, FlowsAreRefusedWhereTheKernelLacksTc) {
  NDQ_REQUIRE_DPDK();
  NDQ_REQUIRE_TOOL("tc", "iproute2");
  NetnsLab lab;
  const std::string tc_why = tap_flow_kernel_support(lab);
  if (tc_why.empty()) GTEST_SKIP() << "this kernel has the TC pieces: DpdkTap.FlowsSteer* steers for real here";
  std::printf("[   note   ] %s\n", tc_why.c_str());
  EXPECT_TRUE(flows_refused_by_tap(lab));
}

// No flows: what the kernel sends through the tap reaches DPDK's queues, exactly.
TEST(DpdkTap, KernelDatagramsThroughTheTapArriveExactly) {
  NDQ_REQUIRE_DPDK();
  NetnsLab lab;
  constexpr size_t kN = 3000, kSize = 800;
  auto s = open_tap(lab, tap_iface(2));
  std::vector<RxQueue*> qs{&s->rx_queue("d0", 0), &s->rx_queue("d0", 1)};
  Gatherer got(qs);
  const size_t sent0 = kernel_send(lab, kPeerIp, 6000, 0, kN, kSize);
  const size_t sent1 = kernel_send(lab, kPeerIp, 6001, kN, kN, kSize);
  EXPECT_EQ(sent0, kN);
  EXPECT_EQ(sent1, kN);
  const auto received = got.finish(2 * kN, 10s);
  EXPECT_TRUE(exactly_sequence(payloads_of(received), 0, 2 * kN, kSize));
  const auto stats = stats_of(qs);
  EXPECT_TRUE(all_accounted(sent0 + sent1 + link_frames(stats), received.size(), stats));
  uint64_t packets = 0;
  for (auto* q : qs) {
    const QueueStats st = q->stats();
    packets += st.packets;
    EXPECT_TRUE(only_non_udp_refused(st));
    EXPECT_NE(st.mode.find("dpdk net_tap"), std::string::npos) << st.mode;
  }
  EXPECT_EQ(packets, 2 * kN);
  EXPECT_TRUE(s->flow_stats().empty());
}

// Flows the tap PMD cannot steer (a UDP port range: TC has no ranges) are refused with
// Error(unsupported) naming the flow and the driver; the session keeps working without them.
// A flow to a queue that does not exist is a config error.
TEST(DpdkTap, RefusedFlowsNameTheFlowAndTheDriver) {
  NDQ_REQUIRE_DPDK();
  NetnsLab lab;
  auto s = open_tap(lab, tap_iface(2));
  FlowConfig range = port_flow(7, 0, 7000);
  range.match.udp_dst_end = 7010;
  try {
    s->add_flow("d0", range);
    ADD_FAILURE() << "the tap PMD accepted a UDP port range";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("flow 7 "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("net_tap"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("udp_dst 7000-7010"), std::string::npos) << e.what();
    std::printf("[   dpdk   ] %s\n", e.what());
  }
  try {
    s->add_flow("d0", port_flow(8, 5, 7020));
    ADD_FAILURE() << "a flow to rx queue 5 of 2 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_config) << e.what();
  }
  EXPECT_TRUE(s->flow_stats().empty()) << "refused flows are not kept";
  EXPECT_THROW(s->remove_flow("d0", 7), Error);
  const std::vector<RxQueue*> qs{&s->rx_queue("d0", 0), &s->rx_queue("d0", 1)};
  Gatherer got(qs);
  const size_t sent = kernel_send(lab, kPeerIp, 7000, 0, 500, 300);
  EXPECT_EQ(sent, 500u);
  const auto received = got.finish(500, 10s);
  EXPECT_TRUE(exactly_sequence(payloads_of(received), 0, 500, 300)) << "after the refusals";
  const auto stats = stats_of(qs);
  EXPECT_TRUE(all_accounted(sent + link_frames(stats), received.size(), stats));
}

// Flows steer UDP ports to queues (TC flower + skbedit on the tap), each packet arrives on its
// flow's queue with its flow id; at run time a flow is removed and another steers its port
// elsewhere; an RSS flow spreads source ports over both queues where the PMD can (BPF).
TEST(DpdkTap, FlowsSteerPortsToQueuesAndChangeAtRunTime) {
  NDQ_REQUIRE_DPDK();
  NetnsLab lab;
  NDQ_REQUIRE_TAP_FLOWS(lab);
  constexpr size_t kN = 2000, kSize = 600;
  auto s = open_tap(lab, tap_iface(2, {port_flow(1, 0, 6000), port_flow(2, 1, 6001)}));
  std::vector<RxQueue*> qs{&s->rx_queue("d0", 0), &s->rx_queue("d0", 1)};
  size_t sent = 0, delivered = 0;  // over every phase below (the queues' counters are too)
  {
    Gatherer got(qs);
    EXPECT_EQ(kernel_send(lab, kPeerIp, 6000, 0, kN, kSize), kN);
    EXPECT_EQ(kernel_send(lab, kPeerIp, 6001, kN, kN, kSize), kN);
    sent += 2 * kN;
    const auto v = got.finish(2 * kN, 10s);
    delivered += v.size();
    EXPECT_TRUE(exactly_sequence(payloads_of(v), 0, 2 * kN, kSize));
    EXPECT_EQ(on_queue(v, 0, 6000, 1), kN) << "flow 1 on queue 0";
    EXPECT_EQ(on_queue(v, 1, 6001, 2), kN) << "flow 2 on queue 1";
    std::printf("[   dpdk   ] steered: port 6000 (flow 1) %zu on queue 0, %zu on queue 1; port 6001 (flow 2) %zu on "
                "queue 0, %zu on queue 1\n",
                on_queue(v, 0, 6000), on_queue(v, 1, 6000), on_queue(v, 0, 6001), on_queue(v, 1, 6001));
    const auto fs = s->flow_stats();
    ASSERT_NE(find_flow(fs, 1), nullptr);
    ASSERT_NE(find_flow(fs, 2), nullptr);
    EXPECT_EQ(find_flow(fs, 1)->packets, kN);
    EXPECT_EQ(find_flow(fs, 2)->packets, kN);
    EXPECT_EQ(find_flow(fs, 1)->wrong_queue, 0u);
    EXPECT_EQ(find_flow(fs, 2)->wrong_queue, 0u);
  }
  // At run time: port 6001 moves to queue 0 (flow 3).
  s->remove_flow("d0", 2);
  s->add_flow("d0", port_flow(3, 0, 6001));
  {
    Gatherer got(qs);
    EXPECT_EQ(kernel_send(lab, kPeerIp, 6001, 2 * kN, kN, kSize), kN);
    sent += kN;
    const auto v = got.finish(kN, 10s);
    delivered += v.size();
    EXPECT_TRUE(exactly_sequence(payloads_of(v), 2 * kN, kN, kSize));
    EXPECT_EQ(on_queue(v, 0, 6001, 3), kN) << "port 6001 now lands on queue 0 as flow 3";
    std::printf("[   dpdk   ] at run time, flow 2 removed, flow 3 added: port 6001 %zu on queue 0, %zu on queue 1\n",
                on_queue(v, 0, 6001), on_queue(v, 1, 6001));
    const auto fs = s->flow_stats();
    EXPECT_EQ(find_flow(fs, 2), nullptr) << "flow 2 was removed";
    ASSERT_NE(find_flow(fs, 3), nullptr);
    EXPECT_EQ(find_flow(fs, 3)->packets, kN);
    EXPECT_EQ(find_flow(fs, 3)->wrong_queue, 0u);
  }
  // RSS over both queues, where the PMD can (its RSS is a BPF program in TC). DPDK 22.11's
  // (Debian 12) cannot on any kernel: the verifier refuses its hash program ("R1 type=scalar
  // expected=map_ptr": the map's fd is loaded as a plain number), so there the flow is refused.
  FlowConfig rss = port_flow(4, 0, 6002);
  rss.queues = {0, 1};
  bool rss_ok = true;
  try {
    s->add_flow("d0", rss);
  } catch (const Error& e) {
    rss_ok = false;
    EXPECT_EQ(e.code(), Errc::unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("flow 4 "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("net_tap"), std::string::npos) << e.what();
    if (tap_flows_required()) {  // the kernel has every TC piece: only that DPDK defect may refuse it
      EXPECT_NE(std::string(e.what()).find("support BPF program loading"), std::string::npos) << e.what();
    }
    std::printf("[   dpdk   ] net_tap RSS flow refused: %s\n", e.what());
  }
  if (rss_ok) {
    Gatherer got(qs);
    constexpr size_t kSockets = 16, kEach = 200;
    size_t sent_rss = 0;
    for (size_t k = 0; k < kSockets; ++k) sent_rss += kernel_send(lab, kPeerIp, 6002, 100000 + k * kEach, kEach, kSize);
    EXPECT_EQ(sent_rss, kSockets * kEach);
    sent += sent_rss;
    const auto v = got.finish(kSockets * kEach, 10s);
    delivered += v.size();
    EXPECT_TRUE(exactly_sequence(payloads_of(v), 100000, kSockets * kEach, kSize));
    std::printf("[   dpdk   ] RSS flow 4 (%zu source ports): %zu on queue 0, %zu on queue 1\n", kSockets,
                on_queue(v, 0, 6002, 4), on_queue(v, 1, 6002, 4));
    EXPECT_GT(on_queue(v, 0, 6002, 4), 0u) << "RSS: some source ports on queue 0";
    EXPECT_GT(on_queue(v, 1, 6002, 4), 0u) << "RSS: some source ports on queue 1";
    const auto fs = s->flow_stats();
    ASSERT_NE(find_flow(fs, 4), nullptr);
    EXPECT_EQ(find_flow(fs, 4)->packets, kSockets * kEach);
    EXPECT_EQ(find_flow(fs, 4)->wrong_queue, 0u);
  }
  const auto stats = stats_of(qs);
  EXPECT_TRUE(all_accounted(sent + link_frames(stats), delivered, stats));
  for (const auto& st : stats) EXPECT_TRUE(only_non_udp_refused(st));
}

// dpdk.isolate with the tap's remote netdev (A's veth): traffic from B matching a flow is
// redirected into the tap (netdaq), the rest stays with A's kernel (a socket there gets it).
TEST(DpdkTap, IsolatedFlowsToNetdaqRestToTheKernel) {
  NDQ_REQUIRE_DPDK();
  NetnsLab lab;
  NDQ_REQUIRE_TAP_FLOWS(lab);
  const uint16_t p_flow = 46420, p_kernel = 46421;
  constexpr size_t kN = 3000, kSize = 700;
  ASSERT_EQ(lab.exec_in(lab.b().ns, {"ping", "-c", "1", "-W", "2", lab.a().ip4}), 0);
  DpdkIface d = tap_iface(1, {port_flow(1, 0, p_flow)}, ",remote=" + lab.a().veth);
  d.dpdk.isolate = true;
  auto s = open_tap(lab, d);
  UdpSink kernel(lab, lab.a(), p_kernel);
  Gatherer got({&s->rx_queue("d0")});
  auto t1 = socket_sender(lab, p_flow, 50000);
  auto t2 = socket_sender(lab, p_kernel, 50000);
  EXPECT_EQ(send_sequence(t1->tx_queue("if0"), 0, kN, kSize), kN);
  EXPECT_EQ(send_sequence(t2->tx_queue("if0"), kN, kN, kSize), kN);
  EXPECT_TRUE(sender_accounted(kN, t1->tx_queue("if0").stats()));
  EXPECT_TRUE(sender_accounted(kN, t2->tx_queue("if0").stats()));
  const auto v = got.finish(kN, 10s);
  EXPECT_TRUE(exactly_sequence(payloads_of(v), 0, kN, kSize)) << "the flow's port into netdaq";
  // Only the flow's port goes to netdaq; the other is the kernel's.
  const QueueStats st = s->rx_queue("d0").stats();
  EXPECT_TRUE(all_accounted(kN + link_frames({st}), v.size(), {st}));
  EXPECT_EQ(on_queue(v, 0, p_flow, 1), kN);
  const auto to_kernel = kernel.finish(kN, 10s);
  EXPECT_TRUE(exactly_sequence(to_kernel, kN, kN, kSize)) << "the other port to A's kernel";
  std::printf("[   dpdk   ] isolated: port %u (flow 1) %zu to netdaq, %zu other packets to netdaq; port %u %zu to "
              "A's kernel\n",
              p_flow, on_queue(v, 0, p_flow, 1), v.size() - on_queue(v, 0, p_flow, 1), p_kernel, to_kernel.size());
  std::string ping;
  EXPECT_EQ(lab.exec_in(lab.b().ns, {"ping", "-c", "2", "-i", "0.2", "-W", "2", lab.a().ip4}, &ping), 0)
      << "ping to A's kernel while isolated: " << ping;
}

}  // namespace

// dpdk tx through the tap to a kernel socket with the checksums left to the driver (the tap
// driver offers IPv4 and UDP checksum offload): the kernel verifies both and accepts every
// datagram only if the engine set the offload flags and the pseudo-header sum right.
TEST(DpdkTap, ChecksumOffloadedDatagramsReachAKernelSocket) {
  NDQ_REQUIRE_DPDK();
  NetnsLab lab;
  DpdkIface d = tap_iface(1);
  d.tx_queues = 1;
  d.destination = "udp://" + lab.a().ip4 + ":47300";  // a local address of A (the sink binds it)
  d.dpdk.src_ip = kPeerIp;
  // The tap netdev's MAC is random and unknown before the device exists; the kernel takes an
  // L2 broadcast carrying a unicast IP for this host (drop_unicast_in_l2_multicast is off).
  d.dpdk.dst_mac = "ff:ff:ff:ff:ff:ff";
  auto session = open_tap(lab, d);
  auto& tx = session->tx_queue("d0", 0);
  const QueueStats before = tx.stats();
  EXPECT_NE(before.mode.find("checksum offload"), std::string::npos) << before.mode;
  UdpSink sink(lab, lab.a(), 47300);
  ASSERT_EQ(send_sequence(tx, 0, 3000, 700), 3000u);
  EXPECT_TRUE(exactly_sequence(sink.finish(3000, 10s), 0, 3000, 700));
  EXPECT_TRUE(sender_accounted(3000, tx.stats()));
  lab.run_in(lab.a().ns, [&] { session.reset(); });
}
