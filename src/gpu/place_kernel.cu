#include "gpu/place_kernel.h"

#include "gpu/cuda_check.h"
#include "gpu/place_device.cuh"

namespace netdaq::gpu {
namespace {

// __grid_constant__: the job stays in the parameter bank; place_job's reference to it needs
// no local copy.
// stage: a staged launch (gather into it, then place), or nullptr.
__global__ void __launch_bounds__(kPlaceThreads, 4) place_kernel_fn(const __grid_constant__ PlaceJob job,
                                                                    std::byte* stage) {
  if (stage) place_staged_job(job, stage, blockIdx.x, gridDim.x);
  else place_job(job, blockIdx.x, gridDim.x);
}

}  // namespace

const void* place_kernel() noexcept { return reinterpret_cast<const void*>(&place_kernel_fn); }

uint32_t place_max_grid(int gpu) {
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu), "cudaDeviceGetAttribute(SM count)");
  return static_cast<uint32_t>(std::max(sms, 1)) * 8;
}

cudaError_t launch_place(const PlaceJob& job, uint32_t grid, cudaStream_t stream, std::byte* stage) noexcept {
  void* args[] = {const_cast<PlaceJob*>(&job), &stage};
  return cudaLaunchKernel(place_kernel(), dim3(grid), dim3(kPlaceThreads), args, 0, stream);
}

}  // namespace netdaq::gpu
