// Config::validate: runs every check (config_validate_*.cpp) and collects what they find.
#include "core/app_blocks.h"
#include "core/config_check.h"
#include "core/config_suggest.h"
#include "core/engine_descriptor.h"
#include "netdaq/config.h"

namespace netdaq {

namespace detail {

void check_log(Checker& c) {
  const Config& cfg = c.config();
  bool known = false;
  for (auto level : kLogLevels) known = known || level == cfg.log.level;
  if (!known)
    c.error("log.level", cfg.log.level,
            "must be one of: " + join(std::span<const std::string_view>(kLogLevels)) +
                did_you_mean(cfg.log.level, kLogLevels));
}

}  // namespace detail

std::vector<ConfigIssue> Config::validate() const {
  detail::Checker c(*this);
  detail::check_regions(c);
  detail::check_interfaces(c);
  for (const auto* engine : detail::engine_descriptors())
    if (engine->validate_config) engine->validate_config(c);
  detail::check_pool_budgets(c);
  detail::check_app_blocks(c);
  detail::check_log(c);
  return c.take();
}

void Config::validate_or_throw() const {
  auto issues = validate();
  if (!issues.empty()) throw ConfigError(std::move(issues));
}

}  // namespace netdaq
