// Shared pieces of the rdma engine's tests: the Soft-RoCE lab they run in (tests/guest/
// rdma-lab.sh, exported by rdma-peers-check.sh), its devices' counters, and helpers.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "netdaq/session.h"
#include "test_util.h"

namespace ndqtest {

struct Lab {
  std::string client_ip, server_ip;  // NDQ_RDMA_IP0 (device 0), NDQ_RDMA_IP1 (device 1)
};
// The lab's addresses; nullopt outside it.
std::optional<Lab> lab();

#define NDQ_REQUIRE_LAB()                                                                                 \
  NDQ_REQUIRE(::ndqtest::lab().has_value(), "no RDMA lab (NDQ_RDMA_IP0/IP1 unset): these tests run in the QEMU guest " \
                                            "(ctest -R guest_kernel_tests)")

// Packets a lab device sent or received (its port's hw counter, as `rdma statistic` shows);
// device_env: NDQ_RDMA_DEV0 or NDQ_RDMA_DEV1. A counter that cannot be read (no such device
// or counter) is a test failure (and reads 0).
uint64_t device_counter(const char* device_env, const std::string& counter);

// Proof that a test's messages crossed the veth between the lab's two devices (rxe loopback
// inside one device moves only that device's counters): made at the test's start, it reads
// both devices' sent_pkts and rcvd_pkts; crossed() then checks that device 0 sent and device 1
// received at least `to_dev1` packets since, and device 1 sent and device 0 received at least
// `to_dev0` (a message is one packet or more: the lab's RoCE MTU is 1024 bytes). Every rdma
// lab test that moves messages checks it:
//   const Wire wire;  ...  EXPECT_TRUE(wire.crossed(kN));
class Wire {
 public:
  ::testing::AssertionResult crossed(uint64_t to_dev1, uint64_t to_dev0 = 0) const;

 private:
  struct Counts {
    uint64_t sent0, rcvd0, sent1, rcvd1;
  };
  static Counts now();
  Counts start_ = now();
};

// Queue pairs of this host whose type is `type` ("RC", "UC"), as `rdma resource show qp` lists them.
size_t queue_pairs_of_type(const std::string& type);

// What opening a session with `c` throws ("" when it opens).
std::string error_of(const netdaq::Config& c);

// A message as a receiver saw it: its bytes and its immediate.
struct Message {
  Bytes bytes;
  std::optional<uint32_t> immediate;
};
// Polls q (releasing each burst at once) until n messages came or the time is up.
std::vector<Message> collect_messages(netdaq::RxQueue& q, size_t n, std::chrono::seconds limit);

}  // namespace ndqtest
