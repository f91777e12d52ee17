// What the executor tests share: a CUDA call that must succeed, and device memory (or mapped
// pinned host memory) owned by a scope.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>

#define CUDA_OK(call)                                                          \
  do {                                                                         \
    const cudaError_t err_ = (call);                                           \
    ASSERT_EQ(err_, cudaSuccess) << #call << ": " << cudaGetErrorString(err_); \
  } while (0)

namespace ndqtest {

// n elements of T in device memory (p null if cudaMalloc failed), freed at the end of scope.
template <typename T = std::byte>
struct DeviceArray {
  explicit DeviceArray(size_t n) : n(n) {
    if (cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(n, 1) * sizeof(T)) != cudaSuccess) p = nullptr;
  }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* p = nullptr;
  size_t n;
};

// n elements of T in mapped pinned host memory (what the FramePipeline's placement lists are:
// the GPU reads them, the host can too), p null if cudaHostAlloc failed.
template <typename T = std::byte>
struct MappedArray {
  explicit MappedArray(size_t n) : n(n) {
    if (cudaHostAlloc(reinterpret_cast<void**>(&p), std::max<size_t>(n, 1) * sizeof(T), cudaHostAllocMapped) !=
        cudaSuccess)
      p = nullptr;
  }
  ~MappedArray() { cudaFreeHost(p); }
  MappedArray(const MappedArray&) = delete;
  MappedArray& operator=(const MappedArray&) = delete;
  T* p = nullptr;
  size_t n;
};

}  // namespace ndqtest
