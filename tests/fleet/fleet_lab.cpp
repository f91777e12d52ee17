#include "fleet_lab.h"

#include <unistd.h>

#include <atomic>
#include <stdexcept>

#include "netns_lab.h"

namespace ndqtest {

namespace {

std::atomic<int> g_lab{0};

void must(const std::vector<std::string>& argv) {
  std::string out;
  if (run_command(argv, &out) != 0) {
    std::string cmd;
    for (auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
    throw std::runtime_error("fleet lab: '" + cmd + "' failed: " + out);
  }
}

// nsenter enters the network namespace only (`ip -n` remounts /sys, which a chroot refuses).
std::vector<std::string> in_ns(const std::string& ns, std::vector<std::string> argv) {
  std::vector<std::string> full{"nsenter", "--net=/run/netns/" + ns, "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

}  // namespace

FleetLab::FleetLab(unsigned ingests, unsigned builders) {
  { NetnsLab sweep; }  // removes labs of dead test processes (and checks namespaces work)
  const int n = g_lab.fetch_add(1);
  const std::string id = std::to_string(getpid()) + "_f" + std::to_string(n);
  net_ = std::to_string((getpid() + n) % 250);
  auto make_ns = [&](const std::string& suffix) {
    const std::string ns = "ndq" + id + suffix;
    must({"ip", "netns", "add", ns});
    made_.push_back(ns);
    must(in_ns(ns, {"ip", "link", "set", "lo", "up"}));
    return ns;
  };
  try {
    switch_ns_ = make_ns("sw");
    switch_ip_ = "10.88." + net_ + ".254";
    must(in_ns(switch_ns_, {"ip", "link", "add", "br0", "type", "bridge"}));
    must(in_ns(switch_ns_, {"ip", "addr", "add", switch_ip_ + "/24", "dev", "br0"}));
    must(in_ns(switch_ns_, {"ip", "link", "set", "br0", "up"}));
    for (unsigned i = 0; i < ingests; ++i) {
      Ingest g;
      g.ns = make_ns("i" + std::to_string(i));
      g.fabric_ip = "10.88." + net_ + "." + std::to_string(10 + i);
      g.fabric_veth = add_port(g.ns, g.fabric_ip, "fi" + std::to_string(i) + "_" + id);
      g.sender_ns = make_ns("s" + std::to_string(i));
      g.sensor_veth = "si" + std::to_string(i) + id;
      if (g.sensor_veth.size() > 15) g.sensor_veth = g.sensor_veth.substr(0, 15);
      const std::string sender_veth = "ss" + g.sensor_veth.substr(2);
      const std::string subnet = "10." + std::to_string(90 + i) + "." + net_ + ".";
      g.sensor_ip = subnet + "1";
      g.sender_ip = subnet + "2";
      must({"ip", "link", "add", g.sensor_veth, "netns", g.ns, "type", "veth", "peer", "name", sender_veth, "netns",
            g.sender_ns});
      must(in_ns(g.ns, {"ip", "addr", "add", g.sensor_ip + "/24", "dev", g.sensor_veth}));
      must(in_ns(g.ns, {"ip", "link", "set", g.sensor_veth, "up"}));
      must(in_ns(g.sender_ns, {"ip", "addr", "add", g.sender_ip + "/24", "dev", sender_veth}));
      must(in_ns(g.sender_ns, {"ip", "link", "set", sender_veth, "up"}));
      ingests_.push_back(g);
    }
    for (unsigned b = 0; b < builders; ++b) {
      Builder k;
      k.ns = make_ns("b" + std::to_string(b));
      k.fabric_ip = "10.88." + net_ + "." + std::to_string(20 + b);
      k.fabric_veth = add_port(k.ns, k.fabric_ip, "fb" + std::to_string(b) + "_" + id);
      builders_.push_back(k);
    }
  } catch (...) {
    teardown();
    throw;
  }
}

// A veth pair: one end in ns with ip, the other on the switch's bridge.
std::string FleetLab::add_port(const std::string& ns, const std::string& ip, const std::string& name) {
  std::string inner = "p" + name, outer = "q" + name;
  if (inner.size() > 15) inner = inner.substr(0, 15), outer = outer.substr(0, 15);
  must({"ip", "link", "add", inner, "netns", ns, "type", "veth", "peer", "name", outer, "netns", switch_ns_});
  must(in_ns(ns, {"ip", "addr", "add", ip + "/24", "dev", inner}));
  must(in_ns(ns, {"ip", "link", "set", inner, "up"}));
  must(in_ns(switch_ns_, {"ip", "link", "set", outer, "master", "br0"}));
  must(in_ns(switch_ns_, {"ip", "link", "set", outer, "up"}));
  return inner;
}

FleetLab::~FleetLab() { teardown(); }

void FleetLab::teardown() noexcept {
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) run_command({"ip", "netns", "del", *it});
  made_.clear();
}

}  // namespace ndqtest
