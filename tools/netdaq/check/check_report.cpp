// The report of `netdaq check`: text for people (why and fix under each warning and failure),
// JSON for machines, and the exit status rule.
#include <array>
#include <nlohmann/json.hpp>

#include "check/checks.h"
#include "netdaq/netdaq.h"

namespace netdaq::cli::check {

namespace {

std::array<int, 4> counts(const std::vector<CheckResult>& results) {
  std::array<int, 4> n{};
  for (const auto& r : results) ++n[static_cast<size_t>(r.status)];
  return n;
}

}  // namespace

const char* to_string(Status s) noexcept {
  switch (s) {
    case Status::pass:
      return "pass";
    case Status::warn:
      return "warn";
    case Status::fail:
      return "fail";
    case Status::skip:
      return "skip";
  }
  return "?";
}

int exit_status(const std::vector<CheckResult>& results, bool strict) noexcept {
  const auto n = counts(results);
  if (n[static_cast<size_t>(Status::fail)]) return 1;
  if (strict && n[static_cast<size_t>(Status::warn)]) return 2;
  return 0;
}

void print_text(const CheckContext& c, const std::vector<CheckResult>& results, bool verbose, std::FILE* out) {
  std::fprintf(out, "netdaq check: %s (%s)\n", c.config_name.c_str(),
               c.sys->live() ? "this machine" : ("snapshot " + c.sys->root()).c_str());
  std::string category;
  for (const auto& r : results) {
    if (r.category != category) {
      category = r.category;
      std::fprintf(out, "\n%s\n", category.c_str());
    }
    std::string head = r.name + (r.subject.empty() ? "" : " [" + r.subject + "]");
    std::fprintf(out, "  %s  %-36s %s\n", to_string(r.status), head.c_str(), r.what.c_str());
    const bool bad = r.status == Status::warn || r.status == Status::fail;
    if ((bad || verbose) && !r.why.empty()) std::fprintf(out, "        why: %s\n", r.why.c_str());
    if (bad && !r.fix.empty()) std::fprintf(out, "        fix: %s\n", r.fix.c_str());
  }
  const auto n = counts(results);
  std::fprintf(out, "\nsummary: %d pass, %d warn, %d fail, %d skip\n", n[0], n[1], n[2], n[3]);
  std::fflush(out);
}

std::string report_json(const CheckContext& c, const std::vector<CheckResult>& results, int exit_code) {
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const auto& r : results)
    checks.push_back({{"category", r.category},
                      {"name", r.name},
                      {"subject", r.subject},
                      {"status", to_string(r.status)},
                      {"what", r.what},
                      {"why", r.why},
                      {"fix", r.fix}});
  const auto n = counts(results);
  nlohmann::ordered_json j{
      {"netdaq", netdaq::version()},
      {"command", "check"},
      {"config", c.config_name},
      {"root", c.sys->live() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.sys->root())},
      {"checks", checks},
      {"summary", {{"pass", n[0]}, {"warn", n[1]}, {"fail", n[2]}, {"skip", n[3]}}},
      {"exit_code", exit_code}};
  return j.dump(2) + "\n";
}

}  // namespace netdaq::cli::check
