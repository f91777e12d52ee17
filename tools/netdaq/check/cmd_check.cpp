// netdaq check [CONFIG]: is this machine ready for line-rate acquisition (and GPUDirect) with
// this config, and if not, the exact command that fixes it (docs/cli.md).
#include <cstdio>
#include <memory>
#include <string>

#include "check/checks.h"
#include "cli.h"
#include "errors.h"
#include "netdaq/netdaq.h"

namespace netdaq::cli {

namespace {

struct CheckOptions {
  std::string config;
  std::string root;
  bool json = false;
  bool strict = false;
  bool verbose = false;
};

int run_check(const CheckOptions& o) {
  std::optional<Config> cfg;
  if (!o.config.empty() &&
      !setup_step([&] { cfg = Config::load(o.config); }, "netdaq check: " + o.config + ": ", "netdaq check: "))
    return kExitError;
  const check::SysReader sys(o.root);
  if (!o.root.empty() && !sys.exists("/")) {
    std::fprintf(stderr, "netdaq check: --root %s: no such directory\n", o.root.c_str());
    return kExitError;
  }
  const auto ctx = check::make_context(sys, cfg ? &*cfg : nullptr, o.config.empty() ? "no config" : o.config);
  std::vector<check::CheckResult> results;
  for (auto* group : {check::gpudirect_checks, check::topology_checks, check::cpu_checks, check::nic_checks}) {
    auto r = group(ctx);
    results.insert(results.end(), r.begin(), r.end());
  }
  const int rc = check::exit_status(results, o.strict);
  if (o.json)
    std::fputs(check::report_json(ctx, results, rc).c_str(), stdout);
  else
    check::print_text(ctx, results, o.verbose, stdout);
  std::fflush(stdout);
  return rc;
}

}  // namespace

void add_check_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<CheckOptions>();
  auto* cmd = app.add_subcommand("check", "Is this machine ready for line-rate acquisition (and GPUDirect)?");
  cmd->add_option("config", o->config,
                  "YAML configuration whose NICs, cores and memory to check (default: every NIC that is up)");
  cmd->add_flag("--json", o->json, "Print the results as JSON");
  cmd->add_flag("--strict", o->strict, "Exit 2 when there are warnings (and no failure)");
  cmd->add_flag("-v,--verbose", o->verbose, "Say why each check matters, passes too");
  cmd->add_option("--root", o->root, "Read /sys and /proc under DIR (a recorded snapshot) instead of this machine")
      ->option_text("DIR");
  cmd->footer(
      "Checks GPUDirect (driver, peermem, dma-buf probe, BAR1, clocks), topology (PCIe path,\n"
      "MPS/MRRS, NUMA), CPU and kernel (isolation, governor, IRQs, hugepages, memlock, capabilities,\n"
      "IOMMU) and each NIC (driver, link, MTU, rings, pause, GRO/LRO, XDP, queues, RDMA GIDs). Each\n"
      "says pass, warn, fail or skip, and how to fix it.\n"
      "Exit status: 0 no failure, 1 a failure (or a bad config), 2 warnings only with --strict.");
  cmd->callback([o, exit_code] { *exit_code = run_check(*o); });
}

}  // namespace netdaq::cli
