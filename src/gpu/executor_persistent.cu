// LaunchMode::persistent: a kernel launched once polls a doorbell ring of burst descriptors
// in mapped pinned memory; submit() is a few host stores, no CUDA call.
//
// Work split: the CTAs form `groups` groups (contiguous ranges, sizes differing by at most
// one); burst k is placed by group k % groups, every CTA of the group taking entries
// r, r + n, ... of it (r: its rank in the group, n: the group's size). A per-descriptor
// arrival counter in device memory lets the group's last CTA to finish store DONE. With
// groups > 1 up to `groups` bursts are placed at once, each paying its own chain (poll,
// relay, place, arrival, DONE) in parallel with the others; with 1 group every burst gets
// every CTA (best for one big burst at a time). Bursts of different groups may finish out
// of order on the GPU; the host still counts completions in order (DoorbellRing::poll_done
// stops at the first descriptor that is not DONE), so completed() stays a prefix count.
// Rejected: descriptor k to CTA k % blocks (or a shared ticket) puts a whole burst on one SM,
// so a 1,024 x 8 KB burst would move at one SM's bandwidth with the rest idle.
// Only a group's first CTA (its leader) polls the mapped ring over PCIe, for the group's
// bursts only; it relays each job to the group's other CTAs through device memory (a copy of
// the job and a "go" sequence word in L2). Measured on an H200: when every CTA polled host
// memory itself, a burst took ~4 us more per CTA (70 us with 16 CTAs, 500 us with 132), the
// PCIe reads of many pollers queueing behind each other; `groups` pollers (4 by default) is
// the price of concurrency.
// Every burst takes one device-scope atomic per CTA of its group.
//
// Rules the rest of the process must follow while this kernel runs (it never returns on its
// own): no cudaDeviceSynchronize, no cudaFree / cudaMalloc of device memory (they may
// synchronize the device), and every other kernel loaded before it starts (lazy module
// loading may need a context synchronization: CUDA_MODULE_LOADING=EAGER, or launch or
// cudaFuncGetAttributes each kernel once first). Otherwise the host thread hangs.
// Jobs in flight together may run concurrently: they must not write the same output slot.
#include <cuda/atomic>

#include <algorithm>
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
constexpr unsigned kMaxBackoffNs = 128;   // well under a PCIe round trip (~1 us): adds little latency
// groups = 0: min(depth, 4). Four leaders polling PCIe stay far from the many-poller cost
// measured above, and depth 4 (the pipeline's default) then keeps every group busy.
constexpr uint32_t kAutoGroups = 4;
constexpr auto kStartTimeout = std::chrono::seconds(10);
constexpr auto kStopTimeout = std::chrono::seconds(2);

static_assert(offsetof(BurstDescriptor, state) == 0 && offsetof(BurstDescriptor, seq) == 8 &&
                  offsetof(BurstDescriptor, job) == 16 && sizeof(PlaceJob) == 32 &&
                  offsetof(BurstDescriptor, seq_check) == 48 && sizeof(BurstDescriptor) == 64,
              "wait_for_burst reads a descriptor as 4 x 16 bytes, one per lane");

using SysWord = cuda::atomic_ref<uint32_t, cuda::thread_scope_system>;
using DevWord = cuda::atomic_ref<uint32_t, cuda::thread_scope_device>;
using DevWord64 = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;

__device__ __forceinline__ uint4 load_relaxed_sys(const uint4* p) {
  uint4 v;
  asm volatile("ld.relaxed.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

// Device-side relay from a group's leader to its other CTAs: go = seq + 1 once
// jobs[seq % slots] holds burst seq's job; quit = 1 when the host asked to stop. One per
// group, each on its own lines.
struct alignas(128) Relay {
  unsigned long long go;
  unsigned int quit;
  unsigned int pad[29];
  PlaceJob jobs[1];  // slots of them
};
static_assert(offsetof(Relay, jobs) == 128);

size_t relay_bytes(uint32_t slots) { return (offsetof(Relay, jobs) + sizeof(PlaceJob) * slots + 127) / 128 * 128; }

// Warp 0 of a leader, all lanes: waits until descriptor d holds burst `seq`; lanes 1 and 2
// copy its job to `job` and to `relay_job`. False: stop. Stop is looked at only while nothing
// is ready, so bursts already published still run.
// One poll = lanes 0..3 each load 16 bytes: one warp instruction, one PCIe read of the whole
// 64-byte descriptor (state, seq, job, seq_check), so a READY descriptor is used at once
// instead of costing a second round trip for the job. The read is accepted only when state is
// READY and both seq (first 32 bytes) and seq_check (last 32) are this burst's: the host
// writes the job, then seq_check (release), then READY (release), so a read whose two 32-byte
// sectors came from different moments is refused and polled again. Assumed: each 32-byte
// sector of the read is one snapshot of the host's cache line (a PCIe read of one line is
// served from one coherent copy of it). The acquire fence then orders everything the
// host published before READY (e.g. the entries it points to) before this CTA's placing.
__device__ bool wait_for_burst(BurstDescriptor& d, uint64_t seq, RingControl& ctl, PlaceJob& job,
                               PlaceJob& relay_job) {
  const unsigned lane = threadIdx.x & 31;
  const uint4* src = reinterpret_cast<const uint4*>(&d);
  unsigned backoff = kMinBackoffNs;
  for (unsigned polls = 1;; ++polls) {
    uint4 v = make_uint4(0, 0, 0, 0);
    if (lane < 4) v = load_relaxed_sys(src + lane);
    const uint32_t state = __shfl_sync(~0u, v.x, 0);
    const uint64_t got = (uint64_t{__shfl_sync(~0u, v.w, 0)} << 32) | __shfl_sync(~0u, v.z, 0);
    const uint64_t check = (uint64_t{__shfl_sync(~0u, v.y, 3)} << 32) | __shfl_sync(~0u, v.x, 3);
    if (state == static_cast<uint32_t>(DescState::ready) && got == seq && check == seq) {
      cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
      if (lane == 1 || lane == 2) {
        reinterpret_cast<uint4*>(&job)[lane - 1] = v;
        reinterpret_cast<uint4*>(&relay_job)[lane - 1] = v;
      }
      return true;
    }
    int stop = 0;
    if (polls % 8 == 0 && lane == 0) stop = SysWord(ctl.stop).load(cuda::memory_order_relaxed) != 0;
    if (__shfl_sync(~0u, stop, 0)) return false;
    __nanosleep(backoff);
    backoff = min(backoff * 2, kMaxBackoffNs);
  }
}

// Thread 0 of a group's other CTAs: waits for the leader to relay burst seq (false: stop;
// a burst already relayed is still placed).
__device__ bool wait_for_relay(Relay& r, uint64_t seq, uint32_t slot, PlaceJob& job) {
  DevWord64 go(r.go);
  DevWord quit(r.quit);
  while (go.load(cuda::memory_order_acquire) < seq + 1) {
    if (quit.load(cuda::memory_order_acquire) != 0) {  // stored after any go: re-read go
      if (go.load(cuda::memory_order_acquire) >= seq + 1) break;  // relayed before the quit
      return false;
    }
    __nanosleep(20);
  }
  const uint4* src = reinterpret_cast<const uint4*>(&r.jobs[slot]);
  uint4* dst = reinterpret_cast<uint4*>(&job);
  dst[0] = src[0];
  dst[1] = src[1];
  return true;
}

// ring/ctl: device addresses of the mapped ring. arrive: slots + 1 zeroed device words
// (per-descriptor arrivals, then the start count). relays: `groups` zeroed Relays of
// relay_stride bytes. groups <= slots, groups <= gridDim.x.
__global__ void __launch_bounds__(kThreads)
    persistent_place(BurstDescriptor* ring, RingControl* ctl, uint32_t slots, uint32_t* arrive, std::byte* relays,
                     uint32_t relay_stride, uint32_t groups) {
  // Raw storage: a __shared__ PlaceJob would need its (non-trivial) default constructor.
  __shared__ alignas(16) unsigned char job_mem[sizeof(PlaceJob)];
  __shared__ int quit;
  PlaceJob& job = *reinterpret_cast<PlaceJob*>(job_mem);

  if (threadIdx.x == 0 && DevWord(arrive[slots]).fetch_add(1, cuda::memory_order_relaxed) == gridDim.x - 1)
    SysWord(ctl->started).store(1, cuda::memory_order_release);

  // Group g: CTAs [g * B / G, (g + 1) * B / G).
  uint32_t group = 0;
  while (uint64_t{group + 1} * gridDim.x / groups <= blockIdx.x) ++group;
  const uint32_t first = static_cast<uint32_t>(uint64_t{group} * gridDim.x / groups);
  const uint32_t size = static_cast<uint32_t>(uint64_t{group + 1} * gridDim.x / groups) - first;
  const uint32_t rank = blockIdx.x - first;
  Relay& relay = *reinterpret_cast<Relay*>(relays + size_t{group} * relay_stride);

  uint32_t slot = group;  // seq % slots, seq = group, group + groups, ...
  for (uint64_t seq = group;; seq += groups) {
    if (rank == 0) {
      if (threadIdx.x < 32) {
        const bool ok = wait_for_burst(ring[slot], seq, *ctl, job, relay.jobs[slot]);
        __syncwarp();  // lanes 1, 2 wrote the relayed job: ordered before lane 0's release below
        if (threadIdx.x == 0) {
          quit = !ok;
          if (ok)
            DevWord64(relay.go).store(seq + 1, cuda::memory_order_release);
          else
            DevWord(relay.quit).store(1, cuda::memory_order_release);
        }
      }
    } else if (threadIdx.x == 0) {
      quit = !wait_for_relay(relay, seq, slot, job);
    }
    __syncthreads();
    if (quit) return;
    place_job(job, rank, size);
    // Also: nobody reads job/quit while they are overwritten next round.
    __syncthreads();
    if (threadIdx.x == 0) {
      // After the barrier, thread 0's device-scope fence and acq_rel arrival cover the whole
      // CTA's output (the cooperative-groups grid barrier pattern); one fence per CTA, not
      // one per thread.
      __threadfence();
      DevWord count(arrive[slot]);
      if (count.fetch_add(1, cuda::memory_order_acq_rel) == size - 1) {  // last CTA of this burst
        // Next use comes after the host sees DONE (and republishes): ordered by the release below.
        count.store(0, cuda::memory_order_relaxed);
        // A system-scope release store: cumulative over what this thread observed (the other
        // CTAs' output, through their arrivals), so no separate __threadfence_system.
        SysWord(ring[slot].state).store(static_cast<uint32_t>(DescState::done), cuda::memory_order_release);
      }
    }
    slot += groups;
    if (slot >= slots) slot -= slots;
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
      groups_ = std::min({o.groups ? o.groups : std::min(o.depth, kAutoGroups), o.depth, blocks_});
      const size_t arrive_bytes = (size_t{o.depth} + 1) * sizeof(uint32_t);
      const size_t relay_offset = (arrive_bytes + 127) / 128 * 128;
      uint32_t relay_stride = static_cast<uint32_t>(relay_bytes(o.depth));
      const size_t device_bytes = relay_offset + size_t{relay_stride} * groups_;
      check(cudaMallocAsync(reinterpret_cast<void**>(&arrive_), device_bytes, kernel_stream_), who + ": cudaMallocAsync");
      check(cudaMemsetAsync(arrive_, 0, device_bytes, kernel_stream_), who + ": cudaMemsetAsync");
      std::byte* relays = reinterpret_cast<std::byte*>(arrive_) + relay_offset;
      auto* ctl = static_cast<RingControl*>(dev_mem);
      auto* ring = reinterpret_cast<BurstDescriptor*>(static_cast<std::byte*>(dev_mem) + sizeof(RingControl));
      uint32_t slots = o.depth;
      uint32_t groups = groups_;
      void* args[] = {&ring, &ctl, &slots, &arrive_, &relays, &relay_stride, &groups};
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
  // opts.blocks, or 1 per SM (measured on the H200: 1,024 x 8 KB bursts took 24 us with 1 CTA
  // per 8 SMs, 10 us with 1 per SM; small bursts are no slower); refused when they cannot all
  // be resident at once.
  static uint32_t resident_blocks(const ExecutorOptions& o) {
    const std::string who(kWho);
    int sms = 0, coop = 0, per_sm = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, o.gpu), who + ": SM count");
    check(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, o.gpu), who + ": cooperative launch");
    if (!coop) throw Error(Errc::unsupported, who + ": gpu " + std::to_string(o.gpu) + " has no cooperative launch");
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent_place, kThreads, 0),
          who + ": occupancy");
    const uint32_t max_blocks = static_cast<uint32_t>(sms * per_sm);
    const uint32_t blocks = o.blocks ? o.blocks : std::max(1, sms);
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
  uint32_t groups_ = 1;
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
