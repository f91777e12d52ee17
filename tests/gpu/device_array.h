// What the executor tests share: a CUDA call that must succeed, and device memory owned by a
// scope.
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

}  // namespace ndqtest
