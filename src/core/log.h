// The library's logger ("netdaq"), spdlog underneath; not part of the public API.
#pragma once

#include <spdlog/spdlog.h>

namespace netdaq::detail {
spdlog::logger* log();
void set_log_level(const std::string& level);
}  // namespace netdaq::detail
