// CUDA error handling for src/gpu: setup code throws netdaq::Error with the call and the
// CUDA message; hot paths use the returned cudaError_t instead.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "netdaq/status.h"

namespace netdaq::gpu {

// Throws Error(Errc::resource or unsupported) "what: cudaErrorX (message)" unless ok.
void check(cudaError_t err, const std::string& what);

// "cudaErrorNoDevice (no CUDA-capable device is detected)"
std::string describe(cudaError_t err);

// Makes `gpu` the current device of this thread; throws a clear error when there is no GPU
// or the index is out of range ("gpu 3 does not exist: this machine has 1 GPU (0: NVIDIA H100)").
void use_device(int gpu, const std::string& who);

}  // namespace netdaq::gpu
