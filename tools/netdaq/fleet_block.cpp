#include "fleet_block.h"

#include <array>
#include <stdexcept>
#include <string_view>

#include "netdaq/app_block.h"

namespace netdaq::cli {

namespace {

// An error about one key of the block: "KEY: MESSAGE" (check() turns it into a ConfigIssue).
struct KeyError : std::invalid_argument {
  KeyError(std::string key, const std::string& value, const std::string& what)
      : std::invalid_argument(what), key(std::move(key)), value(value) {}
  std::string key, value;
};

template <class E, size_t N>
E choose(const std::string& key, const std::string& value, const std::array<std::pair<std::string_view, E>, N>& names) {
  std::string allowed;
  for (const auto& [name, e] : names) {
    if (value == name) return e;
    allowed += (allowed.empty() ? "" : ", ") + std::string(name);
  }
  throw KeyError(key, value, "must be one of: " + allowed);
}

fleet::Transport transport_of(const FleetBlock& b) {
  return choose<fleet::Transport, 3>(
      "fleet.transport", b.transport,
      {{{"auto", fleet::Transport::automatic}, {"tcp", fleet::Transport::tcp}, {"shm", fleet::Transport::shm}}});
}

fleet::Route route_of(const FleetBlock& b) {
  return choose<fleet::Route, 3>(
      "fleet.route", b.route,
      {{{"frame", fleet::Route::frame}, {"stream", fleet::Route::stream}, {"bytes", fleet::Route::bytes}}});
}

fleet::WhenFull when_full_of(const FleetBlock& b) {
  return choose<fleet::WhenFull, 2>("fleet.when_full", b.when_full,
                                    {{{"drop", fleet::WhenFull::drop}, {"wait", fleet::WhenFull::wait}}});
}

std::vector<fleet::Address> destinations_of(const FleetBlock& b) {
  std::vector<fleet::Address> d;
  try {
    d = fleet::parse_address_list(b.destinations);
  } catch (const std::invalid_argument& e) {
    throw KeyError("fleet.destinations", b.destinations, e.what());
  }
  if (d.empty())
    throw KeyError("fleet.destinations", b.destinations, "is required: the builders, \"HOST:PORT,HOST:PORT\"");
  return d;
}

void check_node(const FleetBlock& b) {
  if (b.node >= b.nodes)
    throw KeyError("fleet.node", std::to_string(b.node),
                   "must be below fleet.nodes (" + std::to_string(b.nodes) + "): nodes are numbered from 0");
}

fleet::Address listen_of(const FleetBlock& b) {
  try {
    return fleet::parse_address(b.listen);
  } catch (const std::invalid_argument& e) {
    throw KeyError("fleet.listen", b.listen, e.what());
  }
}

// Every problem of the keys the file wrote, each with its line (an ingest's file needs no
// listen, a builder's no destinations).
void check_fleet(const Config& cfg, std::vector<ConfigIssue>& issues) {
  if (!cfg.options.find(FleetBlock::kKey)) return;
  const FleetBlock& b = fleet_block(cfg);
  auto check = [&](const char* key, auto&& parse) {
    if (!cfg.locations.count(key)) return;
    try {
      parse(b);
    } catch (const KeyError& e) {
      issues.push_back({cfg.location_of(e.key), e.key, e.value, e.what()});
    }
  };
  check("fleet.destinations", destinations_of);
  check("fleet.node", check_node);
  check("fleet.route", route_of);
  check("fleet.when_full", when_full_of);
  check("fleet.transport", transport_of);
  check("fleet.listen", listen_of);
}

}  // namespace

fleet::SinkConfig sink_config(const FleetBlock& b) {
  fleet::SinkConfig s;
  s.destinations = destinations_of(b);
  check_node(b);
  s.node = b.node;
  s.nodes = b.nodes;
  s.route = route_of(b);
  s.credits = b.credits;
  s.when_full = when_full_of(b);
  s.wait_ms = b.wait_ms;
  s.reconnect_ms = b.reconnect_ms;
  s.transport = transport_of(b);
  s.devices = b.devices;
  return s;
}

fleet::BuilderConfig builder_config(const FleetBlock& b) {
  fleet::BuilderConfig c;
  c.receiver.listen = listen_of(b);
  c.receiver.max_bytes = b.max_bytes;
  c.receiver.buffers = b.buffers;
  c.receiver.transport = transport_of(b);
  c.receiver.devices = b.devices;
  c.nodes = b.nodes;
  c.timeout_ms = b.timeout_ms;
  return c;
}

void register_fleet_block() {
  static const bool registered = [] {
    AppBlock block = app_block<FleetBlock>(
        {
            app_option("nodes", &FleetBlock::nodes, "ingest nodes whose fragments make one built frame", 1, 64),
            app_option("transport", &FleetBlock::transport, "what UCX may use: auto, tcp or shm"),
            app_option("devices", &FleetBlock::devices,
                       "the network devices UCX may use, \"eth1,eth2\" (default: those the addresses route through)"),
            app_option("node", &FleetBlock::node, "this ingest node's index (0 .. nodes - 1)"),
            app_option("destinations", &FleetBlock::destinations, "the builders, \"HOST:PORT,HOST:PORT\""),
            app_option("route", &FleetBlock::route, "frame, stream or bytes"),
            app_option("credits", &FleetBlock::credits, "fragments in flight per builder", 1, 65536),
            app_option("when_full", &FleetBlock::when_full, "drop or wait"),
            app_option("wait_ms", &FleetBlock::wait_ms, "longest wait for a credit (when_full: wait)"),
            app_option("reconnect_ms", &FleetBlock::reconnect_ms, "retry period of a builder that is down", 1),
            app_option("listen", &FleetBlock::listen, "where a builder accepts ingest nodes, \"HOST:PORT\""),
            app_option("buffers", &FleetBlock::buffers, "built frames a builder holds at once", 1, 65536),
            app_option("max_bytes", &FleetBlock::max_bytes, "the largest built frame", 1, uint64_t{1} << 34),
            app_option("timeout_ms", &FleetBlock::timeout_ms, "a frame missing fragments this long is handed out", 1),
        },
        check_fleet);
    block.without_interfaces = true;
    register_app_block(std::move(block));
    return true;
  }();
  (void)registered;
}

}  // namespace netdaq::cli
