// Shared pieces of the afxdp integration tests: configs for afxdp receivers and senders in
// a netns lab (afxdp_config.h), sequences of payloads sent and checked.
#pragma once

#include <string>
#include <vector>

#include "afxdp_config.h"
#include "netns_lab.h"
#include "peers.h"
#include "test_util.h"

namespace ndqtest {

bool afxdp_built();
// Root, the namespace lab and the afxdp engine; with CI=true a missing piece fails the test.
#define NDQ_REQUIRE_AFXDP()                                                                                  \
  do {                                                                                                       \
    NDQ_REQUIRE_ROOT();                                                                                      \
    NDQ_REQUIRE(::ndqtest::afxdp_built(), "netdaq was built without the afxdp engine (libxdp-dev, libbpf-dev, clang)"); \
  } while (0)

// Sends count payloads (make_payload(first + i, size)) through a TX queue; returns the number sent.
// delivered/window: see send_payloads (a sender paced by its receiver).
size_t send_sequence(netdaq::TxQueue& q, uint64_t first, size_t count, size_t size, const Delivered& delivered = {},
                     size_t window = 0);
// Checks that packets are exactly payloads first..first+count-1 (any order).
::testing::AssertionResult exactly_sequence(const std::vector<Bytes>& got, uint64_t first, size_t count, size_t size);

// Whether an XDP program is attached to the veth of a side ("prog/xdp" in `ip link show`).
// Throws std::runtime_error when `ip` fails (the test fails, rather than reading "none").
bool xdp_attached(const NetnsLab& lab, const NetnsLab::Side& side);

}  // namespace ndqtest
