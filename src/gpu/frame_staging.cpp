// FrameStaging: pinned buffers, one copy stream, one event per buffer, and a FIFO of the
// buffers whose copies were started (copies on one stream finish in order).
#include "netdaq/frame_staging.h"

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "gpu/cuda_check.h"
#include "netdaq/status.h"

namespace netdaq::gpu {

struct FrameStaging::Impl {
  uint32_t count = 0;
  size_t size = 0;
  int gpu = 0;
  std::byte* host = nullptr;  // pinned, count x size
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> done;     // by buffer: its copy is over
  std::vector<size_t> length;        // by buffer: bytes staged
  std::vector<uint8_t> busy;         // by buffer
  std::vector<uint32_t> free_list;   // free buffers (a stack)
  std::vector<uint32_t> fifo;        // copies started, oldest first (a ring of count)
  uint32_t head = 0, queued = 0;
  uint32_t in_use = 0;
  StagingStats stats;

  void destroy() noexcept {
    if (stream) cudaStreamSynchronize(stream);
    for (cudaEvent_t e : done)
      if (e) cudaEventDestroy(e);
    if (stream) cudaStreamDestroy(stream);
    if (host) cudaFreeHost(host);
  }
};

FrameStaging::FrameStaging(uint32_t buffers, size_t buffer_bytes, int gpu) : impl_(std::make_unique<Impl>()) {
  const std::string who = "GPU frame staging";
  if (buffers == 0 || buffer_bytes == 0) throw Error(Errc::invalid_config, who + ": no buffers or zero-byte buffers");
  Impl& m = *impl_;
  m.count = buffers;
  m.size = buffer_bytes;
  m.gpu = gpu;
  try {
    use_device(gpu, who);
    check(cudaHostAlloc(reinterpret_cast<void**>(&m.host), size_t{buffers} * buffer_bytes, cudaHostAllocDefault),
          who + ": cudaHostAlloc of " + std::to_string(buffers) + " x " + std::to_string(buffer_bytes) + " bytes");
    check(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), who + ": cudaStreamCreate");
    m.done.assign(buffers, nullptr);
    for (auto& e : m.done) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), who + ": cudaEventCreate");
  } catch (...) {
    m.destroy();
    throw;
  }
  m.length.assign(buffers, 0);
  m.busy.assign(buffers, 0);
  m.fifo.assign(buffers, 0);
  m.free_list.reserve(buffers);
  for (uint32_t b = buffers; b-- > 0;) m.free_list.push_back(b);
}

FrameStaging::~FrameStaging() { impl_->destroy(); }

uint32_t FrameStaging::stage(const void* src, size_t bytes) noexcept {
  Impl& m = *impl_;
  if (bytes > m.size) {
    ++m.stats.too_big;
    return kNone;
  }
  if (m.free_list.empty()) {
    ++m.stats.no_buffer;
    return kNone;
  }
  const uint32_t b = m.free_list.back();
  std::byte* dst = m.host + size_t{b} * m.size;
  if (cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, m.stream) != cudaSuccess ||
      cudaEventRecord(m.done[b], m.stream) != cudaSuccess) {
    ++m.stats.copy_failed;
    return kNone;
  }
  m.free_list.pop_back();
  m.busy[b] = 1;
  m.length[b] = bytes;
  ++m.in_use;
  m.fifo[(m.head + m.queued) % m.count] = b;
  ++m.queued;
  return b;
}

bool FrameStaging::ready(uint32_t& buffer, bool& copied) noexcept {
  Impl& m = *impl_;
  if (m.queued == 0) return false;
  const uint32_t b = m.fifo[m.head];
  const cudaError_t st = cudaEventQuery(m.done[b]);
  if (st == cudaErrorNotReady) return false;
  m.head = (m.head + 1) % m.count;
  --m.queued;
  buffer = b;
  copied = st == cudaSuccess;
  if (copied) {
    ++m.stats.frames_staged;
    m.stats.bytes_staged += m.length[b];
  } else {
    ++m.stats.copy_failed;
  }
  return true;
}

bool FrameStaging::synchronize() noexcept { return cudaStreamSynchronize(impl_->stream) == cudaSuccess; }

std::span<const std::byte> FrameStaging::bytes(uint32_t buffer) const noexcept {
  const Impl& m = *impl_;
  if (buffer >= m.count) return {};
  return {m.host + size_t{buffer} * m.size, m.length[buffer]};
}

void FrameStaging::release(uint32_t buffer) noexcept {
  Impl& m = *impl_;
  if (buffer >= m.count || !m.busy[buffer]) return;
  m.busy[buffer] = 0;
  --m.in_use;
  m.free_list.push_back(buffer);  // reserved to count: never allocates
}

uint32_t FrameStaging::buffers() const noexcept { return impl_->count; }
size_t FrameStaging::buffer_bytes() const noexcept { return impl_->size; }
uint32_t FrameStaging::busy() const noexcept { return impl_->in_use; }
StagingStats FrameStaging::stats() const noexcept { return impl_->stats; }

}  // namespace netdaq::gpu
