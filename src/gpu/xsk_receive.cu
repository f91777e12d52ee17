// The two ways of running the XSK frame receiver's loop (xsk_receive.cuh): one thread block
// of a persistent kernel, or one CPU thread.
#include <memory>

#include "gpu/cuda_check.h"
#include "gpu/xsk_exec.cuh"
#include "gpu/xsk_receive.cuh"
#include "gpu/xsk_receive_launch.h"

namespace netdaq::gpu::detail {
namespace {

__global__ void __launch_bounds__(kThreads) xsk_receive_kernel(XskParams p) {
  // Raw storage: __shared__ variables cannot have constructors; init() assigns it.
  __shared__ alignas(16) unsigned char raw[sizeof(XskState)];
  GpuExec x;
  XskDriver<GpuExec>{p, *reinterpret_cast<XskState*>(raw), x}.run();
}

}  // namespace

void launch_xsk_receiver(const XskParams& p, cudaStream_t stream) {
  xsk_receive_kernel<<<1, kThreads, 0, stream>>>(p);
  check(cudaGetLastError(), "xsk frame receiver: launching its kernel");
}

void run_xsk_receiver_on_cpu(const XskParams& p) {
  auto state = std::make_unique<XskState>();
  CpuExec x;
  XskDriver<CpuExec>{p, *state, x}.run();
}

}  // namespace netdaq::gpu::detail
