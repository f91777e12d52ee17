// Config::validate: runs every check (config_validate_*.cpp) and collects what they find.
#include <cmath>

#include "core/config_check.h"
#include "core/config_suggest.h"
#include "core/engine_descriptor.h"
#include "netdaq/config.h"

namespace netdaq {

namespace detail {

void check_run_and_log(Checker& c) {
  const Config& cfg = c.config();
  const RunConfig& run = cfg.run;
  if (!std::isfinite(run.duration_s) || run.duration_s < 0)
    c.error("run.duration_s", show(run.duration_s), "must be a number >= 0 (0 = until Ctrl-C)");
  c.range("run.tx_payload_size", run.tx_payload_size, limits::tx_payload_size);
  c.range("run.stats_interval_ms", run.stats_interval_ms, limits::stats_interval_ms);

  // Each payload must fit one buffer of every tx queue's payload region (its last region).
  // The library ignores `run`, so the default size does not make a library user's config
  // invalid; `netdaq run` checks it against the buffers when it starts.
  const bool chosen = run.tx_payload_size != RunConfig{}.tx_payload_size ||
                      cfg.locations.count("run.tx_payload_size") != 0;
  const MemoryRegionConfig* smallest = nullptr;
  std::string user;
  for (const auto& iface : cfg.interfaces) {
    for (const auto& q : iface.tx.queues) {
      const MemoryRegionConfig* region = q.memory_regions.empty() ? nullptr : cfg.find_region(q.memory_regions.back());
      if (region && (!smallest || region->buf_size < smallest->buf_size)) {
        smallest = region;
        user = queue_label(iface, q, false);
      }
    }
  }
  if (chosen && smallest && run.tx_payload_size > smallest->buf_size)
    c.error("run.tx_payload_size", std::to_string(run.tx_payload_size),
            "must be <= " + std::to_string(smallest->buf_size) + ", the buf_size of region '" + smallest->name +
                "' used by tx queue " + user);

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
  detail::check_run_and_log(c);
  return c.take();
}

void Config::validate_or_throw() const {
  auto issues = validate();
  if (!issues.empty()) throw ConfigError(std::move(issues));
}

}  // namespace netdaq
