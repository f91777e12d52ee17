// Which GPUs this process can use, and what they can do for the NIC (dma-buf, peermem).
#include <cuda.h>  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED (value only; libcuda is not linked)
#include <cuda_runtime_api.h>

#include <fstream>

#include "gpu/cuda_check.h"
#include "netdaq/gpu.h"

namespace netdaq::gpu {
namespace {

bool peermem_loaded() {
  std::ifstream f("/sys/module/nvidia_peermem/initstate");
  std::string state;
  return f && (f >> state) && state == "live";
}

}  // namespace

bool built_in() noexcept { return true; }

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  return n;
}

std::string unavailable_reason() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    if (err == cudaErrorInsufficientDriver)
      return "no usable NVIDIA driver (libcuda.so.1 missing or older than the CUDA runtime): " + describe(err);
    return describe(err);
  }
  return n == 0 ? "no CUDA device" : "";
}

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  const int n = device_count();
  const bool peermem = peermem_loaded();
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) d.pci_bus_id = bus;
    d.compute_major = p.major;
    d.compute_minor = p.minor;
    d.multiprocessors = p.multiProcessorCount;
    d.memory_bytes = p.totalGlobalMem;
    int dmabuf = 0;
    // The runtime accepts driver attribute numbers it does not name.
    if (cudaDeviceGetAttribute(&dmabuf, static_cast<cudaDeviceAttr>(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED), i) ==
        cudaSuccess)
      d.dmabuf = dmabuf != 0;
    else
      (void)cudaGetLastError();
    d.peermem = peermem;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace netdaq::gpu
