// The three PlaceExecutor implementations behind make_executor (place_executor.cpp).
#pragma once

#include <memory>
#include <string>

#include "gpu/place_executor.h"

namespace netdaq::gpu {

std::unique_ptr<PlaceExecutor> make_per_burst_executor(const ExecutorOptions& opts);
std::unique_ptr<PlaceExecutor> make_graph_executor(const ExecutorOptions& opts);
std::unique_ptr<PlaceExecutor> make_persistent_executor(const ExecutorOptions& opts);

// The library log, for destructors that cannot throw (keeps spdlog out of nvcc's sight).
void log_executor_error(const std::string& message) noexcept;

}  // namespace netdaq::gpu
