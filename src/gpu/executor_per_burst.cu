// LaunchMode::per_burst: one kernel launch per job on a non-blocking stream, an event per
// job slot to see completion.
#include <optional>

#include "gpu/cuda_check.h"
#include "gpu/executors.h"
#include "gpu/job_events.h"
#include "gpu/place_kernel.h"

namespace netdaq::gpu {
namespace {

constexpr const char* kWho = "gpu executor (per_burst)";

class PerBurstExecutor final : public PlaceExecutor {
 public:
  explicit PerBurstExecutor(const ExecutorOptions& o) {
    use_device(o.gpu, kWho);
    max_grid_ = place_max_grid(o.gpu);
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), std::string(kWho) + ": cudaStreamCreate");
    try {
      events_.emplace(o.depth, kWho);
    } catch (...) {
      cudaStreamDestroy(stream_);
      throw;
    }
  }

  // Waits for the jobs in flight: their memory may be freed right after.
  ~PerBurstExecutor() override {
    cudaStreamSynchronize(stream_);
    events_.reset();
    cudaStreamDestroy(stream_);
  }

  bool submit(const PlaceJob& job) noexcept override {
    if (!events_->has_room()) return false;
    cudaError_t err = launch_place(job, place_grid(job.count, max_grid_), stream_);
    if (err == cudaSuccess) err = events_->record(stream_);
    if (err != cudaSuccess) {
      events_->set_fault(err);  // synchronize() reports it
      return false;
    }
    return true;
  }

  uint64_t completed() noexcept override { return events_->reap(); }
  uint64_t submitted() const noexcept override { return events_->submitted(); }

  void synchronize() override {
    check(cudaStreamSynchronize(stream_), std::string(kWho) + ": cudaStreamSynchronize");
    events_->reap();
    events_->throw_if_fault();
  }

  cudaStream_t stream() const noexcept override { return stream_; }
  LaunchMode mode() const noexcept override { return LaunchMode::per_burst; }

 private:
  cudaStream_t stream_ = nullptr;
  std::optional<JobEvents> events_;
  uint32_t max_grid_ = 1;
};

}  // namespace

std::unique_ptr<PlaceExecutor> make_per_burst_executor(const ExecutorOptions& opts) {
  return std::make_unique<PerBurstExecutor>(opts);
}

}  // namespace netdaq::gpu
