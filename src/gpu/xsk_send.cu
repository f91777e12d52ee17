// The two ways of running the XSK frame sender's loop (xsk_send.cuh): one thread block of a
// persistent kernel, or one CPU thread.
#include <memory>

#include "gpu/cuda_check.h"
#include "gpu/xsk_send.cuh"
#include "gpu/xsk_send_launch.h"

namespace netdaq::gpu::detail {
namespace {

__global__ void __launch_bounds__(kThreads) xsk_send_kernel(XskSendParams p) {
  __shared__ alignas(16) unsigned char raw[sizeof(XskSendState)];  // init() assigns it
  GpuExec x;
  XskSendDriver<GpuExec>{p, *reinterpret_cast<XskSendState*>(raw), x}.run();
}

}  // namespace

void launch_xsk_sender(const XskSendParams& p, cudaStream_t stream) {
  xsk_send_kernel<<<1, kThreads, 0, stream>>>(p);
  check(cudaGetLastError(), "xsk frame sender: launching its kernel");
}

void run_xsk_sender_on_cpu(const XskSendParams& p) {
  auto state = std::make_unique<XskSendState>();
  CpuExec x;
  XskSendDriver<CpuExec>{p, *state, x}.run();
}

}  // namespace netdaq::gpu::detail
