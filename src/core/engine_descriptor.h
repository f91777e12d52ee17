// What the core knows about an engine, registered from the engine's own directory: its name,
// capabilities, option blocks (read from YAML, compared with their defaults, documented) and
// validation hooks. Compiled into every build, so a config for an engine whose runtime is not
// built in is still validated with the same messages. The runtime (EngineFactory) registers
// separately, only where it is built (core/engine.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "netdaq/config.h"
#include "netdaq/engine_info.h"

namespace YAML {
class Node;
}

namespace netdaq::detail {

class Checker;
class YamlReader;

// An option set to a value other than its default ("rx_ring", "4096").
struct SetOption {
  std::string key;
  std::string value;
};

// One option as docs/config.md lists it.
struct OptionDoc {
  std::string key;
  std::string type;           // "boolean", "integer", "string", "list of strings", ...
  std::string default_value;  // as written in the docs' default column ("2048", "auto", "")
  std::string doc;            // one line
};

// One option block of an engine (`dpdk:` on an interface, `eal:` at the top level).
struct OptionBlockSpec {
  std::string_view key;
  bool top_level = false;  // in the Config (process-wide) rather than in each interface
  // Its options have names other engines use too (busy_poll_us, rcvbuf): set on another
  // engine's interface they were most likely meant as that engine's own (the message says so).
  bool common_names = false;
  std::function<std::unique_ptr<OptionBlock>()> make;
  std::function<void(YamlReader&, const YAML::Node&, const std::string& path, OptionBlock&)> read;
  std::function<std::vector<SetOption>(const OptionBlock&)> set_options;  // differing from defaults
  std::function<std::vector<OptionDoc>()> docs;
};

struct EngineDescriptor {
  std::string name;
  EngineCapabilities capabilities;
  // Capabilities that depend on the interface's options (e.g. raw frames); default: the above.
  std::function<EngineCapabilities(const InterfaceConfig&)> capabilities_of;
  std::vector<OptionBlockSpec> blocks;
  // Other engines' interface blocks this engine ignores without an error (rdma: socket:).
  std::vector<std::string> ignores_blocks;
  // Checks one interface of this engine / the whole config once (e.g. the process-wide block).
  std::function<void(Checker&, const InterfaceConfig&, const std::string& path)> validate;
  std::function<void(Checker&)> validate_config;
  // Buffers of a queue's pool the engine lends to the kernel or NIC (core/pool_budget.h),
  // why (" in the kernel (afxdp.fill_ring)") and the options that set them.
  std::function<uint64_t(const InterfaceConfig&, bool rx)> lent_buffers;
  std::function<std::string(const InterfaceConfig&, bool rx)> lent_buffers_why;
  std::string lent_knobs_rx, lent_knobs_tx;
};

// Registers an engine's description (engines do this from describe_<name>_engine()).
void describe_engine(EngineDescriptor d);
// nullptr when no engine of that name is described.
const EngineDescriptor* find_descriptor(std::string_view name);
// Every described engine, in registration order.
std::vector<const EngineDescriptor*> engine_descriptors();
// The descriptors' names joined for messages ("socket, afxdp, dpdk, rdma").
std::vector<std::string_view> described_engine_names();

}  // namespace netdaq::detail
