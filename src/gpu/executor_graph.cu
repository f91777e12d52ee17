// LaunchMode::graph: a one-node CUDA graph built once and replayed per job.
//
// The job reaches the kernel node through cudaGraphExecKernelNodeSetParams before each
// launch rather than through a fixed parameter slot per depth index in mapped memory: the
// update is a host-side call (sub-microsecond, documented not to affect launches already
// queued) and the job then sits in the kernel's parameter bank exactly as with a plain
// launch, while a mapped slot would cost every block a dependent PCIe read (~1 us) before it
// can start, and depth graph instances instead of one.
#include "gpu/executors.h"
#include "gpu/stream_executor.h"

namespace netdaq::gpu {
namespace {

constexpr const char* kWho = "gpu executor (graph)";

class GraphExecutor final : public StreamExecutor {
 public:
  explicit GraphExecutor(const ExecutorOptions& o) : StreamExecutor(o, kWho) {
    try {
      build();
    } catch (...) {
      release();
      throw;
    }
  }

  ~GraphExecutor() override {
    cudaStreamSynchronize(stream_);  // jobs in flight may reference memory freed next
    release();
  }

  LaunchMode mode() const noexcept override { return LaunchMode::graph; }

 private:
  cudaError_t enqueue(const PlaceJob& job, uint32_t grid, std::byte* stage) noexcept override {
    void* args[] = {const_cast<PlaceJob*>(&job), &stage};  // copied by the call below
    params_.kernelParams = args;
    params_.gridDim = dim3(grid);
    cudaError_t err = cudaGraphExecKernelNodeSetParams(exec_, node_, &params_);
    params_.kernelParams = nullptr;
    return err == cudaSuccess ? cudaGraphLaunch(exec_, stream_) : err;
  }

  void build() {
    const std::string who(kWho);
    check(cudaGraphCreate(&graph_, 0), who + ": cudaGraphCreate");
    PlaceJob empty{};
    std::byte* no_stage = nullptr;
    void* args[] = {&empty, &no_stage};
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
    exec_ = nullptr;
    graph_ = nullptr;
  }

  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  cudaGraphNode_t node_ = nullptr;
  cudaKernelNodeParams params_{};
};

}  // namespace

std::unique_ptr<PlaceExecutor> make_graph_executor(const ExecutorOptions& opts) {
  return std::make_unique<GraphExecutor>(opts);
}

}  // namespace netdaq::gpu
