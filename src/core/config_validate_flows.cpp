// Flows: ids, the rx queue (or, dpdk only, the rx queues for RSS) each one steers to, and its
// match fields.
#include <algorithm>

#include "core/config_check.h"
#include "core/engine_descriptor.h"
#include "net/ip_address.h"

namespace netdaq::detail {

namespace {

void check_port_range(Checker& c, const std::string& key, const std::optional<uint16_t>& first,
                      const std::optional<uint16_t>& last) {
  if (!last) return;
  if (!first) {
    c.error(key + "_end", std::to_string(*last), "a range end needs a start: set " + key.substr(key.rfind('.') + 1));
  } else if (*last < *first) {
    c.error(key, std::to_string(*first) + "-" + std::to_string(*last),
            "the range ends (" + std::to_string(*last) + ") before it starts (" + std::to_string(*first) + ")");
  }
}

void check_ip(Checker& c, const std::string& key, const std::optional<std::string>& ip) {
  if (ip && !parse_ip(*ip)) c.error(key, *ip, "must be an IPv4 or IPv6 address (e.g. 10.0.0.1 or fd00::1)");
}

void check_match(Checker& c, const FlowMatch& m, const std::string& path) {
  check_port_range(c, path + ".udp_src", m.udp_src, m.udp_src_end);
  check_port_range(c, path + ".udp_dst", m.udp_dst, m.udp_dst_end);
  check_ip(c, path + ".ip_src", m.ip_src);
  check_ip(c, path + ".ip_dst", m.ip_dst);
  if (m.vlan) c.range(path + ".vlan", *m.vlan, limits::vlan);
}

// `queues`: RSS spreads the flow over several rx queues (dpdk: an rte_flow RSS action).
void check_rss_queues(Checker& c, const InterfaceConfig& iface, const FlowConfig& f, const std::string& fpath,
                      const std::vector<std::string>& rx_ids) {
  const std::string key = fpath + ".queues";
  std::vector<std::string> listed;
  for (auto id : f.queues) listed.push_back(std::to_string(id));
  const EngineDescriptor* engine = find_descriptor(iface.engine);
  if (!engine || !engine->capabilities.flow_rss) {
    // An engine that is not known is reported on its own.
    std::vector<std::string> rss;
    for (const auto* e : engine_descriptors())
      if (e->capabilities.flow_rss) rss.push_back(e->name);
    if (engine)
      c.error(key, join(listed),
              iface.engine + " steers a flow to one queue; RSS over queues is " + join(rss) +
                  " only: use queue: N (one rx queue id)");
    return;
  }
  for (size_t k = 0; k < f.queues.size(); ++k) {
    const uint16_t id = f.queues[k];
    const std::string item = key + "[" + std::to_string(k) + "]";
    const auto first = std::find(f.queues.begin(), f.queues.begin() + static_cast<std::ptrdiff_t>(k), id);
    if (first != f.queues.begin() + static_cast<std::ptrdiff_t>(k)) {
      c.error(item, std::to_string(id),
              "duplicate rx queue id (also " + key + "[" + std::to_string(first - f.queues.begin()) + "])");
      continue;
    }
    const bool found =
        std::any_of(iface.rx.queues.begin(), iface.rx.queues.end(), [&](const QueueConfig& q) { return q.id == id; });
    if (!found)
      c.error(item, std::to_string(id),
              rx_ids.empty() ? std::string("must be an rx queue id of this interface, which has no rx queues")
                             : "must be an rx queue id of this interface: " + join(rx_ids));
  }
  if (f.queues.size() < 2)
    c.error(key, join(listed),
            "RSS needs at least 2 rx queue ids (has " + std::to_string(f.queues.size()) +
                "); to steer the flow to one queue, write queue: " + listed[0] + " instead");
  // queue is ignored when queues is set: it must be left out, or name one of them.
  const bool queue_written = f.queue != FlowConfig{}.queue || c.config().locations.count(fpath + ".queue") != 0;
  if (queue_written && std::find(f.queues.begin(), f.queues.end(), f.queue) == f.queues.end())
    c.error(fpath + ".queue", std::to_string(f.queue),
            "must be one of queues (" + join(listed) + ") or left out: the flow is spread over queues by RSS");
}

}  // namespace

void check_flows(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  std::vector<std::string> rx_ids;
  for (const auto& q : iface.rx.queues) add_unique(rx_ids, std::to_string(q.id));
  const auto& flows = iface.rx.flows;
  for (size_t j = 0; j < flows.size(); ++j) {
    const FlowConfig& f = flows[j];
    const std::string fpath = path + ".rx.flows[" + std::to_string(j) + "]";
    for (size_t k = 0; k < j; ++k) {
      if (flows[k].id == f.id) {
        c.error(fpath + ".id", std::to_string(f.id),
                "duplicate flow id (also " + path + ".rx.flows[" + std::to_string(k) + "])");
        break;
      }
    }
    if (f.queues.empty()) {
      bool found = false;
      for (const auto& q : iface.rx.queues) found = found || q.id == f.queue;
      if (!found)
        c.error(fpath + ".queue", std::to_string(f.queue),
                rx_ids.empty() ? std::string("must be an rx queue id of this interface, which has no rx queues")
                               : "must be an rx queue id of this interface: " + join(rx_ids));
    } else {
      check_rss_queues(c, iface, f, fpath, rx_ids);
    }
    check_match(c, f.match, fpath + ".match");
  }
}

}  // namespace netdaq::detail
