#include <string>

#include "core/log.h"
#include "gpu/executors.h"
#include "netdaq/status.h"

namespace netdaq::gpu {

std::unique_ptr<PlaceExecutor> make_executor(LaunchMode mode, const ExecutorOptions& opts) {
  if (opts.depth == 0) throw Error(Errc::invalid_config, "gpu executor: depth must be at least 1");
  switch (mode) {
    case LaunchMode::per_burst: return make_per_burst_executor(opts);
    case LaunchMode::graph: return make_graph_executor(opts);
    case LaunchMode::persistent: return make_persistent_executor(opts);
    case LaunchMode::rings: break;  // gpu::XskFrameReceiver's own loop, no executor
  }
  throw Error(Errc::invalid_config, "gpu executor: unknown launch mode " + std::to_string(int(mode)));
}

void log_executor_error(const std::string& message) noexcept { detail::log()->error("{}", message); }

}  // namespace netdaq::gpu
