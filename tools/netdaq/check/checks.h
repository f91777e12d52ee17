// The four groups of `netdaq check` (docs/cli.md), each appending its results, and the report.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "check/check_context.h"
#include "check/check_result.h"

namespace netdaq::cli::check {

std::vector<CheckResult> gpudirect_checks(const CheckContext& c);
std::vector<CheckResult> topology_checks(const CheckContext& c);
std::vector<CheckResult> cpu_checks(const CheckContext& c);
std::vector<CheckResult> nic_checks(const CheckContext& c);

// Text: one line per check, then why/fix for warnings and failures (all with verbose).
void print_text(const CheckContext& c, const std::vector<CheckResult>& results, bool verbose, std::FILE* out);
// {"netdaq", "command": "check", "config", "root", "checks": [...], "summary", "exit_code"}.
std::string report_json(const CheckContext& c, const std::vector<CheckResult>& results, int exit_code);

}  // namespace netdaq::cli::check
