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
// Every burst the group places together takes one device-scope atomic per CTA of its group.
// Per-burst chain (ExecutorOptions::persistent, PersistentTuning; bench/gpu/README.md,
// "Persistent kernel: where the latency goes"): small bursts (solo_max_bytes) and groups of
// one CTA are placed by the leader alone, which stores DONE itself (no relay wait, no
// arrivals; the other CTAs see the job in the relay and skip it); the relay is one 64-byte
// line of seq-tagged words (one store, one load, no fence); the doorbell poll is an acquire
// load (no system-scope fence after READY); arrivals are one atom.inc each; the first
// spin_polls polls after a burst do not sleep. PersistentTuning::legacy() is the chain as it
// was before (relaxed poll + fence, go-word relay, __threadfence + fetch_add, backoff at once).
// Keep the kernel free of register spills (ptxas -v: 0 bytes stack frame): every acquire load
// invalidates L1, so a stack reload after it is an L2 round trip on the burst's path.
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

// PersistentTuning as kernel flags (uniform branches: a predicate per burst, nothing per byte).
enum : uint32_t { kAcquireLoad = 1, kTaggedRelay = 2, kIncArrival = 4 };

// What a CTA does with the burst of this round (shared memory, double-buffered by round).
enum : int { kPlace = 0, kSolo = 1, kSkip = 2, kQuit = 3 };

struct KernelParams {
  BurstDescriptor* ring;  // device address of the mapped ring
  RingControl* ctl;
  uint32_t* arrive;       // slots + 1 zeroed device words: per-descriptor arrivals, then the start count
  std::byte* relays;      // `groups` zeroed Relays of relay_stride bytes
  PersistentTraceRecord* trace;  // nullptr: no stamps
  uint32_t slots, relay_stride, groups;  // groups <= slots, groups <= gridDim.x
  uint32_t flags;
  uint32_t solo_max_bytes;
  uint32_t spin_polls;
  uint32_t trace_records;
  // Staging copy (ExecutorOptions::stage): descriptor slot k's job gathers its staged entries
  // into stage + k * stage_slot_bytes (device memory), then places from there; nullptr: none.
  std::byte* stage;
  uint64_t stage_slot_bytes;
};

__device__ __forceinline__ uint4 load_relaxed_sys(const uint4* p) {
  uint4 v;
  asm volatile("ld.relaxed.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

__device__ __forceinline__ uint4 load_acquire_sys(const uint4* p) {
  uint4 v;
  asm volatile("ld.acquire.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

__device__ __forceinline__ unsigned long long load_acquire_gpu(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_relaxed_gpu(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ void fence_acq_rel_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// Returns the old value; the word becomes old >= wrap ? 0 : old + 1.
__device__ __forceinline__ uint32_t atom_inc_acq_rel_gpu(uint32_t* p, uint32_t wrap) {
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(wrap) : "memory");
  return old;
}

__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

// Device-side relay from a group's leader to its other CTAs, one per group, each on its own
// lines. Line k carries burst seq's job when seq % slots == k:
//  - tagged relay: word i = (uint32(seq + 1) << 32) | 32-bit word i of the job, each stored
//    by its own lane with one 64-bit store (single-copy atomic), all 8 in one 64-byte line:
//    a reader that sees all 8 tags equal to seq + 1 has the whole job from one load;
//  - go relay: the job in words 0..3, then go = seq + 1 (release); quit = 1 when the host
//    asked to stop (both relays).
struct alignas(64) RelayLine {
  unsigned long long w[8];
};
struct alignas(128) Relay {
  unsigned long long go;
  unsigned int quit;
  unsigned int pad[29];
  RelayLine lines[1];  // slots of them
};
static_assert(offsetof(Relay, lines) == 128 && sizeof(RelayLine) == 64 && sizeof(PlaceJob) == 8 * sizeof(uint32_t));

size_t relay_bytes(uint32_t slots) { return (offsetof(Relay, lines) + sizeof(RelayLine) * slots + 127) / 128 * 128; }

// Whether the group's leader places this burst alone (then it stores DONE itself and the
// other CTAs skip it). Every CTA of the group computes the same answer from the same job.
__device__ __forceinline__ bool placed_alone(const KernelParams& p, const PlaceJob& job, uint32_t size) {
  if (p.solo_max_bytes == 0) return false;
  if (size == 1) return true;
  // Other CTAs skip a burst they never saw only with tags (wait_for_tagged_relay): keep the
  // go relay to whole-group bursts.
  if (!(p.flags & kTaggedRelay)) return false;
  const uint64_t per = job.in_bytes > job.out_slot_bytes ? job.in_bytes : job.out_slot_bytes;
  return uint64_t{job.count} * per <= p.solo_max_bytes;
}

// Warp 0 of a leader, all lanes: waits until descriptor d holds burst `seq`; lanes 1 and 2
// copy its job to `job`. False: stop. Stop is looked at only while nothing is ready, so
// bursts already published still run.
// One poll = lanes 0..3 each load 16 bytes: one warp instruction, one PCIe read of the whole
// 64-byte descriptor (state, seq, job, seq_check), so a READY descriptor is used at once
// instead of costing a second round trip for the job. The read is accepted only when state is
// READY and both seq (first 32 bytes) and seq_check (last 32) are this burst's: the host
// writes the job, then seq_check (release), then READY (release), so a read whose two 32-byte
// sectors came from different moments is refused and polled again. Assumed: each 32-byte
// sector of the read is one snapshot of the host's cache line (a PCIe read of one line is
// served from one coherent copy of it). The acquire (each load's own with kAcquireLoad, else
// a system-scope fence once READY is seen) then orders everything the host published before
// READY (e.g. the entries it points to) before this CTA's placing.
__device__ bool wait_for_burst(const KernelParams& p, BurstDescriptor& d, uint64_t seq, PlaceJob& job) {
  const unsigned lane = threadIdx.x & 31;
  const uint4* src = reinterpret_cast<const uint4*>(&d);
  const bool acquire_load = (p.flags & kAcquireLoad) != 0;
  unsigned backoff = kMinBackoffNs;
  for (unsigned polls = 1;; ++polls) {
    uint4 v = make_uint4(0, 0, 0, 0);
    if (lane < 4) v = acquire_load ? load_acquire_sys(src + lane) : load_relaxed_sys(src + lane);
    const uint32_t state = __shfl_sync(~0u, v.x, 0);
    const uint64_t got = (uint64_t{__shfl_sync(~0u, v.w, 0)} << 32) | __shfl_sync(~0u, v.z, 0);
    const uint64_t check = (uint64_t{__shfl_sync(~0u, v.y, 3)} << 32) | __shfl_sync(~0u, v.x, 3);
    if (state == static_cast<uint32_t>(DescState::ready) && got == seq && check == seq) {
      if (!acquire_load) cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
      if (lane == 1 || lane == 2) reinterpret_cast<uint4*>(&job)[lane - 1] = v;
      return true;
    }
    int stop = 0;
    if (polls % 8 == 0 && lane == 0) stop = SysWord(p.ctl->stop).load(cuda::memory_order_relaxed) != 0;
    if (__shfl_sync(~0u, stop, 0)) return false;
    if (polls > p.spin_polls) {
      __nanosleep(backoff);
      backoff = min(backoff * 2, kMaxBackoffNs);
    }
  }
}

// Warp 0 of a leader, all lanes, after wait_for_burst and a __syncwarp: hands `job` (shared)
// to the group's other CTAs. `solo`: the leader places it alone; the others only need to see
// it to skip it, so the tagged stores need no release.
__device__ void relay_job(const KernelParams& p, Relay& r, uint32_t slot, uint64_t seq, const PlaceJob& job,
                          bool solo) {
  const unsigned lane = threadIdx.x & 31;
  RelayLine& line = r.lines[slot];
  if (p.flags & kTaggedRelay) {
    // Release for the tagged stores (the other CTAs then read what the host published before
    // READY): the system-scope fence of wait_for_burst is one already; with acquire loads, a
    // device-scope fence (nothing of ours is in flight, so it should be short).
    if ((p.flags & kAcquireLoad) && !solo) fence_acq_rel_gpu();
    if (lane < 8)
      store_relaxed_gpu(&line.w[lane], (uint64_t{static_cast<uint32_t>(seq + 1)} << 32) |
                                           reinterpret_cast<const uint32_t*>(&job)[lane]);
  } else {
    if (lane == 1 || lane == 2)
      reinterpret_cast<uint4*>(&line)[lane - 1] = reinterpret_cast<const uint4*>(&job)[lane - 1];
    __syncwarp();  // the job's stores ordered before lane 0's release below
    if (lane == 0) DevWord64(r.go).store(seq + 1, cuda::memory_order_release);
  }
}

// Warp 0 of a group's other CTAs, tagged relay: waits for burst seq's line. kPlace with the
// job in `job` (the caller decides kPlace / kSkip from it), kSkip when the line already holds
// a later burst (seq was placed by the leader alone: a burst the whole group places cannot be
// overwritten before this CTA arrived for it, as its descriptor is reused only after DONE),
// kQuit when the host asked to stop and seq was not relayed.
__device__ int wait_for_tagged_relay(const KernelParams& p, Relay& r, uint32_t slot, uint64_t seq, PlaceJob& job) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned long long* line = r.lines[slot].w;
  const uint32_t want = static_cast<uint32_t>(seq + 1);
  unsigned backoff = kMinBackoffNs;
  for (unsigned polls = 1;; ++polls) {
    bool quit_seen = false;
    if (polls % 8 == 0) {
      int q = 0;
      if (lane == 0) q = DevWord(r.quit).load(cuda::memory_order_acquire) != 0;  // stored after every relay
      quit_seen = __shfl_sync(~0u, q, 0) != 0;  // then the load below is the last look
    }
    // Acquire loads (pairing with the leader's release before its stores): no fence after.
    const unsigned long long w = lane < 8 ? load_acquire_gpu(line + lane) : 0;
    const uint32_t tag = static_cast<uint32_t>(w >> 32);
    const unsigned exact = __ballot_sync(~0u, lane < 8 && tag == want);
    if (exact == 0xffu) {
      if (lane < 8) reinterpret_cast<uint32_t*>(&job)[lane] = static_cast<uint32_t>(w);
      return kPlace;
    }
    if (__ballot_sync(~0u, lane < 8 && static_cast<int32_t>(tag - want) > 0)) return kSkip;
    if (quit_seen) return kQuit;
    if (polls > p.spin_polls) {
      __nanosleep(backoff);
      backoff = min(backoff * 2, kMaxBackoffNs);
    }
  }
}

// Thread 0 of a group's other CTAs, go relay: waits for the leader to relay burst seq (false:
// stop; a burst already relayed is still placed).
__device__ bool wait_for_go_relay(const KernelParams& p, Relay& r, uint64_t seq, uint32_t slot, PlaceJob& job) {
  DevWord64 go(r.go);
  DevWord quit(r.quit);
  for (unsigned polls = 1; go.load(cuda::memory_order_acquire) < seq + 1; ++polls) {
    if (quit.load(cuda::memory_order_acquire) != 0) {  // stored after any go: re-read go
      if (go.load(cuda::memory_order_acquire) >= seq + 1) break;  // relayed before the quit
      return false;
    }
    if (polls > p.spin_polls) __nanosleep(20);
  }
  const uint4* src = reinterpret_cast<const uint4*>(&r.lines[slot]);
  uint4* dst = reinterpret_cast<uint4*>(&job);
  dst[0] = src[0];
  dst[1] = src[1];
  return true;
}

// Stamps of a CTA's thread 0 for the burst at hand (trace only). In shared memory, not
// registers: kept in registers across place_job they made the kernel spill to its stack (local
// memory through L1), and every acquire load invalidates L1, so each reload became an L2 round
// trip on the critical path.
struct Stamps {
  uint64_t got, clock, go, own, placed;
};

// Thread 0 of the CTA that completes burst seq: stores DONE. A system-scope release store:
// cumulative over what this thread observed (its CTA's output through the barrier before,
// the other CTAs' through their arrivals), so no separate __threadfence_system.
__device__ void store_done(const KernelParams& p, BurstDescriptor& d, uint64_t seq, const Stamps& st, bool solo) {
  const uint64_t t_arrived = p.trace ? globaltimer() : 0;
  SysWord(d.state).store(static_cast<uint32_t>(DescState::done), cuda::memory_order_release);
  if (p.trace) {
    const uint64_t t_done = globaltimer();
    PersistentTraceRecord& rec = p.trace[seq % p.trace_records];
    rec.sm_cycles = clock64() - st.clock;
    if (solo) rec.ready = st.got;
    rec.relayed = st.got;
    rec.go = st.go;
    rec.own = st.own;
    rec.placed = st.placed;
    rec.arrived = solo ? st.placed : t_arrived;
    rec.done = t_done;
    rec.solo = solo;
    rec.seq_plus_1 = seq + 1;
  }
}

// Thread 0 of every CTA that placed a share of burst seq (after the CTA barrier): counts its
// arrival; the group's last stores DONE. The barrier before orders the CTA's output before
// thread 0's release (the cooperative-groups grid barrier pattern: one fence per CTA).
__device__ void arrive(const KernelParams& p, BurstDescriptor& d, uint32_t slot, uint32_t size, uint64_t seq,
                       Stamps& st) {
  if (p.trace) st.placed = globaltimer();
  bool last;
  if (p.flags & kIncArrival) {
    // acq_rel: release of this CTA's output (cumulative through the barrier), acquire of the
    // earlier arrivals' for the last one. Wrapping at size leaves the word 0 for the next use.
    last = atom_inc_acq_rel_gpu(&p.arrive[slot], size - 1) == size - 1;
  } else {
    __threadfence();
    DevWord count(p.arrive[slot]);
    last = count.fetch_add(1, cuda::memory_order_acq_rel) == size - 1;
    // Next use comes after the host sees DONE (and republishes): ordered by the release below.
    if (last) count.store(0, cuda::memory_order_relaxed);
  }
  if (last) store_done(p, d, seq, st, false);
}

__global__ void __launch_bounds__(kThreads) persistent_place(const KernelParams p) {
  // Raw storage: a __shared__ PlaceJob would need its (non-trivial) default constructor.
  // Two of each, by round parity: a round with no second barrier (kSkip) must not overwrite
  // what a slower warp of the same CTA still reads from the round before.
  __shared__ alignas(16) unsigned char job_mem[2][sizeof(PlaceJob)];
  __shared__ int action[2];
  __shared__ Stamps stamps;

  if (threadIdx.x == 0 && DevWord(p.arrive[p.slots]).fetch_add(1, cuda::memory_order_relaxed) == gridDim.x - 1)
    SysWord(p.ctl->started).store(1, cuda::memory_order_release);

  // Group g: CTAs [g * B / G, (g + 1) * B / G).
  const uint32_t groups = p.groups;
  uint32_t group = 0;
  while (uint64_t{group + 1} * gridDim.x / groups <= blockIdx.x) ++group;
  const uint32_t first = static_cast<uint32_t>(uint64_t{group} * gridDim.x / groups);
  const uint32_t size = static_cast<uint32_t>(uint64_t{group + 1} * gridDim.x / groups) - first;
  const uint32_t rank = blockIdx.x - first;
  Relay& relay = *reinterpret_cast<Relay*>(p.relays + size_t{group} * p.relay_stride);

  uint32_t slot = group;  // seq % slots, seq = group, group + groups, ...
  unsigned parity = 0;
  for (uint64_t seq = group;; seq += groups, parity ^= 1) {
    PlaceJob& job = *reinterpret_cast<PlaceJob*>(job_mem[parity]);
    Stamps& st = stamps;  // thread 0 writes and reads them (trace only)
    if (rank == 0) {
      if (threadIdx.x < 32) {
        const bool ok = wait_for_burst(p, p.ring[slot], seq, job);
        if (p.trace && threadIdx.x == 0) {
          st.got = globaltimer();
          st.clock = clock64();
        }
        __syncwarp();  // lanes 1, 2 wrote the job
        int act = kQuit;
        if (ok) {
          act = placed_alone(p, job, size) ? kSolo : kPlace;
          // A lone burst is relayed after its DONE (below): the others only need to see it to
          // skip it, and stores before the barrier make the barrier wait for them.
          if (act == kPlace) {
            relay_job(p, relay, slot, seq, job, false);
            if (p.trace && threadIdx.x == 0) p.trace[seq % p.trace_records].ready = st.got;
          }
        } else if (threadIdx.x == 0) {
          DevWord(relay.quit).store(1, cuda::memory_order_release);
        }
        if (threadIdx.x == 0) action[parity] = act;
      }
    } else if (p.flags & kTaggedRelay) {
      if (threadIdx.x < 32) {
        int act = wait_for_tagged_relay(p, relay, slot, seq, job);
        __syncwarp();  // lanes 0..7 wrote the job
        if (act == kPlace && placed_alone(p, job, size)) act = kSkip;
        if (p.trace && threadIdx.x == 0) {
          st.got = globaltimer();
          st.clock = clock64();
        }
        if (threadIdx.x == 0) action[parity] = act;
      }
    } else if (threadIdx.x == 0) {
      action[parity] = wait_for_go_relay(p, relay, seq, slot, job) ? kPlace : kQuit;
      if (p.trace) {
        st.got = globaltimer();
        st.clock = clock64();
      }
    }
    __syncthreads();
    const int act = action[parity];
    if (act == kQuit) return;
    if (p.trace && threadIdx.x == 0) st.go = globaltimer();
    // An empty job skips place_job's setup (a few hundred ns even with nothing to place).
    // Staging copy: each CTA gathers its entries' packets from host memory as whole aligned
    // 16-byte vectors into the slot's staging place, then places them from there (one PCIe
    // read per vector whatever the payload's offset; in place, a payload 42 bytes into its
    // buffer is read twice: bench/gpu/README.md). Entries without a stage index read in place.
    std::byte* const stage = p.stage ? p.stage + slot * p.stage_slot_bytes : nullptr;
    if (act == kPlace) {
      if (job.count) {
        if (stage) place_staged_job(job, stage, rank, size);
        else place_job(job, rank, size);
      }
      if (p.trace && threadIdx.x == 0) st.own = globaltimer();
      __syncthreads();
      if (threadIdx.x == 0) arrive(p, p.ring[slot], slot, size, seq, st);
    } else if (act == kSolo) {
      if (job.count) {
        if (stage) place_staged_job(job, stage, 0, 1);
        else place_job(job, 0, 1);
      }
      if (p.trace && threadIdx.x == 0) st.own = globaltimer();
      __syncthreads();
      if (threadIdx.x < 32) {
        if (threadIdx.x == 0) {
          if (p.trace) st.placed = globaltimer();
          store_done(p, p.ring[slot], seq, st, true);
        }
        if (size > 1) relay_job(p, relay, slot, seq, job, true);  // the other CTAs skip it
      }
    }
    slot += groups;
    if (slot >= p.slots) slot -= p.slots;
  }
}

class PersistentExecutor final : public PlaceExecutor {
 public:
  explicit PersistentExecutor(const ExecutorOptions& o) {
    const std::string who(kWho);
    if (o.persistent.trace && o.persistent.trace_records == 0)
      throw Error(Errc::invalid_config, who + ": persistent.trace needs trace_records > 0");
    use_device(o.gpu, kWho);
    if (o.stage && o.stage_slot_bytes == 0)
      throw Error(Errc::invalid_config, who + ": a staging buffer needs stage_slot_bytes > 0");
    stage_ = o.stage;
    stage_slot_bytes_ = o.stage_slot_bytes;
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
      const uint32_t relay_stride = static_cast<uint32_t>(relay_bytes(o.depth));
      const size_t device_bytes = relay_offset + size_t{relay_stride} * groups_;
      check(cudaMallocAsync(reinterpret_cast<void**>(&arrive_), device_bytes, kernel_stream_), who + ": cudaMallocAsync");
      check(cudaMemsetAsync(arrive_, 0, device_bytes, kernel_stream_), who + ": cudaMemsetAsync");
      const PersistentTuning& t = o.persistent;
      KernelParams params{};
      params.ring = reinterpret_cast<BurstDescriptor*>(static_cast<std::byte*>(dev_mem) + sizeof(RingControl));
      params.ctl = static_cast<RingControl*>(dev_mem);
      params.arrive = arrive_;
      params.relays = reinterpret_cast<std::byte*>(arrive_) + relay_offset;
      params.trace = t.trace;
      params.slots = o.depth;
      params.relay_stride = relay_stride;
      params.groups = groups_;
      params.flags = (t.acquire_load ? kAcquireLoad : 0u) | (t.tagged_relay ? kTaggedRelay : 0u) |
                     (t.inc_arrival ? kIncArrival : 0u);
      params.solo_max_bytes = t.solo_max_bytes;
      params.spin_polls = t.spin_polls;
      params.trace_records = t.trace_records;
      params.stage = o.stage;
      params.stage_slot_bytes = o.stage_slot_bytes;
      void* args[] = {&params};
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

  // The kernel finds a job's staging place by its descriptor slot: `stage` must be that slot's
  // (ExecutorOptions::stage + (submitted() % depth) * stage_slot_bytes), as a pipeline that
  // keeps one staging place per job slot passes it.
  bool submit_staged(const PlaceJob& job, std::byte* stage) noexcept override {
    if (!stage_ || stage != stage_ + (ring_->published() % ring_->slots()) * stage_slot_bytes_) return false;
    return submit(job);
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
  std::byte* stage_ = nullptr;
  uint64_t stage_slot_bytes_ = 0;
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
