#include "core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace netdaq::detail {

spdlog::logger* log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::get("netdaq");
    if (!l) l = spdlog::stderr_color_mt("netdaq");
    l->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    return l;
  }();
  return logger.get();
}

void set_log_level(const std::string& level) { log()->set_level(spdlog::level::from_str(level)); }

}  // namespace netdaq::detail
