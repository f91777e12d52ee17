// Options written for an engine the interface does not use (socket:, afxdp:, dpdk:). The engine would ignore them, so
// they are reported instead (like a gpu index on a host region): usually the engine or the
// options block is wrong. Only options that differ from their defaults count.
#include <algorithm>

#include "core/config_check.h"

namespace netdaq::detail {

namespace {

struct SetOption {
  const char* key;
  std::string value;
};

// How a set option is shown: booleans, numbers, strings.
std::string text(bool b) { return b ? "true" : "false"; }
constexpr auto num = [](auto v) { return std::to_string(v); };
std::string same(const std::string& v) { return v; }

// Appends key = value when `value` differs from `default_value`.
template <class T, class Show>
void add_if_set(std::vector<SetOption>& out, const char* key, const T& value, const T& default_value, Show show) {
  if (value != default_value) out.push_back({key, show(value)});
}

std::vector<SetOption> set_socket_options(const SocketOptions& s) {
  const SocketOptions d;
  std::vector<SetOption> out;
  add_if_set(out, "gro", s.gro, d.gro, text);
  add_if_set(out, "gso", s.gso, d.gso, text);
  add_if_set(out, "rcvbuf", s.rcvbuf, d.rcvbuf, num);
  add_if_set(out, "sndbuf", s.sndbuf, d.sndbuf, num);
  add_if_set(out, "busy_poll_us", s.busy_poll_us, d.busy_poll_us, num);
  add_if_set(out, "multicast_interface", s.multicast_interface, d.multicast_interface, same);
  add_if_set(out, "tcp_max_message", s.tcp_max_message, d.tcp_max_message, num);
  add_if_set(out, "reconnect_ms", s.reconnect_ms, d.reconnect_ms, num);
  return out;
}

std::vector<SetOption> set_afxdp_options(const AfxdpOptions& a) {
  const AfxdpOptions d;
  std::vector<SetOption> out;
  add_if_set(out, "attach", a.attach, d.attach, [](XdpAttach v) { return std::string(to_string(v)); });
  add_if_set(out, "mode", a.mode, d.mode, [](XskMode v) { return std::string(to_string(v)); });
  add_if_set(out, "need_wakeup", a.need_wakeup, d.need_wakeup, text);
  add_if_set(out, "busy_poll_us", a.busy_poll_us, d.busy_poll_us, num);
  add_if_set(out, "busy_poll_budget", a.busy_poll_budget, d.busy_poll_budget, num);
  add_if_set(out, "rx_ring", a.rx_ring, d.rx_ring, num);
  add_if_set(out, "fill_ring", a.fill_ring, d.fill_ring, num);
  add_if_set(out, "tx_ring", a.tx_ring, d.tx_ring, num);
  add_if_set(out, "comp_ring", a.comp_ring, d.comp_ring, num);
  add_if_set(out, "dst_mac", a.dst_mac, d.dst_mac, same);
  add_if_set(out, "src_ip", a.src_ip, d.src_ip, same);
  add_if_set(out, "src_port", a.src_port, d.src_port, num);
  return out;
}

std::vector<SetOption> set_dpdk_options(const DpdkOptions& o) {
  const DpdkOptions d;
  std::vector<SetOption> out;
  add_if_set(out, "rx_desc", o.rx_desc, d.rx_desc, num);
  add_if_set(out, "tx_desc", o.tx_desc, d.tx_desc, num);
  add_if_set(out, "mtu", o.mtu, d.mtu, num);
  add_if_set(out, "promiscuous", o.promiscuous, d.promiscuous, text);
  add_if_set(out, "isolate", o.isolate, d.isolate, text);
  add_if_set(out, "loopback", o.loopback, d.loopback, [](DpdkLoopback v) { return std::string(to_string(v)); });
  add_if_set(out, "tx_checksum_offload", o.tx_checksum_offload, d.tx_checksum_offload, text);
  add_if_set(out, "mempool_cache", o.mempool_cache, d.mempool_cache, num);
  add_if_set(out, "raw_frames", o.raw_frames, d.raw_frames, text);
  add_if_set(out, "dst_mac", o.dst_mac, d.dst_mac, same);
  add_if_set(out, "src_ip", o.src_ip, d.src_ip, same);
  add_if_set(out, "src_port", o.src_port, d.src_port, num);
  return out;
}

void report(Checker& c, const std::vector<SetOption>& options, const std::string& block_path, const char* owner,
            const InterfaceConfig& iface, const std::string& hint) {
  for (const auto& o : options)
    c.error(block_path + "." + o.key, o.value,
            std::string("is an option of the ") + owner + " engine; this interface's engine is '" + iface.engine +
                "', which ignores it: remove it, or set engine: " + owner + hint);
}

}  // namespace

void check_other_engine_options(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  // An unknown engine name is reported on its own; guessing which options it meant would not help.
  const bool known = std::find(kEngineNames.begin(), kEngineNames.end(), iface.engine) != kEngineNames.end();
  if (!known) return;
  if (iface.engine != "afxdp") report(c, set_afxdp_options(iface.afxdp), path + ".afxdp", "afxdp", iface, "");
  if (iface.engine != "dpdk") report(c, set_dpdk_options(iface.dpdk), path + ".dpdk", "dpdk", iface, "");
  // Socket options stay ignored by rdma. On afxdp or dpdk a socket option (busy_poll_us, say)
  // is most likely meant as one of the engine's own.
  if (iface.engine == "afxdp" || iface.engine == "dpdk")
    report(c, set_socket_options(iface.socket), path + ".socket", "socket", iface,
           " (the " + iface.engine + " engine's options are under " + iface.engine + ":)");
}

}  // namespace netdaq::detail
