// Flows: ids, the rx queue each one steers to, and its match fields.
#include <arpa/inet.h>

#include "core/config_check.h"

namespace netdaq::detail {

namespace {

bool is_ip_literal(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

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
  if (ip && !is_ip_literal(*ip)) c.error(key, *ip, "must be an IPv4 or IPv6 address (e.g. 10.0.0.1 or fd00::1)");
}

void check_match(Checker& c, const FlowMatch& m, const std::string& path) {
  check_port_range(c, path + ".udp_src", m.udp_src, m.udp_src_end);
  check_port_range(c, path + ".udp_dst", m.udp_dst, m.udp_dst_end);
  check_ip(c, path + ".ip_src", m.ip_src);
  check_ip(c, path + ".ip_dst", m.ip_dst);
  if (m.vlan) c.range(path + ".vlan", *m.vlan, limits::vlan);
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
    bool found = false;
    for (const auto& q : iface.rx.queues) found = found || q.id == f.queue;
    if (!found)
      c.error(fpath + ".queue", std::to_string(f.queue),
              rx_ids.empty() ? std::string("must be an rx queue id of this interface, which has no rx queues")
                             : "must be an rx queue id of this interface: " + join(rx_ids));
    check_match(c, f.match, fpath + ".match");
  }
}

}  // namespace netdaq::detail
