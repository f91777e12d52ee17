// Stager. sm engine: the place kernel gathers the burst (one launch; entries written to a
// per-slot pinned array, read mapped or after one small H2D copy). copy_engine: one cudaMemcpyBatchAsync per burst (one driver
// call, the copy engines walk the list), with packets that lie back to back in the pool
// merged into one copy. By default the gather runs on the Stager's own streams, ordered
// with the caller's stream by a per-slot event, so consecutive bursts overlap.
#include "gpu/stager.h"

#include <algorithm>
#include <new>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/place_kernel.h"

namespace netdaq::gpu {

Stager::Stager(int gpu, uint32_t slots, uint32_t max_packets, uint32_t in_bytes, StagerOptions opts)
    : slots_(slots), max_packets_(max_packets), in_bytes_(in_bytes), opts_(opts) {
  if (slots == 0 || max_packets == 0 || in_bytes == 0)
    throw Error(Errc::invalid_config, "stager: slots, max_packets and in_bytes must be > 0");
  opts_.streams = std::min(opts_.streams, slots);
  try {
    init(gpu);
  } catch (...) {
    release();
    throw;
  }
}

void Stager::init(int gpu) {
  use_device(gpu, "stager");
  const uint64_t bytes = uint64_t{slots_} * max_packets_ * in_bytes_;
  void* dev = nullptr;
  check(cudaMalloc(&dev, bytes), "stager: cudaMalloc(" + std::to_string(bytes) + " bytes)");
  device_ = static_cast<std::byte*>(dev);
  if (opts_.engine == StagerEngine::sm) {
    max_grid_ = place_max_grid(gpu);
    const uint64_t n = uint64_t{slots_} * max_packets_ * sizeof(PlacementEntry);
    const bool mapped = opts_.entries == StagerEntries::mapped;
    void* host = nullptr;
    check(cudaHostAlloc(&host, n, mapped ? cudaHostAllocMapped : cudaHostAllocDefault),
          "stager: cudaHostAlloc(" + std::to_string(n) + " bytes)");
    entries_ = static_cast<PlacementEntry*>(host);
    if (mapped) {
      void* alias = nullptr;
      check(cudaHostGetDevicePointer(&alias, host, 0), "stager: cudaHostGetDevicePointer");
      entries_dev_ = static_cast<const PlacementEntry*>(alias);
    } else {
      void* d = nullptr;
      check(cudaMalloc(&d, n), "stager: cudaMalloc(" + std::to_string(n) + " bytes of entries)");
      entries_copy_ = static_cast<PlacementEntry*>(d);
      entries_dev_ = entries_copy_;
    }
  } else {
    // dsts_ holds the destinations, then (second half) the sources of the merged copies.
    dsts_ = new (std::nothrow) void*[2 * size_t{max_packets_}];
    sizes_ = new (std::nothrow) size_t[max_packets_];
    if (!dsts_ || !sizes_) throw Error(Errc::resource, "stager: out of host memory");
  }
  streams_.reserve(opts_.streams);
  for (uint32_t i = 0; i < opts_.streams; ++i) {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stager: cudaStreamCreateWithFlags");
    streams_.push_back(s);
  }
  if (!streams_.empty()) {
    staged_.reserve(slots_);
    for (uint32_t i = 0; i < slots_; ++i) {
      cudaEvent_t ev = nullptr;
      check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "stager: cudaEventCreateWithFlags");
      staged_.push_back(ev);
    }
  }
}

void Stager::release() noexcept {
  // Work still in flight reads the entry arrays and writes device_: let it finish first.
  for (cudaStream_t s : streams_) cudaStreamSynchronize(s);
  for (cudaEvent_t ev : staged_) cudaEventDestroy(ev);
  for (cudaStream_t s : streams_) cudaStreamDestroy(s);
  staged_.clear();
  streams_.clear();
  if (device_) cudaFree(device_);  // waits for work still in flight into it
  if (entries_copy_) cudaFree(entries_copy_);
  if (entries_) cudaFreeHost(entries_);
  delete[] dsts_;
  delete[] sizes_;
  device_ = nullptr;
  entries_ = entries_copy_ = nullptr;
  entries_dev_ = nullptr;
  dsts_ = nullptr;
  sizes_ = nullptr;
}

Stager::~Stager() { release(); }

std::byte* Stager::slot_base(uint32_t slot) const noexcept {
  return device_ + uint64_t{slot} * max_packets_ * in_bytes_;
}

cudaError_t Stager::stage(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept {
  if (count == 0) return cudaSuccess;
  if (slot >= slots_ || count > max_packets_ || srcs == nullptr) return cudaErrorInvalidValue;
  // Own streams: the gather does not wait for the caller's earlier work (the slot reuse
  // contract makes the slot free, the sources are ready at the call); the caller's stream
  // waits for the gather, so what it runs next (the placement job) sees the data.
  const bool own = !streams_.empty();
  const cudaStream_t s = own ? streams_[slot % streams_.size()] : stream;
  cudaError_t err = opts_.engine == StagerEngine::sm ? stage_sm(slot, srcs, count, s) : stage_copy(slot, srcs, count, s);
  if (err != cudaSuccess || !own) return err;
  err = cudaEventRecord(staged_[slot], s);
  if (err != cudaSuccess) return err;
  return cudaStreamWaitEvent(stream, staged_[slot], 0);
}

cudaError_t Stager::stage_sm(uint32_t slot, const void* const* srcs, uint32_t count, cudaStream_t stream) noexcept {
  const uint64_t first = uint64_t{slot} * max_packets_;
  PlacementEntry* const e = entries_ + first;
  for (uint32_t i = 0; i < count; ++i) {
    if (srcs[i] == nullptr) return cudaErrorInvalidValue;  // src 0 would mean "zero-fill"
    e[i] = PlacementEntry{reinterpret_cast<uint64_t>(srcs[i]), i, 0};
  }
  if (entries_copy_) {  // entries device: one small H2D copy, in stream order before the kernel
    const cudaError_t err =
        cudaMemcpyAsync(entries_copy_ + first, e, sizeof(PlacementEntry) * count, cudaMemcpyHostToDevice, stream);
    if (err != cudaSuccess) return err;
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
