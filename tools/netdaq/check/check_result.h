// One check's outcome: what it saw, why that matters, and the exact command that fixes it.
#pragma once

#include <string>
#include <vector>

namespace netdaq::cli::check {

enum class Status { pass, warn, fail, skip };
const char* to_string(Status s) noexcept;

struct CheckResult {
  std::string category;  // gpudirect | topology | cpu | nic
  std::string name;      // stable id, e.g. "nic.mtu"
  std::string subject;   // what was checked: "eth0", "gpu 0", "core 3" ("" for the machine)
  Status status = Status::pass;
  std::string what;  // what it saw
  std::string why;   // why it matters
  std::string fix;   // the command or setting that fixes it ("" when nothing to fix)
};

// The results of one category, in the order they were found.
class Checks {
 public:
  explicit Checks(std::string category) : category_(std::move(category)) {}
  CheckResult& add(std::string name, std::string subject, Status status, std::string what, std::string why = {},
                   std::string fix = {}) {
    results_.push_back(
        {category_, std::move(name), std::move(subject), status, std::move(what), std::move(why), std::move(fix)});
    return results_.back();
  }
  std::vector<CheckResult>& results() noexcept { return results_; }

 private:
  std::string category_;
  std::vector<CheckResult> results_;
};

// Exit status (docs/cli.md): 1 any fail; 2 warnings only with strict; else 0.
int exit_status(const std::vector<CheckResult>& results, bool strict) noexcept;

}  // namespace netdaq::cli::check
