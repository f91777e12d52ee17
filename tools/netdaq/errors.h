// How the subcommands report a failed setup step: a ConfigError as its issues, one a line;
// any other exception as one line. Kept in one place so that every subcommand prints alike.
#pragma once

#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "netdaq/netdaq.h"

namespace netdaq::cli {

// Each issue of e on a line of its own, "<prefix><issue>". With a file, issues found before a
// location was known get "<file>: " in front (validate checks several files at once).
void print_config_error(const ConfigError& e, std::FILE* out = stderr, std::string_view prefix = {},
                        std::string_view file = {});

// Runs step(). A ConfigError prints its issues (each after issue_prefix), another exception
// "<error_prefix><what>", both on stderr. Returns false when step threw.
template <class Step>
bool setup_step(Step&& step, const std::string& error_prefix, std::string_view issue_prefix = {}) {
  try {
    step();
    return true;
  } catch (const ConfigError& e) {
    print_config_error(e, stderr, issue_prefix);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s%s\n", error_prefix.c_str(), e.what());
  }
  return false;
}

}  // namespace netdaq::cli
