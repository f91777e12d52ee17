// netdaq validate FILE...: loads and validates each config without touching a NIC.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "errors.h"
#include "netdaq/netdaq.h"

namespace netdaq::cli {

namespace {
struct ValidateOptions {
  std::vector<std::string> files;
  bool quiet = false;
};

int validate_files(const ValidateOptions& o) {
  int rc = kExitOk;
  for (const auto& f : o.files) {
    try {
      (void)Config::load(f);
      if (!o.quiet) std::printf("%s: OK\n", f.c_str());
    } catch (const ConfigError& e) {
      rc = kExitError;
      print_config_error(e, stdout, {}, f);  // issues found before a location was known still name the file
    } catch (const std::exception& e) {
      rc = kExitError;
      std::printf("%s: error: %s\n", f.c_str(), e.what());
    }
  }
  std::fflush(stdout);
  return rc;
}
}  // namespace

void add_validate_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand("validate", "Check configuration files without touching a NIC");
  cmd->add_option("files", o->files, "YAML configuration files")->required();
  cmd->add_flag("-q,--quiet", o->quiet, "Print only errors");
  cmd->footer(
      "Prints 'FILE: OK' or every issue as 'file:line:col: key = value: message'.\n"
      "Exit status: 0 all valid, 1 any error.");
  cmd->callback([o, exit_code] { *exit_code = validate_files(*o); });
}

}  // namespace netdaq::cli
