// The dpdk engine as the core sees it: capabilities, the `dpdk:` and `eal:` options (declared
// once here: key, type, range, default, doc) and its validation. Compiled in every build,
// also without DPDK: `netdaq validate` checks a dpdk config anywhere.
#include "core/engine_descriptor.h"
#include "core/option_table.h"
#include "engines/dpdk/limits.h"
#include "engines/dpdk/validate.h"
#include "netdaq/engines/dpdk.h"

namespace netdaq {
static_assert(static_cast<size_t>(DpdkLoopback::hardware) + 1 == detail::dpdk_limits::kLoopbackNames.size());
const char* to_string(DpdkLoopback l) noexcept { return detail::dpdk_limits::kLoopbackNames[static_cast<size_t>(l)].data(); }
}  // namespace netdaq

namespace netdaq::detail {

namespace {

using namespace option;
namespace lim = dpdk_limits;

const std::vector<OptionDecl<DpdkOptions>>& dpdk_options() {
  static const std::vector<OptionDecl<DpdkOptions>> table{
      integer("rx_desc", &DpdkOptions::rx_desc, lim::desc, "descriptors per rx queue (the NIC's ring)"),
      integer("tx_desc", &DpdkOptions::tx_desc, lim::desc, "descriptors per tx queue"),
      integer("mtu", &DpdkOptions::mtu, "0 (leave the port's MTU) or 68..16000"),
      flag("promiscuous", &DpdkOptions::promiscuous, "receive frames for any destination MAC"),
      flag("isolate", &DpdkOptions::isolate, "rte_flow isolated mode: only the flows reach netdaq"),
      choice("loopback", &DpdkOptions::loopback, lim::kLoopbackNames, std::string_view("none, software or hardware")),
      flag("tx_checksum_offload", &DpdkOptions::tx_checksum_offload, "IPv4/UDP checksums by the NIC where it can"),
      integer("mempool_cache", &DpdkOptions::mempool_cache, lim::mempool_cache, "mbufs cached per lcore"),
      flag("raw_frames", &DpdkOptions::raw_frames, "rx: whole Ethernet frames of any protocol"),
      text("dst_mac", &DpdkOptions::dst_mac, "tx: destination MAC (required for tx)"),
      text("src_ip", &DpdkOptions::src_ip, "tx: source IPv4 address (required for tx)"),
      integer("src_port", &DpdkOptions::src_port, "tx: UDP source port; 0: tx.destination's port"),
      flag("tx_raw_frames", &DpdkOptions::tx_raw_frames, "tx: the application writes whole Ethernet frames"),
  };
  return table;
}

const std::vector<OptionDecl<EalConfig>>& eal_options() {
  static const std::vector<OptionDecl<EalConfig>> table{
      integers("cores", &EalConfig::cores, lim::eal_core, "CPU ids", "CPUs EAL lcores run on (-l)"),
      integer("main_core", &EalConfig::main_core, limits::cpu_core, "--main-lcore"),
      flag("hugepages", &EalConfig::hugepages, "false: --no-huge (plain memory)"),
      integer("memory_mb", &EalConfig::memory_mb, lim::eal_memory_mb, "MiB EAL reserves (-m)"),
      text("file_prefix", &EalConfig::file_prefix, "--file-prefix; empty: netdaq-<pid>"),
      strings("allow", &EalConfig::allow, "PCI addresses", "PCI addresses EAL may use besides the interfaces' own"),
      strings("vdevs", &EalConfig::vdevs, "virtual devices", "virtual devices besides the interfaces' own"),
      strings("args", &EalConfig::args, "EAL arguments", "further EAL options, verbatim"),
  };
  return table;
}

EngineCapabilities dpdk_capabilities() {
  return {.whole_frames = true, .header_data_split = true, .device_memory = true, .flow_steering = true,
          .flow_rss = true, .runtime_flows = true, .max_flows = static_cast<uint32_t>(lim::kMaxFlows),
          .max_queues = static_cast<uint32_t>(lim::kMaxQueues)};
}

EngineDescriptor dpdk_descriptor() {
  EngineDescriptor d;
  d.name = "dpdk";
  d.capabilities = dpdk_capabilities();
  d.capabilities_of = [](const InterfaceConfig& i) {
    EngineCapabilities c = dpdk_capabilities();
    c.raw_frames = i.options.get<DpdkOptions>().raw_frames;
    c.tx_whole_frames = i.options.get<DpdkOptions>().tx_raw_frames;
    return c;
  };
  d.blocks = {block_spec(dpdk_options()), block_spec(eal_options(), /*top_level=*/true)};
  d.validate = check_dpdk_engine;
  d.validate_config = check_eal;
  // Rx: the NIC's ring and the mempool's per-lcore cache; tx: sent, not yet completed.
  d.lent_buffers = [](const InterfaceConfig& i, bool rx) -> uint64_t {
    const auto& o = i.options.get<DpdkOptions>();
    return rx ? uint64_t{o.rx_desc} + o.mempool_cache : o.tx_desc;
  };
  d.lent_buffers_why = [](const InterfaceConfig& i, bool rx) {
    const auto& o = i.options.get<DpdkOptions>();
    return rx ? " in the NIC's ring and the mempool cache (dpdk.rx_desc " + std::to_string(o.rx_desc) +
                    " + dpdk.mempool_cache " + std::to_string(o.mempool_cache) + ")"
              : std::string(" in flight (dpdk.tx_desc)");
  };
  d.lent_knobs_rx = "dpdk.rx_desc / dpdk.mempool_cache";
  d.lent_knobs_tx = "dpdk.tx_desc";
  return d;
}

}  // namespace

std::vector<std::string> set_eal_keys(const EalConfig& e) {
  std::vector<std::string> keys;
  OptionBlockOf<EalConfig> block;
  block.value = e;
  for (auto& o : block_spec(eal_options(), true).set_options(block)) keys.push_back(std::move(o.key));
  return keys;
}

void describe_dpdk_engine() { describe_engine(dpdk_descriptor()); }

}  // namespace netdaq::detail
