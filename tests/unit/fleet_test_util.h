// Shared pieces of the fleet tests: progress-until with a deadline, the sink's invariant,
// patterned frames, the transports every test runs over.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "netdaq/fleet.h"

namespace fleettest {

using namespace netdaq::fleet;

// Calls step() until done() or timeout_ms; true when done() came true.
inline bool pump_until(const std::function<void()>& step, const std::function<bool()>& done,
                       int timeout_ms = 5000) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    step();
  }
  return true;
}

// Every fragment has exactly one fate (SinkDestinationStats).
inline void expect_invariant(const SinkStats& s) {
  auto check = [](const SinkDestinationStats& d) {
    EXPECT_EQ(d.fragments, d.acked + d.refused + d.no_credit + d.peer_down + d.in_flight_lost + d.in_flight)
        << d.address << ": fragments " << d.fragments << " acked " << d.acked << " refused " << d.refused
        << " no_credit " << d.no_credit << " peer_down " << d.peer_down << " lost " << d.in_flight_lost
        << " in_flight " << d.in_flight;
  };
  check(s.total);
  for (const auto& d : s.destinations) check(d);
}

// Bytes that say which frame and offset they are.
inline std::vector<std::byte> pattern(uint64_t frame, size_t n, uint32_t salt = 0) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte((i * 131 + frame * 7 + salt * 29 + (i >> 8)) & 0xff);
  return v;
}

inline Address loopback(uint16_t port) { return Address{"127.0.0.1", port}; }

class Transports : public ::testing::TestWithParam<Transport> {};
inline std::string transport_name(const ::testing::TestParamInfo<Transport>& i) {
  return to_string(i.param);
}

}  // namespace fleettest
