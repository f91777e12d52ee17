// netdaq: the command-line tool (docs/cli.md). One file per subcommand.
#include <cstdio>
#include <string>

#include "cli.h"
#include "netdaq/netdaq.h"

namespace {
std::string version_text() {
  std::string s = std::string("netdaq ") + netdaq::version() + "\nengines:";
  for (const auto& e : netdaq::engines()) s += " " + e;
  return s;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"netdaq: move packets between NICs and CPU/GPU memory; run, benchmark and validate configs."};
  app.set_version_flag("--version", version_text, "Print the version and the engines built in, then exit");
  app.require_subcommand(0, 1);
  app.fallthrough(false);
  int exit_code = netdaq::cli::kExitOk;
  netdaq::cli::add_run_command(app, &exit_code);
  netdaq::cli::add_bench_command(app, &exit_code);
  netdaq::cli::add_validate_command(app, &exit_code);
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
