// engine_counter, which many tests read engine counters through: a name the queue does not
// report (a renamed counter, a typo) fails the test instead of reading as a value that passes.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "test_util.h"

using ndqtest::engine_counter;

TEST(EngineCounter, ReadsACounterTheQueueReports) {
  netdaq::QueueStats s;
  s.engine_counters = {{"rx_ring_full", 3}, {"gro_datagrams_dropped", 0}};
  EXPECT_EQ(engine_counter(s, "rx_ring_full"), 3u);
  EXPECT_EQ(engine_counter(s, "gro_datagrams_dropped"), 0u);
}

TEST(EngineCounter, AnUnknownNameFailsTheTest) {
  netdaq::QueueStats s;
  s.engine_counters = {{"gro_datagrams_dropped", 5}};
  uint64_t read = 1;
  EXPECT_NONFATAL_FAILURE(read = engine_counter(s, "gro_datagram_dropped"), "no engine counter 'gro_datagram_dropped'");
  EXPECT_EQ(read, 0u);  // not all ones, which EXPECT_GT(..., 0) would pass
}
