// Interfaces: names, engines and tx pacing; queues, flows and each engine's options have their
// own files.
#include <algorithm>
#include <cmath>

#include "core/app_blocks.h"
#include "core/config_check.h"
#include "core/config_suggest.h"
#include "core/engine_descriptor.h"
#include "netdaq/session.h"

namespace netdaq::detail {

namespace {

// Known engines are described (core/engine_descriptor.h); one registered under another name
// (tests, out-of-tree engines) is valid too.
void check_engine(Checker& c, const InterfaceConfig& iface, const std::string& path,
                  const std::vector<std::string>& built_in) {
  if (std::find(built_in.begin(), built_in.end(), iface.engine) != built_in.end()) return;
  const std::vector<std::string_view> known = described_engine_names();
  if (std::find(known.begin(), known.end(), iface.engine) != known.end()) {
    c.error(path + ".engine", iface.engine,
            "engine '" + iface.engine + "' is not built into this netdaq (built in: " +
                (built_in.empty() ? std::string("none") : join(built_in)) + ")");
  } else {
    c.error(path + ".engine", iface.engine, "must be one of: " + join(known) + did_you_mean(iface.engine, known));
  }
}

void check_rate(Checker& c, const std::string& key, double rate) {
  if (!std::isfinite(rate) || rate < 0) c.error(key, show(rate), "must be a number >= 0 (0 = unpaced)");
}

void check_tx_pacing(Checker& c, const TxConfig& tx, const std::string& path) {
  check_rate(c, path + ".rate_mbps", tx.rate_mbps);
  check_rate(c, path + ".rate_pps", tx.rate_pps);
  if (tx.rate_mbps > 0 && tx.rate_pps > 0)
    c.error(path + ".rate_pps", show(tx.rate_pps),
            "set at most one of rate_mbps and rate_pps (rate_mbps is " + show(tx.rate_mbps) + ")");
}

}  // namespace

void check_interfaces(Checker& c) {
  const auto& interfaces = c.config().interfaces;
  if (interfaces.empty() && !detail::app_block_without_interfaces(c.config()))
    c.error("interfaces", "", "at least one interface is required");
  const std::vector<std::string> built_in = netdaq::engines();
  for (size_t i = 0; i < interfaces.size(); ++i) {
    const InterfaceConfig& iface = interfaces[i];
    const std::string path = "interfaces[" + std::to_string(i) + "]";
    if (iface.name.empty()) c.error(path + ".name", "", "is required: every interface needs a name");
    for (size_t j = 0; j < i && !iface.name.empty(); ++j) {
      if (interfaces[j].name == iface.name) {
        c.error(path + ".name", iface.name, "duplicate interface name (also interfaces[" + std::to_string(j) + "])");
        break;
      }
    }
    check_engine(c, iface, path, built_in);
    check_tx_pacing(c, iface.tx, path + ".tx");
    check_queues(c, iface, path);
    check_flows(c, iface, path);
    check_reorder(c, iface, path);
    if (const auto* engine = find_descriptor(iface.engine); engine && engine->validate) engine->validate(c, iface, path);
    check_other_engine_options(c, iface, path);
  }
}

}  // namespace netdaq::detail
