// LaunchMode::per_burst: one kernel launch per job on a non-blocking stream, an event per
// job slot to see completion.
#include "gpu/executors.h"
#include "gpu/stream_executor.h"

namespace netdaq::gpu {
namespace {

constexpr const char* kWho = "gpu executor (per_burst)";

class PerBurstExecutor final : public StreamExecutor {
 public:
  explicit PerBurstExecutor(const ExecutorOptions& o) : StreamExecutor(o, kWho) {}
  LaunchMode mode() const noexcept override { return LaunchMode::per_burst; }

 private:
  cudaError_t enqueue(const PlaceJob& job, uint32_t grid, std::byte* stage) noexcept override {
    return launch_place(job, grid, stream_, stage);
  }
};

}  // namespace

std::unique_ptr<PlaceExecutor> make_per_burst_executor(const ExecutorOptions& opts) {
  return std::make_unique<PerBurstExecutor>(opts);
}

}  // namespace netdaq::gpu
