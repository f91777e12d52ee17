// Stager. sm engine: the place kernel gathers the burst (one launch; entries written to a
// per-slot mapped pinned array). copy_engine: one cudaMemcpyBatchAsync per burst (one driver
// call, the copy engines walk the list), with packets that lie back to back in the pool
// merged into one copy.
#include "gpu/stager.h"

#include <new>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/place_kernel.h"

namespace netdaq::gpu {

Stager::Stager(int gpu, uint32_t slots, uint32_t max_packets, uint32_t in_bytes, StagerEngine engine)
    : slots_(slots), max_packets_(max_packets), in_bytes_(in_bytes), engine_(engine) {
  if (slots == 0 || max_packets == 0 || in_bytes == 0)
    throw Error(Errc::invalid_config, "stager: slots, max_packets and in_bytes must be > 0");
  use_device(gpu, "stager");
  if (engine == StagerEngine::sm) max_grid_ = place_max_grid(gpu);
  const uint64_t bytes = uint64_t{slots} * max_packets * in_bytes;
  void* dev = nullptr;
  check(cudaMalloc(&dev, bytes), "stager: cudaMalloc(" + std::to_string(bytes) + " bytes)");
  device_ = static_cast<std::byte*>(dev);
  if (engine == StagerEngine::sm) {
    const uint64_t n = uint64_t{slots} * max_packets * sizeof(PlacementEntry);
    void* host = nullptr;
    void* mapped = nullptr;
    cudaError_t err = cudaHostAlloc(&host, n, cudaHostAllocMapped);
    if (err == cudaSuccess) {
      err = cudaHostGetDevicePointer(&mapped, host, 0);
      if (err != cudaSuccess) cudaFreeHost(host);
    }
    if (err != cudaSuccess) {
      cudaFree(device_);
      check(err, "stager: cudaHostAlloc(mapped, " + std::to_string(n) + " bytes)");
    }
    entries_ = static_cast<PlacementEntry*>(host);
    entries_dev_ = static_cast<const PlacementEntry*>(mapped);
    return;
  }
  // dsts_ holds the destinations, then (second half) the sources of the merged copies.
  dsts_ = new (std::nothrow) void*[2 * size_t{max_packets}];
  sizes_ = new (std::nothrow) size_t[max_packets];
  if (!dsts_ || !sizes_) {
    delete[] dsts_;
    delete[] sizes_;
    cudaFree(device_);
    throw Error(Errc::resource, "stager: out of host memory");
  }
}

Stager::~Stager() {
  cudaFree(device_);  // waits for work still in flight into it
  if (entries_) cudaFreeHost(entries_);
  delete[] dsts_;
  delete[] sizes_;
}

std::byte* Stager::slot_base(uint32_t slot) const noexcept {
  return device_ + uint64_t{slot} * max_packets_ * in_bytes_;
}

cudaError_t Stager::stage(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept {
  if (count == 0) return cudaSuccess;
  if (slot >= slots_ || count > max_packets_ || srcs == nullptr) return cudaErrorInvalidValue;
  return engine_ == StagerEngine::sm ? stage_sm(slot, srcs, count, stream) : stage_copy(slot, srcs, count, stream);
}

cudaError_t Stager::stage_sm(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept {
  const uint64_t first = uint64_t{slot} * max_packets_;
  PlacementEntry* const e = entries_ + first;
  for (uint32_t i = 0; i < count; ++i) {
    if (srcs[i] == nullptr) return cudaErrorInvalidValue;  // src 0 would mean "zero-fill"
    e[i] = PlacementEntry{reinterpret_cast<uint64_t>(srcs[i]), i, 0};
  }
  // Raw -> raw with out_slot_bytes = in_bytes: the place kernel's vector copy, packed output.
  const PlaceJob job{entries_dev_ + first, count, in_bytes_, slot_base(slot), in_bytes_,
                     SampleFormat::raw, SampleFormat::raw, ByteOrder::little};
  return launch_place(job, place_grid(count, max_grid_), stream);
}

cudaError_t Stager::stage_copy(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept {
  std::byte* const base = slot_base(slot);
  const void** const from = const_cast<const void**>(dsts_ + max_packets_);
  size_t runs = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const auto* p = static_cast<const std::byte*>(srcs[i]);
    if (runs && static_cast<const std::byte*>(from[runs - 1]) + sizes_[runs - 1] == p) {
      sizes_[runs - 1] += in_bytes_;  // packed on both sides: extend the previous copy
      continue;
    }
    dsts_[runs] = base + uint64_t{i} * in_bytes_;
    from[runs] = p;
    sizes_[runs] = in_bytes_;
    ++runs;
  }
  // The batch call refuses the legacy default stream; one copy needs no batch.
  if (runs == 1 || stream == nullptr || stream == cudaStreamLegacy) {
    for (size_t r = 0; r < runs; ++r) {
      const cudaError_t err = cudaMemcpyAsync(dsts_[r], from[r], sizes_[r], cudaMemcpyDefault, stream);
      if (err != cudaSuccess) return err;
    }
    return cudaSuccess;
  }
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;  // sources are valid in stream order
  attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  size_t first = 0;
  return cudaMemcpyBatchAsync(dsts_, from, sizes_, runs, &attr, &first, 1, stream);
}

}  // namespace netdaq::gpu
