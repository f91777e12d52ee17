#include "st2110_path.h"

#include <cstdio>
#include <regex>
#include <stdexcept>
#include <vector>

namespace ndqtest {

namespace {

std::string run_in_ns(const NetnsLab& lab, const std::string& ns, const std::vector<std::string>& argv) {
  std::string out;
  if (lab.exec_in(ns, argv, &out) != 0) {
    std::string cmd;
    for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw std::runtime_error("in " + ns + ": " + cmd + " failed: " + out);
  }
  return out;
}

// u32 reads values and masks as hexadecimal: "31" would be 0x31.
std::string hex(uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%x", v);
  return b;
}

constexpr const char* kHole = "ndqhole0";  // the veth that leads nowhere (its peer ndqhole1)

}  // namespace

void pace_sender(const NetnsLab& lab, const NetnsLab::Side& side, const std::string& rate) {
  // burst: a few packets at line rate; latency bounds the queue (rate x latency bytes), far
  // more than a frame, so that the bucket delays packets and never drops them.
  run_in_ns(lab, side.ns,
            {"tc", "qdisc", "replace", "dev", side.veth, "root", "tbf", "rate", rate, "burst", "32kb", "latency", "2s"});
}

void drop_rtp_sequences(const NetnsLab& lab, const NetnsLab::Side& side, uint16_t port, uint16_t mask) {
  run_in_ns(lab, side.ns, {"ip", "link", "add", kHole, "type", "veth", "peer", "name", "ndqhole1"});
  run_in_ns(lab, side.ns, {"ip", "link", "set", kHole, "up"});
  run_in_ns(lab, side.ns, {"tc", "qdisc", "add", "dev", side.veth, "clsact"});
  // u32 offsets count from the IP header: 20 (IPv4) + 8 (UDP) + 2 = the RTP sequence number.
  run_in_ns(lab, side.ns,
            {"tc", "filter", "add", "dev", side.veth, "egress", "protocol", "ip", "prio", "1", "u32", "match", "ip",
             "protocol", "17", "0xff", "match", "ip", "dport", std::to_string(port), "0xffff", "match", "u16", "0",
             hex(mask), "at", "30", "action", "mirred", "egress", "redirect", "dev", kHole});
}

uint64_t rtp_sequences_dropped(const NetnsLab& lab, const NetnsLab::Side& side) {
  const std::string out = run_in_ns(lab, side.ns, {"tc", "-s", "filter", "show", "dev", side.veth, "egress"});
  std::smatch m;
  // The mirred action's statistics: every packet it redirected.
  if (!std::regex_search(out, m, std::regex(R"(mirred[\s\S]*?Sent \d+ bytes (\d+) pkt)")))
    throw std::runtime_error("no mirred statistics in: " + out);
  return std::stoull(m[1]);
}

void static_neighbour(const NetnsLab& lab, const NetnsLab::Side& from, const NetnsLab::Side& to) {
  run_in_ns(lab, from.ns,
            {"ip", "neigh", "replace", to.ip4, "lladdr", lab.mac(to), "dev", from.veth, "nud", "permanent"});
}

}  // namespace ndqtest
