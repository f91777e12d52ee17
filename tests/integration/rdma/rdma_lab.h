// Shared pieces of the rdma engine's tests: the Soft-RoCE lab they run in (tests/guest/
// rdma-lab.sh, exported by rdma-peers-check.sh), its devices' counters, and helpers.
#pragma once

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
// device_env: NDQ_RDMA_DEV0 or NDQ_RDMA_DEV1.
uint64_t device_counter(const char* device_env, const std::string& counter);

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
