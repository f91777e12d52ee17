// The GPUDirect RDMA probe's NIC half: registers a dma-buf on every RDMA device with
// ibv_reg_dmabuf_mr, as NCCL does to decide whether GPUDirect works. libibverbs is loaded
// with dlopen, so the CLI links no verbs library of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace netdaq::cli::check {

struct DmabufRegistration {
  std::string device;  // "mlx5_0"
  bool ok = false;
  bool unsupported = false;  // EOPNOTSUPP / ENOSYS: the device or its driver cannot map dma-bufs
  std::string detail;        // the error when not ok
};

// One entry per RDMA device; empty with *why when libibverbs or the devices are missing.
std::vector<DmabufRegistration> register_dmabuf_everywhere(int fd, size_t size, uint64_t iova, std::string* why);

}  // namespace netdaq::cli::check
