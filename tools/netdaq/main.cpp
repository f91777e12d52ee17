// netdaq: the command-line tool (docs/cli.md). One file per subcommand.
#include <cstdio>
#include <string>

#include "cli.h"
#ifdef NETDAQ_HAVE_FLEET
#include "fleet_block.h"
#endif
#include "run_block.h"
#include "netdaq/gpu.h"
#include "netdaq/netdaq.h"

namespace {
// One "gpu:" line per usable GPU, or one saying why there is none.
std::string gpu_text() {
  namespace gpu = netdaq::gpu;
  if (!gpu::built_in()) return "\ngpu: not built in";
  const auto devs = gpu::devices();
  if (devs.empty()) return "\ngpu: built in, no usable GPU (" + gpu::unavailable_reason() + ")";
  std::string s;
  for (const auto& d : devs) {
    char gib[32];
    std::snprintf(gib, sizeof gib, "%.0f", static_cast<double>(d.memory_bytes) / double(1ull << 30));
    s += "\ngpu: " + std::to_string(d.index) + ": " + d.name + " (cc " + std::to_string(d.compute_major) + "." +
         std::to_string(d.compute_minor) + ", " + gib + " GiB, dma-buf " + (d.dmabuf ? "yes" : "no") +
         ", peermem " + (d.peermem ? "yes" : "no") + ")";
  }
  return s;
}

std::string version_text() {
  std::string s = std::string("netdaq ") + netdaq::version() + "\nengines:";
  for (const auto& e : netdaq::engines()) s += " " + e;
  return s + gpu_text();
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"netdaq: move packets between NICs and CPU/GPU memory; run, benchmark and validate configs, capture frames."};
  app.set_version_flag("--version", version_text, "Print the version and the engines built in, then exit");
  app.require_subcommand(0, 1);
  app.fallthrough(false);
  netdaq::cli::register_run_block();
#ifdef NETDAQ_HAVE_FLEET
  netdaq::cli::register_fleet_block();
#endif
  int exit_code = netdaq::cli::kExitOk;
  netdaq::cli::add_run_command(app, &exit_code);
  netdaq::cli::add_bench_command(app, &exit_code);
  netdaq::cli::add_validate_command(app, &exit_code);
  netdaq::cli::add_capture_command(app, &exit_code);
  netdaq::cli::add_check_command(app, &exit_code);
  netdaq::cli::add_replay_command(app, &exit_code);
  netdaq::cli::add_roce_recv_command(app, &exit_code);
  netdaq::cli::add_roce_send_command(app, &exit_code);
  netdaq::cli::add_video_send_command(app, &exit_code);
#ifdef NETDAQ_HAVE_FLEET
  netdaq::cli::add_ingest_command(app, &exit_code);
  netdaq::cli::add_build_command(app, &exit_code);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : netdaq::cli::kExitError;
  }
  if (app.get_subcommands().empty()) {
    std::fputs(app.help().c_str(), stdout);
    return netdaq::cli::kExitOk;
  }
  return exit_code;
}
