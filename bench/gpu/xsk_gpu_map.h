// What both GPU ring probes (xsk_gpu_rings.cu, xsk_gpu_send.cu) need beside raw_xsk.h: a ring
// mapping registered with CUDA, seen through its device addresses, and their command lines'
// "--name value" reading.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <cuda_runtime.h>

#include "raw_xsk.h"

namespace raw_xsk {

// A ring's parts at their device addresses.
struct GpuRing {
  uint32_t* producer = nullptr;
  uint32_t* consumer = nullptr;
  void* desc = nullptr;
};

// Registers ring r's mapping with CUDA (mapped, whole pages: ring mappings are page aligned)
// and fills *out. False with the CUDA error in *err (also printed): the finding a probe
// reports when the kernel's ring memory cannot be registered.
inline bool map_for_gpu(const char* what, const Ring& r, GpuRing* out, std::string* err) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t len = (r.map_len + page - 1) / page * page;
  cudaError_t e = cudaHostRegister(r.map, len, cudaHostRegisterMapped | cudaHostRegisterPortable);
  void* dev = nullptr;
  if (e == cudaSuccess) e = cudaHostGetDevicePointer(&dev, r.map, 0);
  if (e != cudaSuccess) {
    *err = std::string(what) + ": cudaHostRegister / cudaHostGetDevicePointer: " + cudaGetErrorString(e);
    std::fprintf(stderr, "xsk probe: %s\n", err->c_str());
    cudaGetLastError();
    return false;
  }
  auto at = [&](const void* host_p) {
    return static_cast<uint8_t*>(dev) + (static_cast<const uint8_t*>(host_p) - static_cast<const uint8_t*>(r.map));
  };
  out->producer = reinterpret_cast<uint32_t*>(at(r.producer));
  out->consumer = reinterpret_cast<uint32_t*>(at(r.consumer));
  out->desc = at(r.desc);
  return true;
}

// The value after option argv[i] (i moves past it); exits 2 when there is none.
inline const char* option_value(int argc, char** argv, int& i) {
  if (i + 1 >= argc) {
    std::fprintf(stderr, "%s: %s needs a value\n", argv[0], argv[i]);
    std::exit(2);
  }
  return argv[++i];
}

}  // namespace raw_xsk
