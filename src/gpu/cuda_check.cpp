#include "gpu/cuda_check.h"

namespace netdaq::gpu {

std::string describe(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")";
}

void check(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return;
  const bool no_gpu = err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
                      err == cudaErrorInvalidDevice;
  throw Error(no_gpu ? Errc::unsupported : Errc::resource, what + ": " + describe(err));
}

void use_device(int gpu, const std::string& who) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0)
    throw Error(Errc::unsupported, who + ": needs a GPU, and none is usable here: " +
                                       (err != cudaSuccess ? describe(err) : std::string("no CUDA device")));
  if (gpu < 0 || gpu >= count) {
    std::string list;
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp p{};
      if (cudaGetDeviceProperties(&p, i) == cudaSuccess)
        list += (list.empty() ? "" : ", ") + std::to_string(i) + ": " + p.name;
    }
    throw Error(Errc::invalid_config, who + ": gpu " + std::to_string(gpu) + " does not exist: this machine has " +
                                          std::to_string(count) + (count == 1 ? " GPU (" : " GPUs (") + list + ")");
  }
  check(cudaSetDevice(gpu), who + ": cudaSetDevice(" + std::to_string(gpu) + ")");
}

}  // namespace netdaq::gpu
