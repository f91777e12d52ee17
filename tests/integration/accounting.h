// The invariant every traffic test checks: each packet sent was delivered or counted under
// exactly one drop reason. As gtest assertions that name every count when they fail:
//
//   EXPECT_TRUE(all_accounted(sent, rx_stats));               // delivered = rx_stats.packets
//   EXPECT_TRUE(all_accounted(sent, delivered, {rx0, rx1}));  // several receiving queues
//   EXPECT_TRUE(sender_accounted(offered, tx_stats));         // offered = accepted + tx drops but tx_full
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "netdaq/stats.h"

namespace ndqtest {

// "q: packets=.. bursts=.. drops: kernel=12 ..." (test_util.cpp).
std::string describe(const netdaq::QueueStats& s);

// sent == delivered + the drops of every receiving queue.
inline ::testing::AssertionResult all_accounted(uint64_t sent, uint64_t delivered,
                                                const std::vector<netdaq::QueueStats>& receivers) {
  uint64_t drops = 0;
  std::ostringstream why;
  for (const auto& r : receivers) {
    drops += r.total_drops();
    why << "\n  " << describe(r);
  }
  if (sent == delivered + drops) return ::testing::AssertionSuccess();
  const int64_t gap = static_cast<int64_t>(sent) - static_cast<int64_t>(delivered + drops);
  return ::testing::AssertionFailure() << "sent " << sent << " != delivered " << delivered << " + drops " << drops
                                       << (gap > 0 ? " (uncounted losses: " : " (counted twice: ")
                                       << (gap > 0 ? gap : -gap) << ")" << why.str();
}

// One receiving queue whose delivered count is its own `packets`.
inline ::testing::AssertionResult all_accounted(uint64_t sent, const netdaq::QueueStats& receiver) {
  return all_accounted(sent, receiver.packets, {receiver});
}

// A netdaq sender: every packet offered was accepted (`packets`) or counted under tx_error or
// tx_unsent — none vanished, none counted twice. tx_full is left out: it counts refusals of
// packets the caller kept and offered again (netdaq run's live line leaves it out too).
inline ::testing::AssertionResult sender_accounted(uint64_t offered, const netdaq::QueueStats& sender) {
  const uint64_t dropped = sender.total_drops() - sender.drop(netdaq::DropReason::tx_full);
  if (offered == sender.packets + dropped) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << sender.queue << ": offered " << offered << " != accepted " << sender.packets
                                       << " + dropped " << dropped << " (tx_full left out)\n  " << describe(sender);
}

}  // namespace ndqtest
