// A NetnsLab veth's transmit drops, for the benchmarks that flood one: a frame the sender's
// veth_xmit could not put into the peer's ring (full) is counted there, and nowhere else; the
// sender's UDP socket is not told.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "netns_lab.h"

namespace ndqbench {

// B's veth's tx_dropped (`ip -s -j link`; the GPU machine runs the carried ip); ~0 if unknown.
inline uint64_t veth_tx_dropped(const ndqtest::NetnsLab& lab) {
  std::string out;
  if (lab.exec_in(lab.b().ns, {"ip", "-s", "-j", "link", "show", "dev", lab.b().veth}, &out) != 0) return ~uint64_t{0};
  const auto j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded() || !j.is_array() || j.empty()) return ~uint64_t{0};
  return j[0]["stats64"]["tx"]["dropped"].get<uint64_t>();
}

}  // namespace ndqbench
