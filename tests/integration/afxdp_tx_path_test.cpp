// The afxdp engine's TX path (issue 34): buffers the kernel completed are handed out again
// first (a stack in the port, before the pool's free list), and in copy mode one send call
// takes a whole burst (XDP_MAX_TX_SKB_BUDGET, Linux 6.17+). A buffer handed out while the
// kernel still held it would show as a payload overwritten before it left; every one must
// arrive once, intact, and every buffer come back.
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <cstdio>
#include <memory>

#include "afxdp_util.h"

using namespace netdaq;
using namespace ndqtest;
using namespace std::chrono_literals;

namespace {
bool kernel_at_least(int major, int minor) {
  utsname u{};
  int ma = 0, mi = 0;
  return uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &ma, &mi) == 2 && (ma > major || (ma == major && mi >= minor));
}
}  // namespace

TEST(AfxdpTxPath, ReusedBuffersCarryEveryPayloadOnceAndABurstIsOneSendCall) {
  NDQ_REQUIRE_AFXDP();
  NetnsLab lab;
  const uint16_t port = 46131;
  const size_t n = 30000;
  AfxdpIface ts{.dev = lab.b().veth, .tx_queue = 0, .destination = "udp://" + lab.a().ip4 + ":" + std::to_string(port),
                .dst_mac = lab.mac(lab.a())};
  auto tx = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(ts.build()); });
  UdpSink sink(lab, lab.a(), port);
  // Unpaced, at most 256 ahead of what the sink has read (its socket buffer is the limit)
  EXPECT_EQ(send_sequence(tx->tx_queue("x0"), 0, n, 1000, [&] { return sink.received(); }, 256), n);
  EXPECT_TRUE(exactly_sequence(sink.finish(n, 20s), 0, n, 1000));
  const QueueStats st = tx->tx_queue("x0").stats();
  EXPECT_TRUE(sender_accounted(n, st));
  EXPECT_EQ(st.packets, n) << describe(st);
  EXPECT_EQ(st.total_drops(), 0u) << describe(st);
  if (kernel_at_least(6, 17)) {
    EXPECT_NE(st.mode.find("frames a send call"), std::string::npos) << "the kernel took XDP_MAX_TX_SKB_BUDGET: " << st.mode;
    // One call per burst, plus a retry where the kernel was busy (EAGAIN): well under the two
    // calls a burst of more than 32 frames needed at 32 a call.
    EXPECT_LE(engine_counter(st, "kicks"), st.bursts + st.bursts / 4) << describe(st);
  }
  tx.reset();  // waits for completions; the port gives its stack back to the pool
}
