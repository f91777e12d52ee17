// Hugepage-backed memory regions on real hugepages: the test reserves 2 MiB pages itself
// (root), checks the region really sits on them, pushes real UDP traffic through a session
// that uses them, and gives the pages back even when an assertion fails.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "core/memory_region.h"
#include "hugepage_pool.h"
#include "netdaq/netdaq.h"
#include "test_util.h"

using namespace netdaq;
using namespace ndqtest;

namespace {

const std::string kHugeDir = "/sys/kernel/mm/hugepages/hugepages-2048kB/";

long read_count(const std::string& file) {
  std::ifstream in(kHugeDir + file);
  long v = -1;
  in >> v;
  return v;
}

#define NDQ_REQUIRE_HUGEPAGES()                                                               \
  NDQ_REQUIRE(geteuid() == 0, "reserving hugepages needs root");                            \
  NDQ_REQUIRE(access((kHugeDir + "nr_hugepages").c_str(), W_OK) == 0, "no 2 MiB hugepage pool in sysfs")

MemoryRegionConfig huge_region(const std::string& name, uint32_t buf_size, uint32_t num_bufs) {
  MemoryRegionConfig r;
  r.name = name;
  r.kind = MemoryKind::huge;
  r.hugepages_required = true;
  r.buf_size = buf_size;
  r.num_bufs = num_bufs;
  return r;
}

}  // namespace

TEST(Hugepages, RegionTakesReservedPagesAndGivesThemBack) {
  NDQ_REQUIRE_HUGEPAGES();
  Hugepages reserve(8);
  ASSERT_TRUE(reserve.ok()) << "could not reserve 8 hugepages";
  const long free_before = read_count("free_hugepages");
  {
    // 2048 x 2 KiB = 4 MiB: two hugepages.
    auto region = detail::create_region(huge_region("h", 2048, 2048));
    EXPECT_EQ(region->kind(), MemoryKind::huge);
    EXPECT_EQ(region->size() % (2u << 20), 0u);
    EXPECT_EQ(read_count("free_hugepages"), free_before - 2);
    std::memset(region->base(), 0x5a, region->size());
  }
  EXPECT_EQ(read_count("free_hugepages"), free_before);
}

TEST(Hugepages, RequiredButUnavailableSaysHowToReserve) {
  NDQ_REQUIRE_HUGEPAGES();
  // Ask for more than are free (after reserving none extra).
  const long free_now = read_count("free_hugepages");
  auto cfg = huge_region("toomuch", 2048, static_cast<uint32_t>((free_now + 4) * 1024));
  try {
    detail::create_region(cfg);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::resource);
    EXPECT_NE(std::string(e.what()).find("nr_hugepages"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'toomuch'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_count("free_hugepages"), free_now);  // nothing left behind
}

// Real UDP traffic received into hugepage buffers, every byte checked.
TEST(Hugepages, SocketSessionReceivesIntoHugepages) {
  NDQ_REQUIRE_HUGEPAGES();
  Hugepages reserve(8);
  ASSERT_TRUE(reserve.ok());
  const long free_before = read_count("free_hugepages");
  const uint16_t port = free_port(SOCK_DGRAM);
  Iface rs;
  rs.address = "udp://127.0.0.1:" + std::to_string(port);
  rs.rx_queues = 1;
  Config rcfg = rs.build();
  for (auto& r : rcfg.memory_regions) {
    r.kind = MemoryKind::huge;
    r.hugepages_required = true;
  }
  Iface ts;
  ts.destination = rs.address;
  ts.tx_queues = 1;
  {
    Session rx(rcfg);
    EXPECT_LT(read_count("free_hugepages"), free_before);
    Session tx(ts.build());
    std::vector<Bytes> payloads;
    for (uint64_t i = 0; i < 2000; ++i) payloads.push_back(make_payload(i, 100 + i % 1300));
    ASSERT_EQ(send_payloads(tx.tx_queue("if0"), payloads, 5000ms), payloads.size());
    const auto got = collect(rx.rx_queue("if0"), payloads.size(), 5000ms);
    EXPECT_TRUE(all_accounted(payloads.size(), got.size(), {rx.rx_queue("if0").stats()}));
    EXPECT_TRUE(sender_accounted(payloads.size(), tx.tx_queue("if0").stats()));
    ASSERT_EQ(got.size(), payloads.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(check_payload(got[i], i, payloads[i].size()));
  }
  EXPECT_EQ(read_count("free_hugepages"), free_before);
}
