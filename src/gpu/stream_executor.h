// What the per_burst and graph executors share: a non-blocking stream, an event per job
// slot to see completion in order, and the grid size rule. Subclasses only enqueue a job.
#pragma once

#include <optional>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/job_events.h"
#include "gpu/place_executor.h"
#include "gpu/place_kernel.h"

namespace netdaq::gpu {

class StreamExecutor : public PlaceExecutor {
 public:
  bool submit(const PlaceJob& job) noexcept final { return submit_staged(job, nullptr); }
  bool submit_staged(const PlaceJob& job, std::byte* stage) noexcept final {
    if (!events_->has_room()) return false;
    cudaError_t err = enqueue(job, place_grid(job.count, max_grid_), stage);
    if (err == cudaSuccess) err = events_->record(stream_);
    if (err != cudaSuccess) {
      events_->set_fault(err);  // synchronize() reports it
      return false;
    }
    return true;
  }
  uint64_t completed() noexcept final { return events_->reap(); }
  uint64_t completed_at(uint64_t now_ns) noexcept final { return events_->reap(false, now_ns); }
  uint64_t submitted() const noexcept final { return events_->submitted(); }
  void synchronize() final {
    check(cudaStreamSynchronize(stream_), who_ + ": cudaStreamSynchronize");
    events_->reap(true);
    events_->throw_if_fault();
  }
  cudaStream_t stream() const noexcept final { return stream_; }

 protected:
  StreamExecutor(const ExecutorOptions& o, const char* who) : who_(who) {
    use_device(o.gpu, who_);
    max_grid_ = place_max_grid(o.gpu);
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), who_ + ": cudaStreamCreate");
    try {
      events_.emplace(o.depth, who);
    } catch (...) {
      cudaStreamDestroy(stream_);
      throw;
    }
  }
  // Waits for the jobs in flight: their memory may be freed right after.
  ~StreamExecutor() override {
    cudaStreamSynchronize(stream_);
    events_.reset();
    cudaStreamDestroy(stream_);
  }
  // Queues the job's kernel on stream_ with `grid` blocks (stage: launch_place's). Never throws.
  virtual cudaError_t enqueue(const PlaceJob& job, uint32_t grid, std::byte* stage) noexcept = 0;

  std::string who_;
  cudaStream_t stream_ = nullptr;
  std::optional<JobEvents> events_;
  uint32_t max_grid_ = 1;
};

}  // namespace netdaq::gpu
