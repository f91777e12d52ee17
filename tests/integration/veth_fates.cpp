#include "veth_fates.h"

#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ndqtest {

namespace {

// The receiver's rx_queue_0_* counters of `ethtool -S`.
std::map<std::string, uint64_t> rx_queue0_counters(const NetnsLab& lab, const NetnsLab::Side& side) {
  std::string out;
  if (lab.exec_in(side.ns, {"ethtool", "-S", side.veth}, &out) != 0)
    throw std::runtime_error("ethtool -S " + side.veth + ": " + out);
  std::map<std::string, uint64_t> c;
  std::istringstream in(out);
  std::string name;
  uint64_t value;
  while (in >> name)
    if (name.back() == ':' && name.rfind("rx_queue_0_", 0) == 0 && in >> value) c[name.substr(11, name.size() - 12)] = value;
  for (const char* k : {"xdp_packets", "xdp_redirect", "xdp_drops", "drops"})
    if (!c.count(k)) throw std::runtime_error("ethtool -S " + side.veth + " has no rx_queue_0_" + k + ": " + out);
  return c;
}

// The side's tx_dropped, from /proc/net/dev as its namespace sees it (exec_in does not remount
// /sys): "name: rx bytes packets errs drop fifo frame compressed multicast tx bytes packets
// errs drop ...", the fourth transmit field.
uint64_t tx_dropped(const NetnsLab& lab, const NetnsLab::Side& side) {
  std::string out;
  if (lab.exec_in(side.ns, {"cat", "/proc/net/dev"}, &out) != 0) throw std::runtime_error("cat /proc/net/dev: " + out);
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream name_of(line.substr(0, colon));
    std::string name;
    if (!(name_of >> name) || name != side.veth) continue;
    std::istringstream fields(line.substr(colon + 1));
    uint64_t f[12] = {};
    for (auto& v : f)
      if (!(fields >> v)) throw std::runtime_error("/proc/net/dev: short line for " + side.veth + ": " + line);
    return f[11];
  }
  throw std::runtime_error("/proc/net/dev in " + side.ns + " has no " + side.veth + ":\n" + out);
}

}  // namespace

VethFates veth_fates(const NetnsLab& lab, const NetnsLab::Side& sender, const NetnsLab::Side& receiver) {
  const auto c = rx_queue0_counters(lab, receiver);
  return {tx_dropped(lab, sender), c.at("xdp_packets"), c.at("xdp_redirect"), c.at("xdp_drops"), c.at("drops")};
}

VethFates operator-(const VethFates& now, const VethFates& before) {
  return {now.dropped_by_sender - before.dropped_by_sender, now.xdp_packets - before.xdp_packets,
          now.xdp_redirect - before.xdp_redirect, now.xdp_drops - before.xdp_drops, now.drops - before.drops};
}

VethFates await_veth_fates(const NetnsLab& lab, const NetnsLab::Side& sender, const NetnsLab::Side& receiver,
                           const VethFates& before, uint64_t sent, std::chrono::milliseconds timeout) {
  VethFates k;
  for (const auto t0 = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - t0 < timeout;) {
    k = veth_fates(lab, sender, receiver) - before;
    if (k.xdp_packets + k.dropped_by_sender >= sent && k.xdp_fates() >= k.xdp_packets) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return k;
}

std::string VethFates::describe() const {
  std::ostringstream s;
  s << dropped_by_sender << " dropped by the sender's veth before the receiver's ring; receiver's XDP: " << xdp_packets
    << " frames, " << xdp_redirect << " redirected, " << xdp_drops << " XDP_DROP, " << drops << " failed redirects";
  return s.str();
}

}  // namespace ndqtest
