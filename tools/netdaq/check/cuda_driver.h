// The NVIDIA driver API, loaded with dlopen("libcuda.so.1"): netdaq links only the CUDA runtime,
// and the check must also run (and say why GPU checks skip) where no driver is installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace netdaq::cli::check {

struct CudaGpu {
  int index = 0;
  std::string name;
  std::string bdf;  // normalized PCI address
  uint64_t memory_bytes = 0;
  std::optional<bool> dmabuf;  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
  std::optional<bool> gdr;     // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED
};

struct CudaDriverInfo {
  bool usable = false;
  std::string why;  // why not usable (no libcuda.so.1, cuInit error)
  int version = 0;  // cuDriverGetVersion: 12040 = CUDA 12.4
  std::vector<CudaGpu> gpus;
};
CudaDriverInfo query_cuda_driver();

// Allocates `bytes` of device memory on `gpu`, exports it as a dma-buf
// (cuMemGetHandleForAddressRange) and calls use(fd, device address, size) before freeing it.
// False with *why when any step fails.
bool with_device_dmabuf(int gpu, size_t bytes, const std::function<void(int fd, uint64_t va, size_t size)>& use,
                        std::string* why);

}  // namespace netdaq::cli::check
