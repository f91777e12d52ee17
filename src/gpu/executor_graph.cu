// LaunchMode::graph: a one-node CUDA graph built once and replayed per job.
//
// The job reaches the kernel node through cudaGraphExecKernelNodeSetParams before each
// launch rather than through a fixed parameter slot per depth index in mapped memory: the
// update is a host-side call (sub-microsecond, documented not to affect launches already
// queued) and the job then sits in the kernel's parameter bank exactly as with a plain
// launch, while a mapped slot would cost every block a dependent PCIe read (~1 us) before it
// can start, and depth graph instances instead of one.
#include <optional>

#include "gpu/cuda_check.h"
#include "gpu/executors.h"
#include "gpu/job_events.h"
#include "gpu/place_kernel.h"

namespace netdaq::gpu {
namespace {

constexpr const char* kWho = "gpu executor (graph)";

class GraphExecutor final : public PlaceExecutor {
 public:
  explicit GraphExecutor(const ExecutorOptions& o) {
    use_device(o.gpu, kWho);
    max_grid_ = place_max_grid(o.gpu);
    try {
      check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), std::string(kWho) + ": cudaStreamCreate");
      events_.emplace(o.depth, kWho);
      build();
    } catch (...) {
      release();
      throw;
    }
  }

  ~GraphExecutor() override {
    if (stream_) cudaStreamSynchronize(stream_);  // jobs in flight may reference memory freed next
    release();
  }

  bool submit(const PlaceJob& job) noexcept override {
    if (!events_->has_room()) return false;
    void* args[] = {const_cast<PlaceJob*>(&job)};  // copied by the call below
    params_.kernelParams = args;
    params_.gridDim = dim3(place_grid(job.count, max_grid_));
    cudaError_t err = cudaGraphExecKernelNodeSetParams(exec_, node_, &params_);
    params_.kernelParams = nullptr;
    if (err == cudaSuccess) err = cudaGraphLaunch(exec_, stream_);
    if (err == cudaSuccess) err = events_->record(stream_);
    if (err != cudaSuccess) {
      events_->set_fault(err);
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
  LaunchMode mode() const noexcept override { return LaunchMode::graph; }

 private:
  void build() {
    const std::string who(kWho);
    check(cudaGraphCreate(&graph_, 0), who + ": cudaGraphCreate");
    PlaceJob empty{};
    void* args[] = {&empty};
    params_ = {};
    params_.func = const_cast<void*>(place_kernel());
    params_.gridDim = dim3(1);
    params_.blockDim = dim3(kPlaceThreads);
    params_.sharedMemBytes = 0;
    params_.kernelParams = args;
    params_.extra = nullptr;
    check(cudaGraphAddKernelNode(&node_, graph_, nullptr, 0, &params_), who + ": cudaGraphAddKernelNode");
    params_.kernelParams = nullptr;
    check(cudaGraphInstantiate(&exec_, graph_, 0), who + ": cudaGraphInstantiate");
    // Uploads the executable graph now, so the first submit does not pay for it.
    check(cudaGraphUpload(exec_, stream_), who + ": cudaGraphUpload");
    check(cudaStreamSynchronize(stream_), who + ": cudaStreamSynchronize");
  }

  void release() noexcept {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    events_.reset();
    if (stream_) cudaStreamDestroy(stream_);
    exec_ = nullptr;
    graph_ = nullptr;
    stream_ = nullptr;
  }

  cudaStream_t stream_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  cudaGraphNode_t node_ = nullptr;
  cudaKernelNodeParams params_{};
  std::optional<JobEvents> events_;
  uint32_t max_grid_ = 1;
};

}  // namespace

std::unique_ptr<PlaceExecutor> make_graph_executor(const ExecutorOptions& opts) {
  return std::make_unique<GraphExecutor>(opts);
}

}  // namespace netdaq::gpu
