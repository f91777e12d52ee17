// LaunchMode::persistent: a kernel launched once polls a doorbell ring of burst descriptors
// in mapped pinned memory; submit() is a few host stores, no CUDA call.
//
// Work split: every CTA takes part in every burst (entries b, b + blocks, ... of it), and a
// per-descriptor arrival counter in device memory lets the last CTA to finish store DONE.
// Rejected: descriptor k to CTA k % blocks (or a shared ticket) puts a whole burst on one SM,
// so a 1,024 x 8 KB burst would move at one SM's bandwidth with the rest idle.
// Only CTA 0 polls the mapped ring over PCIe; it relays each job to the other CTAs through
// device memory (a copy of the job and a "go" sequence word in L2). Measured on an H200:
// when every CTA polled host memory itself, a burst took ~4 us more per CTA (70 us with 16
// CTAs, 500 us with 132), the PCIe reads of many pollers queueing behind each other.
// Every burst takes one device-scope atomic per CTA.
//
// Rules the rest of the process must follow while this kernel runs (it never returns on its
// own): no cudaDeviceSynchronize, no cudaFree / cudaMalloc of device memory (they may
// synchronize the device), and every other kernel loaded before it starts (lazy module
// loading may need a context synchronization: CUDA_MODULE_LOADING=EAGER, or launch or
// cudaFuncGetAttributes each kernel once first). Otherwise the host thread hangs.
// Jobs in flight together may run concurrently: they must not write the same output slot.
#include <cuda/atomic>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "gpu/cuda_check.h"
#include "gpu/executors.h"
#include "gpu/host/doorbell_ring.h"
#include "gpu/place_device.cuh"
#include "gpu/place_kernel.h"

namespace netdaq::gpu {
namespace {

constexpr const char* kWho = "gpu executor (persistent)";
constexpr uint32_t kThreads = 512;        // per CTA: few CTAs, so each brings many loads in flight
constexpr unsigned kMinBackoffNs = 32;
constexpr unsigned kMaxBackoffNs = 256;   // well under a PCIe round trip (~1 us): adds little latency
constexpr auto kStartTimeout = std::chrono::seconds(10);
constexpr auto kStopTimeout = std::chrono::seconds(2);

static_assert(offsetof(BurstDescriptor, seq) + sizeof(uint64_t) <= 16 && offsetof(BurstDescriptor, job) == 16 &&
              sizeof(PlaceJob) == 32, "wait_for_burst reads a descriptor as 3 x 16 bytes");

using SysWord = cuda::atomic_ref<uint32_t, cuda::thread_scope_system>;
using DevWord = cuda::atomic_ref<uint32_t, cuda::thread_scope_device>;

// Thread 0: waits until descriptor d holds burst `seq` (copied to `job`), or stop (false).
// Stop is looked at only while nothing is ready, so bursts already published still run.
__device__ bool wait_for_burst(BurstDescriptor& d, uint64_t seq, RingControl& ctl, PlaceJob& job) {
  SysWord state(d.state);
  SysWord stop(ctl.stop);
  unsigned backoff = kMinBackoffNs;
  for (unsigned polls = 1;; ++polls) {
    if (state.load(cuda::memory_order_acquire) == static_cast<uint32_t>(DescState::ready)) {
      // Seq and job in three 16-byte loads issued together: one PCIe round trip, not one
      // per field (a byte-wise memcpy stalls on each of 32 reads).
      // The job is copied before seq is checked so the compiler cannot sink its loads
      // behind the comparison.
      const uint4* src = reinterpret_cast<const uint4*>(&d);
      const uint4 head = src[0], j0 = src[1], j1 = src[2];
      uint4* dst = reinterpret_cast<uint4*>(&job);
      dst[0] = j0;
      dst[1] = j1;
      uint64_t got;
      memcpy(&got, reinterpret_cast<const char*>(&head) + offsetof(BurstDescriptor, seq), sizeof got);
      if (got == seq) return true;  // always, by the protocol; a cheap guard all the same
    }
    if (polls % 8 == 0 && stop.load(cuda::memory_order_relaxed) != 0) return false;
    __nanosleep(backoff);
    backoff = min(backoff * 2, kMaxBackoffNs);
  }
}

// Device-side relay from CTA 0 to the others: go = seq + 1 once jobs[seq % slots] holds
// burst seq's job; kQuit when the host asked to stop.
struct Relay {
  unsigned long long go;
  unsigned long long pad;
  PlaceJob jobs[1];  // slots of them
};
constexpr unsigned long long kQuit = ~0ull;
using DevWord64 = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;

size_t relay_bytes(uint32_t slots) { return offsetof(Relay, jobs) + sizeof(PlaceJob) * slots; }

// Thread 0 of CTAs other than 0: waits for CTA 0 to relay burst seq (false: stop).
__device__ bool wait_for_relay(Relay& r, uint64_t seq, uint32_t slot, PlaceJob& job) {
  DevWord64 go(r.go);
  unsigned long long g;
  while ((g = go.load(cuda::memory_order_acquire)) < seq + 1) __nanosleep(20);
  if (g == kQuit) return false;
  const uint4* src = reinterpret_cast<const uint4*>(&r.jobs[slot]);
  uint4* dst = reinterpret_cast<uint4*>(&job);
  dst[0] = src[0];
  dst[1] = src[1];
  return true;
}

// ring/ctl: device addresses of the mapped ring. arrive: slots + 1 zeroed device words
// (per-descriptor arrivals, then the start count). relay: zeroed device memory.
__global__ void __launch_bounds__(kThreads)
    persistent_place(BurstDescriptor* ring, RingControl* ctl, uint32_t slots, uint32_t* arrive, Relay* relay) {
  // Raw storage: a __shared__ PlaceJob would need its (non-trivial) default constructor.
  __shared__ alignas(16) unsigned char job_mem[sizeof(PlaceJob)];
  __shared__ int quit;
  PlaceJob& job = *reinterpret_cast<PlaceJob*>(job_mem);

  if (threadIdx.x == 0 && DevWord(arrive[slots]).fetch_add(1, cuda::memory_order_relaxed) == gridDim.x - 1)
    SysWord(ctl->started).store(1, cuda::memory_order_release);

  uint32_t slot = 0;
  for (uint64_t seq = 0;; ++seq) {
    if (threadIdx.x == 0) {
      if (blockIdx.x == 0) {
        quit = !wait_for_burst(ring[slot], seq, *ctl, job);
        if (!quit) {
          const uint4* src = reinterpret_cast<const uint4*>(&job);
          uint4* dst = reinterpret_cast<uint4*>(&relay->jobs[slot]);
          dst[0] = src[0];
          dst[1] = src[1];
        }
        DevWord64(relay->go).store(quit ? kQuit : seq + 1, cuda::memory_order_release);
      } else {
        quit = !wait_for_relay(*relay, seq, slot, job);
      }
    }
    __syncthreads();
    if (quit) return;
    place_job(job, blockIdx.x, gridDim.x);
    __threadfence();  // this thread's output, visible GPU-wide before the arrival below
    __syncthreads();  // also: nobody reads job/quit while thread 0 overwrites them next round
    if (threadIdx.x == 0) {
      DevWord count(arrive[slot]);
      if (count.fetch_add(1, cuda::memory_order_acq_rel) == gridDim.x - 1) {  // last CTA of this burst
        count.store(0, cuda::memory_order_relaxed);  // next use comes after the host sees DONE
        __threadfence_system();
        SysWord(ring[slot].state).store(static_cast<uint32_t>(DescState::done), cuda::memory_order_release);
      }
    }
    if (++slot == slots) slot = 0;
  }
}

class PersistentExecutor final : public PlaceExecutor {
 public:
  explicit PersistentExecutor(const ExecutorOptions& o) {
    const std::string who(kWho);
    use_device(o.gpu, kWho);
    try {
      blocks_ = resident_blocks(o);
      check(cudaStreamCreateWithFlags(&kernel_stream_, cudaStreamNonBlocking), who + ": cudaStreamCreate");
      check(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking), who + ": cudaStreamCreate");
      check(cudaHostAlloc(&host_mem_, DoorbellRing::bytes_for(o.depth), cudaHostAllocMapped | cudaHostAllocPortable),
            who + ": cudaHostAlloc(mapped doorbell ring)");
      ring_.emplace(host_mem_, o.depth);
      void* dev_mem = nullptr;
      check(cudaHostGetDevicePointer(&dev_mem, host_mem_, 0), who + ": cudaHostGetDevicePointer");
      // Stream-ordered allocation: no device-wide synchronization, so a second persistent
      // executor can start while the first one runs.
      const size_t arrive_bytes = (size_t{o.depth} + 1) * sizeof(uint32_t);
      const size_t relay_offset = (arrive_bytes + 15) / 16 * 16;
      const size_t device_bytes = relay_offset + relay_bytes(o.depth);
      check(cudaMallocAsync(reinterpret_cast<void**>(&arrive_), device_bytes, kernel_stream_), who + ": cudaMallocAsync");
      check(cudaMemsetAsync(arrive_, 0, device_bytes, kernel_stream_), who + ": cudaMemsetAsync");
      Relay* relay = reinterpret_cast<Relay*>(reinterpret_cast<std::byte*>(arrive_) + relay_offset);
      auto* ctl = static_cast<RingControl*>(dev_mem);
      auto* ring = reinterpret_cast<BurstDescriptor*>(static_cast<std::byte*>(dev_mem) + sizeof(RingControl));
      uint32_t slots = o.depth;
      void* args[] = {&ring, &ctl, &slots, &arrive_, &relay};
      // Cooperative: all CTAs resident at once, or a clear launch error (a CTA that never
      // starts would leave every burst one arrival short).
      check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&persistent_place), dim3(blocks_), dim3(kThreads),
                                        args, 0, kernel_stream_),
            who + ": launch of the persistent kernel (" + std::to_string(blocks_) + " blocks)");
      launched_ = true;
      wait_started();
    } catch (...) {
      shutdown();
      throw;
    }
  }

  ~PersistentExecutor() override { shutdown(); }

  bool submit(const PlaceJob& job) noexcept override {
    BurstDescriptor* d = ring_->acquire();
    if (!d) {
      ring_->poll_done();
      if (!(d = ring_->acquire())) return false;
    }
    d->job = job;
    ring_->publish(*d);
    return true;
  }

  uint64_t completed() noexcept override {
    ring_->poll_done();
    return ring_->completed();
  }
  uint64_t submitted() const noexcept override { return ring_->published(); }

  // Spins (yielding) until every published burst is DONE; throws when the kernel faulted or
  // exited, or when nothing finished for 30 s.
  void synchronize() override {
    auto last_progress = std::chrono::steady_clock::now();
    for (;;) {
      if (ring_->poll_done() > 0) last_progress = std::chrono::steady_clock::now();
      if (ring_->completed() == ring_->published()) return;
      const cudaError_t err = cudaStreamQuery(kernel_stream_);
      if (err == cudaSuccess)
        throw Error(Errc::state, std::string(kWho) + ": the persistent kernel exited with " +
                                     std::to_string(ring_->in_flight()) + " bursts unfinished");
      if (err != cudaErrorNotReady) check(err, std::string(kWho) + ": persistent kernel");
      if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(30))
        throw Error(Errc::state, std::string(kWho) + ": no burst finished for 30 s (" +
                                     std::to_string(ring_->in_flight()) + " in flight)");
      std::this_thread::yield();
    }
  }

  cudaStream_t stream() const noexcept override { return copy_stream_; }
  LaunchMode mode() const noexcept override { return LaunchMode::persistent; }

 private:
  // opts.blocks, or 1 per 8 SMs; refused when they cannot all be resident at once.
  static uint32_t resident_blocks(const ExecutorOptions& o) {
    const std::string who(kWho);
    int sms = 0, coop = 0, per_sm = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, o.gpu), who + ": SM count");
    check(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, o.gpu), who + ": cooperative launch");
    if (!coop) throw Error(Errc::unsupported, who + ": gpu " + std::to_string(o.gpu) + " has no cooperative launch");
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent_place, kThreads, 0),
          who + ": occupancy");
    const uint32_t max_blocks = static_cast<uint32_t>(sms * per_sm);
    const uint32_t blocks = o.blocks ? o.blocks : std::max(1, sms / 8);
    if (blocks > max_blocks)
      throw Error(Errc::invalid_config, who + ": " + std::to_string(blocks) +
                                            " blocks cannot all be resident at once on gpu " + std::to_string(o.gpu) +
                                            " (at most " + std::to_string(max_blocks) + ": " + std::to_string(sms) +
                                            " SMs x " + std::to_string(per_sm) + ")");
    return blocks;
  }

  void wait_started() {
    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    while (!ring_->consumer_started()) {
      const cudaError_t err = cudaStreamQuery(kernel_stream_);
      if (err != cudaErrorNotReady && err != cudaSuccess) check(err, std::string(kWho) + ": persistent kernel start");
      if (err == cudaSuccess) throw Error(Errc::state, std::string(kWho) + ": the persistent kernel exited at start");
      if (std::chrono::steady_clock::now() > deadline)
        throw Error(Errc::resource, std::string(kWho) + ": the persistent kernel did not start within 10 s "
                                                        "(other work holding the GPU?)");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  // Asks the kernel to stop and waits (bounded) for it. If it does not stop, its memory is
  // leaked on purpose: freeing memory a running kernel polls would be worse.
  void shutdown() noexcept {
    bool stopped = true;
    if (launched_) {
      ring_->request_stop();
      const auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
      cudaError_t err;
      while ((err = cudaStreamQuery(kernel_stream_)) == cudaErrorNotReady &&
             std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (err == cudaErrorNotReady) {
        stopped = false;
        log_executor_error(std::string(kWho) + ": the persistent kernel did not stop within " +
                           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(kStopTimeout).count()) +
                           " ms of the stop request; its doorbell ring and streams are left allocated");
      } else if (err != cudaSuccess) {
        log_executor_error(std::string(kWho) + ": the persistent kernel ended with " + describe(err));
      }
      launched_ = false;
    }
    if (!stopped) return;
    if (arrive_) {
      cudaFreeAsync(arrive_, kernel_stream_);
      cudaStreamSynchronize(kernel_stream_);
    }
    ring_.reset();
    if (host_mem_) cudaFreeHost(host_mem_);
    if (copy_stream_) cudaStreamDestroy(copy_stream_);
    if (kernel_stream_) cudaStreamDestroy(kernel_stream_);
    arrive_ = nullptr;
    host_mem_ = nullptr;
    copy_stream_ = kernel_stream_ = nullptr;
  }

  uint32_t blocks_ = 1;
  cudaStream_t kernel_stream_ = nullptr;
  cudaStream_t copy_stream_ = nullptr;
  void* host_mem_ = nullptr;
  uint32_t* arrive_ = nullptr;
  std::optional<DoorbellRing> ring_;
  bool launched_ = false;
};

}  // namespace

std::unique_ptr<PlaceExecutor> make_persistent_executor(const ExecutorOptions& opts) {
  return std::make_unique<PersistentExecutor>(opts);
}

}  // namespace netdaq::gpu
