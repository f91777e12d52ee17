// Per-burst latency and throughput of the three ways to run GPU work (bench/gpu/README.md):
// launch per burst, CUDA graph replay, persistent kernel (1 CTA per 8 SMs, and 1 per SM),
// each persistent grid as 1 group (every CTA on every burst) and as 4 groups (up to 4 bursts
// placed at once, burst k by group k % 4); then where the persistent kernel's latency goes.
//
//   netdaq_gpu_latency [--bursts N] [--max-seconds S] [--gpu I] [--json PATH]
//                      [--pingpong N] [--sections pingpong,datafloor,modes,chain,breakdown]
//
// Sections (all by default, in this order):
//  - pingpong: the PCIe round-trip floor. A one-warp kernel polls a flag in mapped pinned
//    memory and writes a reply flag back there; the host writes the flag and spins on the
//    reply. Variants: poll with or without the executor's backoff, acquire by load or by fence,
//    reply by st.release.sys / st.relaxed.sys / plain st.global, 64-byte or 4-byte poll.
//  - datafloor: the same round trip (the default chain's poll and reply) with the least any
//    placement must do between flag and reply: copy the burst's packets from mapped pinned
//    memory (a pool's buffers) to device memory, by 1 CTA (256 threads, and 512: the persistent
//    kernel's) or 4 CTAs of 256 (CTA 0 polls and relays the round through device memory, the
//    last to arrive replies); 0 bytes (the barriers and arrivals alone), 16 x 1 KB, 64 x 1 KB,
//    16 x 8 KB; and "_dev" rows (1 x 512) reading the packets from device memory, where the
//    modes and chain cases keep them. The copy is checked against the host's bytes after the run.
//  - modes: latency (one burst in flight; submit() to completed() seen on the CPU, min, median
//    and p99 in us; back to back, and "paused": every other burst after a random 0..3 us pause,
//    which the back-to-back loop's lock to the kernel's poll phase does not bias) and
//    throughput (up to 4 bursts in flight, payload Gb/s placed) of every
//    launch mode, the persistent kernel with its default chain and with the chain as it was
//    (PersistentTuning::legacy()). Packets sit in device memory; each burst places them into
//    random slots of its own part of an output ring.
//  - chain: the persistent kernel (1 CTA per SM, 1 and 4 groups) with each PersistentTuning
//    switch flipped alone against the default, and the legacy chain, for empty jobs
//    (persistent_empty: submit -> completed seen with nothing to place) and small bursts.
//  - breakdown: latency runs with the kernel's %globaltimer stamps (PersistentTuning::trace),
//    split into host -> GPU doorbell, relay, place, arrivals, DONE store, write-back + host
//    sight; host and GPU clocks aligned per burst by causality (see README).
#include <cuda_runtime_api.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu/place_device.cuh"
#include "gpu/place_executor.h"
#include "netdaq/status.h"

namespace {

using namespace netdaq;
using namespace netdaq::gpu;

constexpr uint32_t kJobs = 16;   // distinct bursts cycled through (different slots each)
constexpr uint32_t kWarmup = 200;
constexpr uint32_t kDepth = 4;
constexpr uint32_t kAlignWindow = 32;  // bursts / round trips each side for the clock alignment
// Every other measured burst (and ping-pong round) starts after a random pause of 0..kGapNs on
// the host: back to back, the next submit follows the previous completion by a fixed delay,
// which locks it to the phase of the kernel's ~1.5 us PCIe poll (the first poll after a DONE
// lands just before or just after the host's write, a whole poll apart); the paused ones see
// every phase, as bursts that arrive when they do.
constexpr uint64_t kGapNs = 3000;

void cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw Error(Errc::resource, std::string(what) + ": " + cudaGetErrorString(err));
}

// CLOCK_MONOTONIC (what steady_clock reads), ns.
uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// Spins until now_ns() >= t (the random pause; no sleep: a wake-up would take longer).
void spin_until(uint64_t t) {
  while (now_ns() < t) {
  }
}

struct Options {
  uint32_t bursts = 2000;
  double max_seconds = 10;  // per case and phase
  int gpu = 0;
  uint32_t pingpong = 10000;  // round trips per variant, after kWarmup
  std::string sections = "pingpong,datafloor,modes,chain,breakdown";
  std::string json;
  bool has(const char* s) const { return ("," + sections + ",").find("," + std::string(s) + ",") != std::string::npos; }
};

struct Stats {
  double min = 0, median = 0, p99 = 0, mean = 0;
};

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  s.median = percentile(v, 0.5);
  s.p99 = percentile(v, 0.99);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Clock alignment. o = GPU clock - host clock (ns). Each event gives lo <= o <= hi from
// causality (the GPU saw what the host wrote after the host wrote it; the host saw what the GPU
// wrote after the GPU wrote it). The intersection over kAlignWindow events each side is the
// estimate (its midpoint) and its half width the uncertainty; the window is short (well under
// a millisecond here), so the two clocks' drift does not matter.
struct Alignment {
  std::vector<double> offset, halfwidth;
  uint32_t inconsistent = 0;  // windows whose bounds did not intersect (clock steps, coarse timer)
};

Alignment align(const std::vector<double>& lo, const std::vector<double>& hi) {
  Alignment a;
  const size_t n = lo.size();
  a.offset.resize(n);
  a.halfwidth.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t b = i > kAlignWindow ? i - kAlignWindow : 0, e = std::min(n, i + kAlignWindow + 1);
    double l = lo[b], h = hi[b];
    for (size_t j = b + 1; j < e; ++j) {
      l = std::max(l, lo[j]);
      h = std::min(h, hi[j]);
    }
    if (l > h) ++a.inconsistent;
    a.offset[i] = (l + h) / 2;
    a.halfwidth[i] = std::abs(h - l) / 2;
  }
  return a;
}

// ---------------------------------------------------------------------------------------------
// Device side of the bench: %globaltimer step, and the PCIe ping-pong.

__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

// One thread: the smallest non-zero step of %globaltimer and the mean time between changes.
__global__ void globaltimer_step_kernel(uint64_t* out) {
  uint64_t first = globaltimer(), last = first, min_step = ~0ull;
  uint32_t changes = 0;
  for (uint32_t i = 0; i < (1u << 22) && changes < 2000; ++i) {
    const uint64_t t = globaltimer();
    if (t != last) {
      min_step = min(min_step, t - last);
      last = t;
      ++changes;
    }
  }
  out[0] = min_step;
  out[1] = changes ? (last - first) / changes : 0;
  // What a stamp costs: SM cycles per read, and the SM clock (cycles per us) over the loop.
  const uint64_t c0 = clock64(), g0 = globaltimer();
  uint64_t sum = 0;
  for (int i = 0; i < 256; ++i) sum += globaltimer();
  const uint64_t c1 = clock64(), g1 = globaltimer();
  out[2] = (c1 - c0) / 256;
  out[3] = g1 > g0 ? (c1 - c0) * 1000 / (g1 - g0) : 0;
  if (sum == 0) out[3] = 0;  // keeps the reads (never true)
}

// One block of 512 threads (the persistent kernel's): `rounds` times, idle `idle_ns` in a tiny
// loop (as a persistent kernel between bursts), then a bare __syncthreads, place `job` (thread
// 0 stamps its own end, then the block's after a barrier), and the same again at once. ns[8 i
// + k]: k = 0 barrier, 1 thread 0's place_job, 2 the barrier after it (cold); 3..5 (hot); 6 a
// barrier after thread 0 stored 8 bytes to global memory; 7 the barrier after the idle time,
// which warps 1..15 waited at (thread 0 arriving last, as a leader that saw READY).
__global__ void __launch_bounds__(512) place_cold_kernel(PlaceJob job, uint32_t rounds, uint32_t idle_ns, uint64_t* ns) {
  for (uint32_t i = 0; i < rounds; ++i) {
    if (threadIdx.x < 32) {
      const uint64_t until = globaltimer() + idle_ns;
      while (globaltimer() < until) {
      }
    }
    const uint64_t parked = globaltimer();  // thread 0; warps 1..15 wait at the barrier since idle_ns
    __syncthreads();
    uint64_t t[9];
    t[0] = globaltimer();
    if (threadIdx.x == 0) ns[8 * i + 7] = t[0] - parked;
    for (int k = 0; k < 2; ++k) {
      __syncthreads();
      t[3 * k + 1] = globaltimer();
      place_job(job, 0, 1);
      t[3 * k + 2] = globaltimer();
      __syncthreads();
      t[3 * k + 3] = globaltimer();
    }
    if (threadIdx.x == 0) ns[8 * i + 6] = t[6];  // a global store just before the barrier
    __syncthreads();
    t[7] = globaltimer();
    if (threadIdx.x == 0)
      for (int k = 0; k < 7; ++k) ns[8 * i + k] = t[k + 1] - t[k];
  }
}

enum PingPoll : uint32_t { kSpin = 0, kBackoff = 1 };  // backoff: the executor's 32..128 ns __nanosleep
enum PingAcquire : uint32_t { kAcqLoad = 0, kAcqFence = 1, kAcqNone = 2 };
// Reply: st.release.sys; st.relaxed.sys; plain st.global; fence.acq_rel.gpu then st.relaxed.sys;
// st.release.sys of the reply's whole 64-byte line (lanes 0..3, 16 bytes each: the host's line
// is overwritten whole, so the host bridge need not merge a partial write).
enum PingReply : uint32_t { kReplyRelease = 0, kReplyRelaxed = 1, kReplyWeak = 2, kReplyGpuFence = 3, kReplyLine = 4 };

struct PingVariant {
  const char* name;
  uint32_t poll, acquire, reply;
  bool wide;                // lanes 0..3 load the flag's whole 64-byte line (the executor's doorbell poll)
  uint32_t inflight = 1;    // loads in flight at once (1, 2 or 4)
  uint32_t stagger_ns = 0;  // between those loads at the start; set by the bench (poll time / inflight)
};

// Issues one poll load (lane 0, or lanes 0..3 when wide); the result is not looked at here, so
// several can be in flight from one warp.
__device__ __forceinline__ uint4 ping_issue(const uint32_t* p, uint32_t acquire, bool wide) {
  const unsigned lane = threadIdx.x & 31;
  uint4 v = make_uint4(0, 0, 0, 0);  // wide: only v.x (the flag, lane 0) is looked at
  if (wide ? lane < 4 : lane == 0) {
    const uint32_t* q = p + (wide ? lane * 4 : 0);
    if (acquire == kAcqLoad) {
      if (wide)
        asm volatile("ld.acquire.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(q) : "memory");
      else
        asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v.x) : "l"(q) : "memory");
    } else {
      if (wide)
        asm volatile("ld.relaxed.sys.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(q) : "memory");
      else
        asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v.x) : "l"(q) : "memory");
    }
  }
  return v;
}

__device__ __forceinline__ void spin_ns(uint32_t ns) {
  const uint64_t until = globaltimer() + ns;
  while (globaltimer() < until) {
  }
}

// Polls until the flag reads `want` with K loads in flight: the k-th issued stagger_ns after
// the one before at the start, each reissued as soon as its result was looked at, which keeps
// them apart. Returns the loads looked at.
template <int K>
__device__ uint32_t ping_wait(const uint32_t* flag, uint32_t want, const PingVariant& v) {
  uint4 r[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (k) spin_ns(v.stagger_ns);
    r[k] = ping_issue(flag, v.acquire, v.wide);
  }
  uint32_t polls = 0;
  unsigned backoff = 32;
  for (;;) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      ++polls;
      if (__shfl_sync(~0u, r[k].x, 0) == want) return polls;
      if (v.poll == kBackoff) {
        __nanosleep(backoff);
        backoff = min(backoff * 2, 128u);
      }
      r[k] = ping_issue(flag, v.acquire, v.wide);
    }
  }
}

// Warp 0's reply: *reply = want (lane 0; lanes 0..3 for the whole line).
__device__ __forceinline__ void ping_reply(uint32_t* reply, uint32_t want, uint32_t kind) {
  const unsigned lane = threadIdx.x & 31;
  if (kind == kReplyLine && lane < 4)
    asm volatile("st.release.sys.global.v4.u32 [%0], {%1, %1, %1, %1};" ::"l"(reply + 4 * lane), "r"(want) : "memory");
  if (lane == 0) {
    if (kind == kReplyLine) {
    } else if (kind == kReplyRelease)
      asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(reply), "r"(want) : "memory");
    else if (kind == kReplyRelaxed)
      asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(reply), "r"(want) : "memory");
    else if (kind == kReplyGpuFence)
      asm volatile("fence.acq_rel.gpu;\n\tst.relaxed.sys.global.u32 [%0], %1;" ::"l"(reply), "r"(want) : "memory");
    else
      asm volatile("st.global.u32 [%0], %1;" ::"l"(reply), "r"(want) : "memory");
  }
}

// datafloor: what the kernel copies between flag and reply. packets of `vectors` uint4s each,
// `stride` uint4s apart in mapped host memory, packed in dst. With several CTAs, CTA 0 relays
// the round through *go and each CTA's thread 0 counts its arrival on *arrivals (own lines).
struct PingWork {
  const uint4* src = nullptr;
  uint4* dst = nullptr;
  uint32_t packets = 0, vectors = 0, stride = 0;
  uint32_t* go = nullptr;
  uint32_t* arrivals = nullptr;
};

// This CTA's contiguous share of w's vectors, as place_device.cuh copies: 4 loads in flight per
// thread before its stores, ld.global.cg (L1 is not coherent with host memory).
__device__ __forceinline__ void ping_copy(const PingWork& w) {
  const uint32_t total = w.packets * w.vectors;
  const uint32_t begin = uint64_t{total} * blockIdx.x / gridDim.x, end = uint64_t{total} * (blockIdx.x + 1) / gridDim.x;
  for (uint32_t i = begin + threadIdx.x; i < end; i += 4 * blockDim.x) {
    uint4 r[4];
#pragma unroll
    for (uint32_t u = 0; u < 4; ++u) {
      const uint32_t k = i + u * blockDim.x;
      if (k < end) r[u] = __ldcg(w.src + size_t{k / w.vectors} * w.stride + k % w.vectors);
    }
#pragma unroll
    for (uint32_t u = 0; u < 4; ++u) {
      const uint32_t k = i + u * blockDim.x;
      if (k < end) w.dst[k] = r[u];
    }
  }
}

// Round i: wait until *flag == i + 1, stamp, write *reply = i + 1. seen[i]: the stamp; polls[i]:
// loads it took; replied[i]: stamped just before the reply. The bare ping-pong is one warp.
// Larger blocks (datafloor): warp 0 polls while the others wait at a barrier (as in the
// persistent kernel), the block copies its share of w, a barrier, then the reply; several CTAs:
// CTA 0 polls the host and relays, the others poll the relay, the last to arrive replies
// (atom.inc acq_rel: the persistent kernel's arrival).
__global__ void pingpong_kernel(const uint32_t* flag, uint32_t* reply, uint64_t* seen, uint64_t* replied, uint32_t* polls,
                                uint32_t rounds, PingVariant v, PingWork w) {
  const unsigned lane = threadIdx.x & 31;
  for (uint32_t i = 0; i < rounds; ++i) {
    const uint32_t want = i + 1;
    uint32_t n = 0;
    uint64_t t = 0;
    bool last = true;
    if (threadIdx.x < 32) {
      if (blockIdx.x == 0) {
        n = v.inflight >= 4   ? ping_wait<4>(flag, want, v)
            : v.inflight == 2 ? ping_wait<2>(flag, want, v)
                              : ping_wait<1>(flag, want, v);
        if (v.acquire == kAcqFence) asm volatile("fence.acq_rel.sys;" ::: "memory");
        if (gridDim.x > 1 && lane == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(w.go), "r"(want) : "memory");
      } else {
        uint32_t g = 0;
        while (__shfl_sync(~0u, g, 0) != want)
          if (lane == 0) asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(g) : "l"(w.go) : "memory");
      }
      t = globaltimer();
    }
    if (blockDim.x > 32) {
      __syncthreads();
      if (w.packets) ping_copy(w);
      __syncthreads();
    }
    if (threadIdx.x < 32) {
      if (gridDim.x > 1) {
        uint32_t old = 0;
        if (lane == 0)
          asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(w.arrivals), "r"(gridDim.x - 1) : "memory");
        last = __shfl_sync(~0u, old, 0) == gridDim.x - 1;  // wrapped to 0 for the next round
      }
      if (last) {
        const uint64_t r = blockDim.x > 32 ? globaltimer() : t;
        ping_reply(reply, want, v.reply);
        if (lane == 0) replied[i] = r;
      }
      if (lane == 0 && blockIdx.x == 0) {
        seen[i] = t;  // device memory, after the reply: not on the round trip's path
        polls[i] = n;
      }
      __syncwarp();
    }
  }
}

struct GlobalTimer {
  double min_step_ns = 0, mean_step_ns = 0, read_cycles = 0, sm_mhz = 0;
};

GlobalTimer measure_globaltimer() {
  uint64_t* d = nullptr;
  cuda(cudaMalloc(&d, 4 * sizeof(uint64_t)), "cudaMalloc(globaltimer)");
  globaltimer_step_kernel<<<1, 1>>>(d);
  uint64_t h[4] = {};
  cuda(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost), "globaltimer kernel");
  cuda(cudaFree(d), "cudaFree");
  return {double(h[0]), double(h[1]), double(h[2]), double(h[3])};
}

struct PlaceCold {
  std::string job;
  double cold_ns = 0, hot_ns = 0;  // medians: place_job + barrier, after idling and at once again
  double barrier_ns = 0, own_ns = 0, wait_ns = 0;  // hot: a bare barrier; thread 0's place_job; the barrier after
  double barrier_after_store_ns = 0;                // a barrier right after thread 0 stored to global memory
  double barrier_parked_ns = 0;  // a barrier that warps 1..15 had waited at for 3 us (thread 0 arriving last)
};

// place_cold_kernel for an empty job and for 16 x 1 KB (device memory, as the chain rows).
std::vector<PlaceCold> measure_place_cold() {
  constexpr uint32_t kRounds = 200, kPackets = 16, kBytes = 1024;
  std::byte *in = nullptr, *out = nullptr;
  PlacementEntry* entries = nullptr;
  uint64_t* ns = nullptr;
  cuda(cudaMalloc(&in, kPackets * kBytes), "cudaMalloc(in)");
  cuda(cudaMalloc(&out, kPackets * kBytes), "cudaMalloc(out)");
  cuda(cudaMalloc(&entries, kPackets * sizeof(PlacementEntry)), "cudaMalloc(entries)");
  cuda(cudaMalloc(&ns, 8 * kRounds * sizeof(uint64_t)), "cudaMalloc(ns)");
  std::vector<PlacementEntry> e(kPackets);
  for (uint32_t i = 0; i < kPackets; ++i) e[i] = {reinterpret_cast<uint64_t>(in + i * kBytes), kPackets - 1 - i, 0};
  cuda(cudaMemcpy(entries, e.data(), e.size() * sizeof e[0], cudaMemcpyHostToDevice), "cudaMemcpy(entries)");
  std::vector<PlaceCold> r;
  for (uint32_t packets : {0u, kPackets}) {
    PlaceJob job;
    if (packets) job = PlaceJob{entries, packets, kBytes, out, kBytes};
    place_cold_kernel<<<1, 512>>>(job, kRounds, 3000, ns);
    std::vector<uint64_t> h(8 * kRounds);
    cuda(cudaMemcpy(h.data(), ns, h.size() * sizeof h[0], cudaMemcpyDeviceToHost), "place_cold_kernel");
    std::vector<double> cold, hot, bar, own, wait, bar_st, parked;
    for (uint32_t i = 10; i < kRounds; ++i) {
      const uint64_t* x = &h[8 * i];
      bar_st.push_back(double(x[6]));
      parked.push_back(double(x[7]));
      cold.push_back(double(x[1] + x[2]));
      hot.push_back(double(x[4] + x[5]));
      bar.push_back(double(x[3]));
      own.push_back(double(x[4]));
      wait.push_back(double(x[5]));
    }
    r.push_back({packets ? "16x1KB" : "empty", stats(cold).median, stats(hot).median, stats(bar).median,
                 stats(own).median, stats(wait).median, stats(bar_st).median, stats(parked).median});
  }
  cudaFree(in);
  cudaFree(out);
  cudaFree(entries);
  cudaFree(ns);
  return r;
}

// The kernel's grid and the copy between flag and reply (datafloor); the default is the bare
// ping-pong: one warp, nothing copied.
struct PingShape {
  uint32_t ctas = 1, threads = 32, packets = 0, bytes = 0;
  bool device_src = false;  // packets in device memory (where the modes/chain cases keep them)
  uint32_t stride() const { return 2 * bytes; }  // a pool's buffers: 1 KB packets 2 KB apart
};

struct PingResult {
  std::string name;
  PingVariant v;
  PingShape shape;
  uint32_t rounds = 0;
  Stats rtt_us, rtt_gap_us;  // round trip: back to back; after a random pause
  Stats h2g_us, g2h_us;      // paused rounds: host write -> GPU stamp; reply stamp -> host sight
  Stats gpu_us;              // paused rounds: GPU stamp -> reply stamp (datafloor: copy, barriers, arrivals)
  double poll_ns = 0;            // GPU time per poll (mean over the run)
  double align_halfwidth_us = 0;  // median
  uint32_t inconsistent = 0;
};

PingResult run_pingpong(const PingVariant& v, const Options& opt, double tick_ns, const PingShape& shape = {},
                        const std::string& name = "") {
  PingResult r;
  r.name = name.empty() ? v.name : name;
  r.v = v;
  r.shape = shape;
  const uint32_t rounds = kWarmup + 2 * opt.pingpong;  // back to back and paused, alternately
  void* host = nullptr;
  cuda(cudaHostAlloc(&host, 8192, cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostAlloc(pingpong)");
  std::memset(host, 0, 8192);
  auto* flag = static_cast<uint32_t*>(host);                            // its own 64-byte line
  auto* reply = reinterpret_cast<uint32_t*>(static_cast<char*>(host) + 4096);  // its own page
  void* dev = nullptr;
  cuda(cudaHostGetDevicePointer(&dev, host, 0), "cudaHostGetDevicePointer(pingpong)");
  uint64_t *seen = nullptr, *replied = nullptr;
  uint32_t* polls = nullptr;
  cuda(cudaMalloc(&seen, rounds * sizeof(uint64_t)), "cudaMalloc(seen)");
  cuda(cudaMalloc(&replied, rounds * sizeof(uint64_t)), "cudaMalloc(replied)");
  cuda(cudaMalloc(&polls, rounds * sizeof(uint32_t)), "cudaMalloc(polls)");
  cudaStream_t s = nullptr;
  cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  // datafloor: random packets in mapped pinned memory (written once, before the launch), their
  // copy in device memory zeroed first, so that a skipped copy fails the check after the run.
  const size_t data_bytes = size_t{shape.packets} * shape.bytes;
  PingWork w;
  std::byte* data = nullptr;
  void* src_dev = nullptr;   // device_src: the packets' copy in device memory
  uint32_t* sync = nullptr;  // go and arrivals, 128 bytes apart
  if (shape.packets) {
    if (shape.bytes % 16) throw Error(Errc::invalid_config, "datafloor: packet bytes must be a multiple of 16");
    cuda(cudaHostAlloc(&data, size_t{shape.packets} * shape.stride(), cudaHostAllocMapped | cudaHostAllocPortable),
         "cudaHostAlloc(datafloor)");
    std::mt19937 rng(shape.packets * 31 + shape.bytes);
    for (size_t k = 0; k < size_t{shape.packets} * shape.stride(); ++k) data[k] = std::byte(rng());
    void* src = nullptr;
    if (shape.device_src) {
      cuda(cudaMalloc(&src_dev, size_t{shape.packets} * shape.stride()), "cudaMalloc(datafloor source)");
      cuda(cudaMemcpy(src_dev, data, size_t{shape.packets} * shape.stride(), cudaMemcpyHostToDevice),
           "cudaMemcpy(datafloor source)");
      src = src_dev;
    } else {
      cuda(cudaHostGetDevicePointer(&src, data, 0), "cudaHostGetDevicePointer(datafloor)");
    }
    uint4* dst = nullptr;
    cuda(cudaMalloc(&dst, data_bytes), "cudaMalloc(datafloor)");
    cuda(cudaMemsetAsync(dst, 0, data_bytes, s), "cudaMemset(datafloor)");
    w.src = static_cast<const uint4*>(src);
    w.dst = dst;
    w.packets = shape.packets;
    w.vectors = shape.bytes / 16;
    w.stride = shape.stride() / 16;
  }
  if (shape.ctas > 1) {
    cuda(cudaMalloc(&sync, 256), "cudaMalloc(arrivals)");
    cuda(cudaMemsetAsync(sync, 0, 256, s), "cudaMemset(arrivals)");
    w.go = sync;
    w.arrivals = sync + 32;
  }
  pingpong_kernel<<<shape.ctas, shape.threads, 0, s>>>(static_cast<const uint32_t*>(dev),
                                                       reinterpret_cast<uint32_t*>(static_cast<char*>(dev) + 4096),
                                                       seen, replied, polls, rounds, v, w);
  cuda(cudaGetLastError(), "pingpong launch");
  std::vector<uint64_t> t0(rounds), t1(rounds);
  std::atomic_ref<uint32_t> f(*flag), rep(*reply);
  const uint64_t deadline = now_ns() + 10'000'000'000ull;
  std::mt19937_64 rng(rounds);
  for (uint32_t i = 0; i < rounds; ++i) {
    const uint32_t want = i + 1;
    if (i % 2 == 1) spin_until(now_ns() + rng() % kGapNs);  // odd rounds: after a random pause
    t0[i] = now_ns();
    f.store(want, std::memory_order_release);
    for (uint32_t spins = 1; rep.load(std::memory_order_acquire) != want; ++spins)
      if (spins % 4096 == 0 && now_ns() > deadline)
        throw Error(Errc::state, std::string("pingpong ") + v.name + ": no reply to round " + std::to_string(i) +
                                     " within 10 s (the kernel keeps polling; exiting)");
    t1[i] = now_ns();
  }
  cuda(cudaStreamSynchronize(s), "pingpong kernel");
  std::vector<uint64_t> g(rounds), gr(rounds);
  std::vector<uint32_t> n(rounds);
  cuda(cudaMemcpy(g.data(), seen, rounds * sizeof(uint64_t), cudaMemcpyDeviceToHost), "cudaMemcpy(seen)");
  cuda(cudaMemcpy(gr.data(), replied, rounds * sizeof(uint64_t), cudaMemcpyDeviceToHost), "cudaMemcpy(replied)");
  cuda(cudaMemcpy(n.data(), polls, rounds * sizeof(uint32_t), cudaMemcpyDeviceToHost), "cudaMemcpy(polls)");
  std::vector<std::byte> copied(data_bytes);
  if (data_bytes) cuda(cudaMemcpy(copied.data(), w.dst, data_bytes, cudaMemcpyDeviceToHost), "cudaMemcpy(datafloor)");
  cudaStreamDestroy(s);
  cudaFree(seen);
  cudaFree(replied);
  cudaFree(polls);
  cudaFree(w.dst);
  cudaFree(src_dev);
  cudaFree(sync);
  cudaFreeHost(host);
  for (uint32_t p = 0; p < shape.packets; ++p)
    if (std::memcmp(copied.data() + size_t{p} * shape.bytes, data + size_t{p} * shape.stride(), shape.bytes) != 0) {
      cudaFreeHost(data);
      throw Error(Errc::state, "datafloor " + r.name + ": packet " + std::to_string(p) +
                                   " in device memory differs from the host's after the run (copy skipped or wrong)");
    }
  cudaFreeHost(data);

  std::vector<double> rtt, rtt_all, rtt_gap, lo, hi;
  uint64_t poll_sum = 0;
  for (uint32_t i = kWarmup; i < rounds; ++i) {
    rtt_all.push_back(double(t1[i] - t0[i]) / 1000);
    (i % 2 == 1 ? rtt_gap : rtt).push_back(rtt_all.back());
    lo.push_back(double(gr[i]) - double(t1[i]));  // the reply left after its stamp
    hi.push_back(double(g[i]) + tick_ns - double(t0[i]));
    if (i > kWarmup) poll_sum += n[i];
  }
  r.rounds = static_cast<uint32_t>(rtt_all.size());
  r.rtt_us = stats(rtt);
  r.rtt_gap_us = stats(rtt_gap);
  if (poll_sum) r.poll_ns = double(g[rounds - 1] - g[kWarmup]) / double(poll_sum);
  const Alignment a = align(lo, hi);
  std::vector<double> h2g, g2h, gpu;
  for (size_t k = 0; k < rtt_all.size(); ++k) {
    const size_t i = k + kWarmup;
    if (i % 2 == 0) continue;  // the split: paused rounds
    const double gpu_seen_host = double(g[i]) - a.offset[k];  // the GPU's stamps on the host clock
    h2g.push_back((gpu_seen_host - double(t0[i])) / 1000);
    g2h.push_back((double(t1[i]) - (double(gr[i]) - a.offset[k])) / 1000);
    gpu.push_back((double(gr[i]) - double(g[i])) / 1000);
  }
  r.h2g_us = stats(h2g);
  r.g2h_us = stats(g2h);
  r.gpu_us = stats(gpu);
  std::vector<double> hw(a.halfwidth);
  r.align_halfwidth_us = percentile(hw, 0.5) / 1000;
  r.inconsistent = a.inconsistent;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Executors.

struct Result {
  std::string mode, tuning;
  uint32_t packets, bytes;
  uint32_t latency_bursts = 0, throughput_bursts = 0;
  double median_us = 0, p99_us = 0, min_us = 0, gbps = 0, kbursts_per_s = 0;
  uint32_t gap_bursts = 0;
  Stats gap_us;  // the bursts started after a random pause
};

// Device buffers of one case, allocated before the executor exists and freed after it is
// gone (cudaFree may synchronize the device, which a persistent kernel never lets finish).
// packets = 0: empty jobs (nothing allocated).
struct CaseData {
  CaseData(uint32_t packets, uint32_t bytes) {
    if (packets == 0) {
      jobs.assign(kJobs, PlaceJob{});
      return;
    }
    const size_t in_bytes = size_t{packets} * bytes, out_slots = size_t{kJobs} * packets;
    cuda(cudaMalloc(&in, in_bytes), "cudaMalloc(in)");
    cuda(cudaMalloc(&out, out_slots * bytes), "cudaMalloc(out)");
    cuda(cudaMalloc(&entries, out_slots * sizeof(PlacementEntry)), "cudaMalloc(entries)");
    std::vector<std::byte> fill(in_bytes);
    std::mt19937 rng(packets * 31 + bytes);
    for (auto& b : fill) b = std::byte(rng());
    cuda(cudaMemcpy(in, fill.data(), in_bytes, cudaMemcpyHostToDevice), "cudaMemcpy(in)");
    std::vector<PlacementEntry> e(out_slots);
    for (uint32_t j = 0; j < kJobs; ++j) {
      std::vector<uint32_t> slots(packets);
      std::iota(slots.begin(), slots.end(), j * packets);
      std::shuffle(slots.begin(), slots.end(), rng);
      for (uint32_t i = 0; i < packets; ++i)
        e[size_t{j} * packets + i] = {reinterpret_cast<uint64_t>(in + size_t{i} * bytes), slots[i], 0};
      PlaceJob job;
      job.entries = entries + size_t{j} * packets;
      job.count = packets;
      job.in_bytes = bytes;
      job.out = out;
      job.out_slot_bytes = bytes;
      jobs.push_back(job);
    }
    cuda(cudaMemcpy(entries, e.data(), e.size() * sizeof e[0], cudaMemcpyHostToDevice), "cudaMemcpy(entries)");
  }
  ~CaseData() {
    cudaFree(in);
    cudaFree(out);
    cudaFree(entries);
  }
  CaseData(const CaseData&) = delete;
  CaseData& operator=(const CaseData&) = delete;
  std::byte* in = nullptr;
  std::byte* out = nullptr;
  PlacementEntry* entries = nullptr;
  std::vector<PlaceJob> jobs;
};

struct Mode {
  std::string name;
  LaunchMode mode;
  bool all_sms;     // persistent: 1 CTA per SM instead of 1 per 8
  uint32_t groups;  // persistent: ExecutorOptions::groups
  std::string tuning = "default";
  PersistentTuning t{};
};

// Per traced burst (latency phase, after warm-up): host stamps and the kernel's record.
struct TraceRun {
  std::vector<uint64_t> submit, seen, calls;  // host ns; completed() calls until seen
  std::vector<bool> gap;                      // started after a random pause
  std::vector<PersistentTraceRecord> records;  // by seq (seq = burst index: a fresh executor)
};

// Spins on completed() until every submitted burst is counted; returns the calls it made.
uint64_t wait_all(PlaceExecutor& ex, uint64_t deadline_ns) {
  uint64_t calls = 0;
  const uint64_t target = ex.submitted();
  while (ex.completed() < target)
    if (++calls % 1024 == 0 && now_ns() > deadline_ns) throw Error(Errc::state, "bursts did not finish in time");
  return calls + 1;
}

Result run_case(const Mode& m, uint32_t packets, uint32_t bytes, const Options& opt, int sms, TraceRun* trace = nullptr) {
  CaseData data(packets, bytes);
  Result r{m.name, m.tuning, packets, bytes};
  ExecutorOptions eo;
  eo.gpu = opt.gpu;
  eo.depth = kDepth;
  eo.max_entries = std::max(packets, 1u);
  // One CTA per SM (the default), or the earlier default of one per 8 SMs for comparison.
  eo.blocks = m.all_sms ? static_cast<uint32_t>(sms) : static_cast<uint32_t>(std::max(1, sms / 8));
  eo.groups = m.groups;
  eo.persistent = m.t;
  const uint32_t records = kWarmup + 2 * opt.bursts;  // back to back and paused, alternately
  PersistentTraceRecord* dev_trace = nullptr;
  if (trace) {  // allocated before the executor, freed after it (see CaseData)
    cuda(cudaMalloc(&dev_trace, records * sizeof(PersistentTraceRecord)), "cudaMalloc(trace)");
    cuda(cudaMemset(dev_trace, 0, records * sizeof(PersistentTraceRecord)), "cudaMemset(trace)");
    cuda(cudaDeviceSynchronize(), "cudaMemset(trace)");
    eo.persistent.trace = dev_trace;
    eo.persistent.trace_records = records;
  }
  auto ex = make_executor(m.mode, eo);
  const uint64_t budget = static_cast<uint64_t>(opt.max_seconds * 1e9);

  // Latency: one burst at a time; odd bursts after a random pause (kGapNs).
  std::vector<double> us, us_gap;
  us.reserve(opt.bursts);
  us_gap.reserve(opt.bursts);
  std::mt19937_64 rng(packets * 7919 + bytes);
  uint64_t deadline = now_ns() + budget;
  for (uint32_t i = 0; i < records && now_ns() < deadline; ++i) {
    const bool gap = i % 2 == 1;
    if (gap) spin_until(now_ns() + rng() % kGapNs);
    const uint64_t t0 = now_ns();
    if (!ex->submit(data.jobs[i % kJobs])) throw Error(Errc::state, "submit refused with nothing in flight");
    const uint64_t calls = wait_all(*ex, deadline + 5'000'000'000ull);
    const uint64_t t1 = now_ns();
    if (i < kWarmup) continue;
    (gap ? us_gap : us).push_back(double(t1 - t0) / 1000);
    if (trace) {
      trace->submit.push_back(t0);
      trace->seen.push_back(t1);
      trace->calls.push_back(calls);
      trace->gap.push_back(gap);
    }
  }
  r.latency_bursts = static_cast<uint32_t>(us.size());
  r.gap_bursts = static_cast<uint32_t>(us_gap.size());
  r.gap_us = stats(us_gap);
  const Stats ls = stats(us);
  r.min_us = ls.min;
  r.median_us = ls.median;
  r.p99_us = ls.p99;

  // Throughput: keep kDepth bursts in flight (not when tracing: the records stay the latency's).
  if (!trace) {
    deadline = now_ns() + budget;
    const uint64_t base = ex->submitted();
    const uint64_t target = base + opt.bursts;
    const uint64_t t0 = now_ns();
    while (ex->submitted() < target && now_ns() < deadline)
      if (!ex->submit(data.jobs[ex->submitted() % kJobs])) ex->completed();
    wait_all(*ex, deadline + 5'000'000'000ull);
    const double secs = double(now_ns() - t0) / 1e9;
    r.throughput_bursts = static_cast<uint32_t>(ex->submitted() - base);
    r.gbps = double(r.throughput_bursts) * packets * bytes * 8 / secs / 1e9;
    r.kbursts_per_s = double(r.throughput_bursts) / secs / 1e3;
  }
  ex->synchronize();
  ex.reset();  // before `data` (and the trace) are freed
  if (trace) {
    std::vector<PersistentTraceRecord> all(records);
    cuda(cudaMemcpy(all.data(), dev_trace, records * sizeof(PersistentTraceRecord), cudaMemcpyDeviceToHost),
         "cudaMemcpy(trace)");
    cudaFree(dev_trace);
    trace->records.assign(all.begin() + kWarmup, all.begin() + kWarmup + trace->submit.size());
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Breakdown of traced latency runs.

struct Breakdown {
  std::string mode, tuning, pingpong;
  uint32_t packets, bytes, bursts = 0, solo = 0, missing = 0, inconsistent = 0;
  // Means (us): they add up to total. Medians beside them where it matters.
  double total = 0, total_median = 0, doorbell = 0, relay = 0, start = 0, place = 0, wait = 0, arrive = 0, done_fence = 0,
         writeback = 0, cross = 0, cross_median = 0, gpu = 0, gpu_median = 0, doorbell_median = 0,
         writeback_median = 0, align_halfwidth = 0, pingpong_rtt_median = 0, calls_per_burst = 0, ns_per_call = 0,
         sm_mhz = 0,  // median SM clock of the completing CTA between its `relayed` and `done` stamps
         total_b2b_median = 0, doorbell_b2b = 0;  // the back-to-back bursts (the others: after a random pause)
};

Breakdown analyse(const Mode& m, uint32_t packets, uint32_t bytes, const TraceRun& t, double tick_ns,
                  const PingResult* ping) {
  Breakdown b{m.name, m.tuning, ping ? ping->name : "", packets, bytes};
  std::vector<size_t> ok;
  for (size_t k = 0; k < t.records.size(); ++k) {
    const PersistentTraceRecord& r = t.records[k];
    if (r.seq_plus_1 == k + kWarmup + 1 && r.ready && r.done) ok.push_back(k);
    else ++b.missing;
  }
  if (ok.empty()) return b;
  std::vector<double> lo, hi;
  for (size_t k : ok) {
    const PersistentTraceRecord& r = t.records[k];
    lo.push_back(double(r.done) - double(t.seen[k]));
    hi.push_back(double(r.ready) + tick_ns - double(t.submit[k]));
  }
  const Alignment a = align(lo, hi);
  b.inconsistent = a.inconsistent;
  std::vector<double> total, doorbell, relay, start, place, wait, arrive, done, writeback, cross, gpu, mhz;
  std::vector<double> total_b2b, doorbell_b2b;
  double calls = 0, wait_ns = 0;
  for (size_t j = 0; j < ok.size(); ++j) {
    const size_t k = ok[j];
    const PersistentTraceRecord& r = t.records[k];
    const double sub = double(t.submit[k]), seen = double(t.seen[k]), o = a.offset[j];
    if (!t.gap[k]) {  // back to back: only the total and the doorbell, to show the phase lock
      total_b2b.push_back((seen - sub) / 1000);
      doorbell_b2b.push_back((double(r.ready) - o - sub) / 1000);
      continue;
    }
    total.push_back((seen - sub) / 1000);
    doorbell.push_back((double(r.ready) - o - sub) / 1000);
    relay.push_back((double(r.relayed) - double(r.ready)) / 1000);
    start.push_back((double(r.go) - double(r.relayed)) / 1000);
    place.push_back((double(r.own) - double(r.go)) / 1000);
    wait.push_back((double(r.placed) - double(r.own)) / 1000);
    arrive.push_back((double(r.arrived) - double(r.placed)) / 1000);
    done.push_back((double(r.done) - double(r.arrived)) / 1000);
    writeback.push_back((seen - (double(r.done) - o)) / 1000);
    gpu.push_back((double(r.done) - double(r.ready)) / 1000);
    cross.push_back(total.back() - gpu.back());
    b.solo += r.solo ? 1 : 0;
    if (r.done > r.relayed) mhz.push_back(double(r.sm_cycles) * 1000 / double(r.done - r.relayed));
    calls += double(t.calls[k]);
    wait_ns += seen - sub;
  }
  b.bursts = static_cast<uint32_t>(total.size());
  const auto mean = [](const std::vector<double>& v) { return stats(v).mean; };
  b.total_b2b_median = stats(total_b2b).median;
  b.doorbell_b2b = stats(doorbell_b2b).mean;
  const auto median = [](const std::vector<double>& v) { return stats(v).median; };
  b.total = mean(total);
  b.total_median = median(total);
  b.doorbell = mean(doorbell);
  b.doorbell_median = median(doorbell);
  b.relay = mean(relay);
  b.start = mean(start);
  b.place = mean(place);
  b.wait = mean(wait);
  b.arrive = mean(arrive);
  b.done_fence = mean(done);
  b.writeback = mean(writeback);
  b.writeback_median = median(writeback);
  b.cross = mean(cross);
  b.cross_median = median(cross);
  b.gpu = mean(gpu);
  b.gpu_median = median(gpu);
  b.sm_mhz = median(mhz);
  std::vector<double> hw(a.halfwidth);
  b.align_halfwidth = percentile(hw, 0.5) / 1000;
  b.pingpong_rtt_median = ping ? ping->rtt_gap_us.median : 0;
  b.calls_per_burst = total.empty() ? 0 : calls / double(total.size());
  b.ns_per_call = calls > 0 ? wait_ns / calls : 0;
  return b;
}

// ---------------------------------------------------------------------------------------------
// Output.

const char* name_of(PingPoll p) { return p == kSpin ? "spin" : "backoff"; }
const char* acquire_name(uint32_t a) { return a == kAcqLoad ? "ld.acquire.sys" : a == kAcqFence ? "ld.relaxed+fence.sys" : "ld.relaxed (none)"; }
const char* reply_name(uint32_t r) {
  return r == kReplyRelease ? "st.release.sys"
         : r == kReplyRelaxed ? "st.relaxed.sys"
         : r == kReplyGpuFence ? "fence.gpu+st.sys"
         : r == kReplyLine     ? "st.release.sys x64B"
                               : "st.global";
}

void print_stats_json(FILE* f, const char* key, const Stats& s) {
  std::fprintf(f, "\"%s\": {\"min\": %.3f, \"median\": %.3f, \"p99\": %.3f, \"mean\": %.3f}", key, s.min, s.median, s.p99,
               s.mean);
}

std::string tuning_json(const PersistentTuning& t) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "{\"acquire_load\": %s, \"tagged_relay\": %s, \"solo_max_bytes\": %u, \"inc_arrival\": %s, "
                "\"spin_polls\": %u}",
                t.acquire_load ? "true" : "false", t.tagged_relay ? "true" : "false", t.solo_max_bytes,
                t.inc_arrival ? "true" : "false", t.spin_polls);
  return buf;
}

struct Report {
  GlobalTimer timer;
  std::vector<PlaceCold> place_cold;
  std::vector<PingResult> pings, floors;
  const PingResult* floor_ping = nullptr;  // the plain ping-pong of the floors' variant, when run
  std::vector<Result> modes, chain;
  std::vector<PersistentTuning> chain_tunings;
  std::vector<Breakdown> breakdowns;
};

void write_result(FILE* f, const Result& r, const PersistentTuning* t, bool last) {
  std::fprintf(f,
               "    {\"mode\": \"%s\", \"tuning\": \"%s\", \"packets\": %u, \"packet_bytes\": %u, \"latency_bursts\": %u, "
               "\"latency_us\": {\"min\": %.2f, \"median\": %.2f, \"p99\": %.2f}, "
               "\"latency_gap_bursts\": %u, \"latency_gap_us\": {\"min\": %.2f, \"median\": %.2f, \"p99\": %.2f, "
               "\"mean\": %.2f}, "
               "\"throughput_bursts\": %u, \"throughput_gbps\": %.2f, \"throughput_kbursts_per_s\": %.1f",
               r.mode.c_str(), r.tuning.c_str(), r.packets, r.bytes, r.latency_bursts, r.min_us, r.median_us, r.p99_us,
               r.gap_bursts, r.gap_us.min, r.gap_us.median, r.gap_us.p99, r.gap_us.mean, r.throughput_bursts, r.gbps,
               r.kbursts_per_s);
  if (t) std::fprintf(f, ", \"persistent\": %s", tuning_json(*t).c_str());
  std::fprintf(f, "}%s\n", last ? "" : ",");
}

void write_json(const std::string& path, const Report& rep, const char* device, const Options& opt) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw Error(Errc::system, "cannot write " + path);
  std::fprintf(f, "{\n  \"bench\": \"gpu_latency\",\n  \"device\": \"%s\",\n  \"bursts\": %u,\n  \"depth\": %u,\n",
               device, opt.bursts, kDepth);
  std::fprintf(f, "  \"defaults\": {\"persistent\": %s},\n", tuning_json(PersistentTuning{}).c_str());
  std::fprintf(f,
               "  \"globaltimer\": {\"min_step_ns\": %.0f, \"mean_step_ns\": %.0f, \"read_cycles\": %.0f, "
               "\"sm_mhz\": %.0f},\n",
               rep.timer.min_step_ns, rep.timer.mean_step_ns, rep.timer.read_cycles, rep.timer.sm_mhz);
  std::fprintf(f, "  \"place_cold\": [");
  for (size_t i = 0; i < rep.place_cold.size(); ++i)
    std::fprintf(f,
                 "%s{\"job\": \"%s\", \"cold_ns\": %.0f, \"hot_ns\": %.0f, \"barrier_ns\": %.0f, \"thread0_place_ns\": %.0f, "
                 "\"barrier_after_ns\": %.0f, \"barrier_after_global_store_ns\": %.0f, \"barrier_parked_ns\": %.0f}",
                 i ? ", " : "", rep.place_cold[i].job.c_str(), rep.place_cold[i].cold_ns, rep.place_cold[i].hot_ns,
                 rep.place_cold[i].barrier_ns, rep.place_cold[i].own_ns, rep.place_cold[i].wait_ns,
                 rep.place_cold[i].barrier_after_store_ns, rep.place_cold[i].barrier_parked_ns);
  std::fprintf(f, "],\n");
  std::fprintf(f, "  \"pingpong\": [\n");
  for (size_t i = 0; i < rep.pings.size(); ++i) {
    const PingResult& p = rep.pings[i];
    std::fprintf(f,
                 "    {\"variant\": \"%s\", \"poll\": \"%s\", \"acquire\": \"%s\", \"reply\": \"%s\", \"load_bytes\": %u, "
                 "\"loads_in_flight\": %u, \"stagger_ns\": %u, \"round_trips\": %u, ",
                 p.name.c_str(), name_of(PingPoll(p.v.poll)), acquire_name(p.v.acquire), reply_name(p.v.reply),
                 p.v.wide ? 64u : 4u, p.v.inflight, p.v.stagger_ns, p.rounds);
    print_stats_json(f, "rtt_us", p.rtt_us);
    std::fprintf(f, ", ");
    print_stats_json(f, "rtt_paused_us", p.rtt_gap_us);
    std::fprintf(f, ", ");
    print_stats_json(f, "host_to_gpu_us", p.h2g_us);
    std::fprintf(f, ", ");
    print_stats_json(f, "gpu_to_host_us", p.g2h_us);
    std::fprintf(f, ", \"gpu_poll_ns\": %.1f, \"align_halfwidth_us\": %.3f, \"align_inconsistent\": %u}%s\n", p.poll_ns,
                 p.align_halfwidth_us, p.inconsistent, i + 1 < rep.pings.size() ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"datafloor\": [\n");
  char ping_b2b[32] = "null", ping_paused[32] = "null";
  if (rep.floor_ping) {
    std::snprintf(ping_b2b, sizeof ping_b2b, "%.3f", rep.floor_ping->rtt_us.median);
    std::snprintf(ping_paused, sizeof ping_paused, "%.3f", rep.floor_ping->rtt_gap_us.median);
  }
  for (size_t i = 0; i < rep.floors.size(); ++i) {
    const PingResult& p = rep.floors[i];
    std::fprintf(f,
                 "    {\"name\": \"%s\", \"variant\": \"%s\", \"packets\": %u, \"packet_bytes\": %u, "
                 "\"packet_stride\": %u, \"ctas\": %u, \"threads\": %u, \"source\": \"%s\", \"round_trips\": %u, "
                 "\"paused_median_us\": %.3f, \"paused_p99_us\": %.3f, \"b2b_median_us\": %.3f, \"b2b_p99_us\": %.3f, "
                 "\"min_us\": %.3f, \"gpu_median_us\": %.3f, \"host_to_gpu_median_us\": %.3f, "
                 "\"gpu_to_host_median_us\": %.3f, \"pingpong_paused_median_us\": %s, \"pingpong_b2b_median_us\": %s}%s\n",
                 p.name.c_str(), p.v.name, p.shape.packets, p.shape.bytes, p.shape.stride(), p.shape.ctas, p.shape.threads,
                 p.shape.device_src ? "device" : "pinned_host", p.rounds, p.rtt_gap_us.median, p.rtt_gap_us.p99, p.rtt_us.median, p.rtt_us.p99,
                 std::min(p.rtt_us.min, p.rtt_gap_us.min), p.gpu_us.median, p.h2g_us.median, p.g2h_us.median,
                 ping_paused, ping_b2b, i + 1 < rep.floors.size() ? "," : "");
  }
  std::fprintf(f, "  ],\n  \"cases\": [\n");
  for (size_t i = 0; i < rep.modes.size(); ++i) write_result(f, rep.modes[i], nullptr, i + 1 == rep.modes.size());
  std::fprintf(f, "  ],\n  \"chain\": [\n");
  for (size_t i = 0; i < rep.chain.size(); ++i)
    write_result(f, rep.chain[i], &rep.chain_tunings[i], i + 1 == rep.chain.size());
  std::fprintf(f, "  ],\n  \"breakdown\": [\n");
  for (size_t i = 0; i < rep.breakdowns.size(); ++i) {
    const Breakdown& b = rep.breakdowns[i];
    std::fprintf(f,
                 "    {\"mode\": \"%s\", \"tuning\": \"%s\", \"packets\": %u, \"packet_bytes\": %u, \"bursts\": %u, "
                 "\"bursts_placed_alone\": %u, \"records_missing\": %u, \"align_inconsistent\": %u, "
                 "\"align_halfwidth_us\": %.3f, "
                 "\"mean_us\": {\"total\": %.3f, \"doorbell\": %.3f, \"relay\": %.3f, \"start\": %.3f, \"place\": %.3f, "
                 "\"place_wait\": %.3f, \"arrive\": %.3f, "
                 "\"done_store\": %.3f, \"writeback_sight\": %.3f, \"cross\": %.3f, \"gpu\": %.3f}, "
                 "\"median_us\": {\"total\": %.3f, \"doorbell\": %.3f, \"writeback_sight\": %.3f, \"cross\": %.3f, "
                 "\"gpu\": %.3f}, "
                 "\"pingpong\": \"%s\", \"pingpong_rtt_median_us\": %.3f, \"cross_minus_pingpong_us\": %.3f, "
                 "\"completed_calls_per_burst\": %.1f, \"ns_per_completed_call\": %.1f, \"sm_mhz\": %.0f, "
                 "\"back_to_back\": {\"total_median_us\": %.3f, \"doorbell_mean_us\": %.3f}}%s\n",
                 b.mode.c_str(), b.tuning.c_str(), b.packets, b.bytes, b.bursts, b.solo, b.missing, b.inconsistent,
                 b.align_halfwidth, b.total, b.doorbell, b.relay, b.start, b.place, b.wait, b.arrive, b.done_fence, b.writeback, b.cross,
                 b.gpu, b.total_median, b.doorbell_median, b.writeback_median, b.cross_median, b.gpu_median,
                 b.pingpong.c_str(), b.pingpong_rtt_median, b.cross_median - b.pingpong_rtt_median, b.calls_per_burst,
                 b.ns_per_call, b.sm_mhz, b.total_b2b_median, b.doorbell_b2b, i + 1 < rep.breakdowns.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

void print_result(const Result& r) {
  std::printf("%-22s %-14s %7u %6u %8.2f %9.2f %8.2f | %8.2f %8.2f | %11.1f %10.1f\n", r.mode.c_str(), r.tuning.c_str(),
              r.packets, r.bytes, r.min_us, r.median_us, r.p99_us, r.gap_us.median, r.gap_us.p99, r.gbps,
              r.kbursts_per_s);
}

// Latency back to back (as before), then with a random pause before each submit ("paused").
void print_result_header() {
  std::printf("%-22s %-14s %7s %6s %8s %9s %8s | %8s %8s | %11s %10s\n", "mode", "tuning", "packets", "bytes", "min us",
              "median us", "p99 us", "paused", "p. p99", "Gb/s depth4", "kbursts/s");
}

int run(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(Errc::invalid_config, a + " needs a value");
      return argv[++i];
    };
    if (a == "--json") opt.json = value();
    else if (a == "--bursts") opt.bursts = static_cast<uint32_t>(std::stoul(value()));
    else if (a == "--max-seconds") opt.max_seconds = std::stod(value());
    else if (a == "--gpu") opt.gpu = std::stoi(value());
    else if (a == "--pingpong") opt.pingpong = static_cast<uint32_t>(std::stoul(value()));
    else if (a == "--sections") opt.sections = value();
    else {
      std::fprintf(stderr,
                   "usage: %s [--bursts N] [--max-seconds S] [--gpu I] [--json PATH] [--pingpong N]\n"
                   "          [--sections pingpong,datafloor,modes,chain,breakdown]\n",
                   argv[0]);
      return 2;
    }
  }
  if (opt.bursts == 0 || opt.pingpong == 0) throw Error(Errc::invalid_config, "--bursts and --pingpong must be > 0");
  cudaDeviceProp prop{};
  cuda(cudaGetDeviceProperties(&prop, opt.gpu), "cudaGetDeviceProperties");
  cuda(cudaSetDevice(opt.gpu), "cudaSetDevice");
  const int sms = prop.multiProcessorCount;
  std::printf("gpu %d: %s, %d SMs; %u bursts per case after %u warm-up, throughput at depth %u\n", opt.gpu, prop.name,
              sms, opt.bursts, kWarmup, kDepth);
  // Load the bench's own kernels before any persistent kernel runs (lazy loading could
  // otherwise wait for it forever: README, "Rules while a persistent kernel runs").
  cudaFuncAttributes attr{};
  cuda(cudaFuncGetAttributes(&attr, globaltimer_step_kernel), "load globaltimer kernel");
  cuda(cudaFuncGetAttributes(&attr, pingpong_kernel), "load pingpong kernel");
  cuda(cudaFuncGetAttributes(&attr, place_cold_kernel), "load place_cold kernel");

  Report rep;
  rep.timer = measure_globaltimer();
  // The timer's resolution bounds every GPU stamp: used as the stamps' uncertainty below.
  const double tick_ns = std::max(1.0, rep.timer.min_step_ns);
  std::printf("%%globaltimer: smallest step %.0f ns, mean time between changes %.0f ns, a read costs %.0f SM cycles "
              "(SM at %.0f MHz)\n",
              rep.timer.min_step_ns, rep.timer.mean_step_ns, rep.timer.read_cycles, rep.timer.sm_mhz);
  rep.place_cold = measure_place_cold();
  for (const PlaceCold& c : rep.place_cold)
    std::printf("place_job(%s) + barrier, one 512-thread block: %.0f ns after 3 us idle, %.0f ns at once again "
                "(a bare barrier %.0f ns; thread 0's place_job %.0f ns, then the barrier %.0f ns; a barrier after a "
                "global store %.0f ns; one the other warps waited at for 3 us %.0f ns)\n",
                c.job.c_str(), c.cold_ns, c.hot_ns, c.barrier_ns, c.own_ns, c.wait_ns, c.barrier_after_store_ns,
                c.barrier_parked_ns);

  const PingVariant pings[] = {
      {"spin_acqld_rel", kSpin, kAcqLoad, kReplyRelease, true},      // the default chain's poll and DONE
      {"backoff_fence_rel", kBackoff, kAcqFence, kReplyRelease, true},  // the legacy chain's
      {"spin_fence_rel", kSpin, kAcqFence, kReplyRelease, true},
      {"backoff_acqld_rel", kBackoff, kAcqLoad, kReplyRelease, true},
      {"spin_acqld_relaxed", kSpin, kAcqLoad, kReplyRelaxed, true},
      {"spin_acqld_weak", kSpin, kAcqLoad, kReplyWeak, true},
      {"spin_none_weak", kSpin, kAcqNone, kReplyWeak, true},  // no ordering at all: the bare floor
      {"spin_acqld_rel_4B", kSpin, kAcqLoad, kReplyRelease, false},
      {"spin_acqld_gpufence", kSpin, kAcqLoad, kReplyGpuFence, true},  // device-scope release of the reply
      {"spin_acqld_rel_line", kSpin, kAcqLoad, kReplyLine, true},  // the reply's whole 64-byte line
      {"spin_acqld_rel_x2", kSpin, kAcqLoad, kReplyRelease, true, 2},  // 2 polls in flight, staggered
      {"spin_fence_rel_x2", kSpin, kAcqFence, kReplyRelease, true, 2},
      {"spin_acqld_rel_x4", kSpin, kAcqLoad, kReplyRelease, true, 4},
      {"spin_fence_rel_x4", kSpin, kAcqFence, kReplyRelease, true, 4},
  };
  if (opt.has("pingpong")) {
    std::printf("\npingpong: host writes a flag in mapped memory, one GPU warp polls it and writes a reply there, "
                "host spins on the reply (%u round trips each)\n",
                opt.pingpong);
    std::printf("%-20s %-8s %-22s %-19s %4s %3s %8s %9s %8s | %8s %8s | %8s %9s %9s %8s\n", "variant", "poll", "acquire",
                "reply", "B", "k", "min us", "median us", "p99 us", "paused", "p. p99", "poll ns", "h->g us", "g->h us",
                "+-align");
    double poll_ns = 0;  // one poll in flight, spinning: the first variant's
    for (PingVariant v : pings) {
      if (v.inflight > 1) v.stagger_ns = static_cast<uint32_t>(poll_ns / v.inflight);
      rep.pings.push_back(run_pingpong(v, opt, tick_ns));
      if (poll_ns == 0) poll_ns = rep.pings.back().poll_ns;
      const PingResult& p = rep.pings.back();
      std::printf("%-20s %-8s %-22s %-19s %4u %3u %8.2f %9.2f %8.2f | %8.2f %8.2f | %8.0f %9.2f %9.2f %8.2f%s\n",
                  p.name.c_str(), name_of(PingPoll(v.poll)), acquire_name(v.acquire), reply_name(v.reply),
                  v.wide ? 64u : 4u, v.inflight, p.rtt_us.min, p.rtt_us.median, p.rtt_us.p99, p.rtt_gap_us.median,
                  p.rtt_gap_us.p99, p.poll_ns, p.h2g_us.median, p.g2h_us.median,
                  p.align_halfwidth_us, p.inconsistent ? "  (clock bounds inconsistent in some windows)" : "");
    }
  }
  const auto ping_named = [&](const char* n) -> const PingResult* {
    for (const PingResult& p : rep.pings)
      if (p.name == n) return &p;
    return nullptr;
  };

  if (opt.has("datafloor")) {
    const PingVariant& v = pings[0];  // the default chain's poll and DONE
    rep.floor_ping = ping_named(v.name);
    std::printf("\ndatafloor: the %s ping-pong, the GPU copying the burst from mapped pinned memory (_dev: device "
                "memory; packets 2x their size apart) to device memory between flag and reply (%u round trips each); gpu = flag seen -> "
                "reply issued (CTA 0's stamp; with 4 CTAs the relay included); pingpong, extra: the plain ping-pong's paused median, what the row's paused median adds\n",
                v.name, opt.pingpong);
    std::printf("%-18s %4s %7s %7s %6s %8s %9s %8s | %8s %8s | %8s %9s %9s | %8s %6s\n", "name", "ctas", "threads",
                "packets", "bytes", "min us", "median us", "p99 us", "paused", "p. p99", "gpu us", "h->g us", "g->h us",
                "pingpong", "extra");
    const std::pair<uint32_t, uint32_t> sizes[] = {{0, 0}, {16, 1024}, {64, 1024}, {16, 8192}};
    // 1 CTA of 256 threads, of 512 (the persistent kernel's kThreads), 4 CTAs of 256.
    // _dev: the packets in device memory, as the modes and chain cases place them (1 CTA of 512:
    // the lone-burst path); the others read pinned host memory, as a NIC-fed pipeline does.
    struct Grid {
      uint32_t ctas, threads;
      bool device_src;
    };
    const Grid grids[] = {{1, 256, false}, {1, 512, false}, {4, 256, false}, {1, 512, true}};
    for (const auto& [ctas, threads, device_src] : grids)
      for (const auto& [packets, bytes] : sizes) {
        if (device_src && !packets) continue;  // nothing read: the host rows say it
        const PingShape shape{ctas, threads, packets, bytes, device_src};
        const std::string name = (packets ? std::to_string(packets) + "x" + std::to_string(bytes / 1024) + "KB" : "empty") +
                                 "_" + std::to_string(ctas) + "x" + std::to_string(threads) + (device_src ? "_dev" : "");
        rep.floors.push_back(run_pingpong(v, opt, tick_ns, shape, name));
        const PingResult& p = rep.floors.back();
        const double ping = rep.floor_ping ? rep.floor_ping->rtt_gap_us.median : 0;
        std::printf("%-18s %4u %7u %7u %6u %8.2f %9.2f %8.2f | %8.2f %8.2f | %8.2f %9.2f %9.2f | ", p.name.c_str(), ctas,
                    threads, packets, bytes, std::min(p.rtt_us.min, p.rtt_gap_us.min), p.rtt_us.median, p.rtt_us.p99,
                    p.rtt_gap_us.median, p.rtt_gap_us.p99, p.gpu_us.median, p.h2g_us.median, p.g2h_us.median);
        if (rep.floor_ping) std::printf("%8.2f %6.2f\n", ping, p.rtt_gap_us.median - ping);
        else std::printf("%8s %6s\n", "-", "-");
      }
  }

  const PersistentTuning legacy = PersistentTuning::legacy();
  if (opt.has("modes")) {
    std::vector<Mode> modes = {{"per_burst", LaunchMode::per_burst, false, 0},
                               {"graph", LaunchMode::graph, false, 0},
                               {"persistent_g1", LaunchMode::persistent, true, 1},
                               {"persistent_g4", LaunchMode::persistent, true, 4},
                               {"persistent_g1_legacy", LaunchMode::persistent, true, 1, "legacy", legacy},
                               {"persistent_g4_legacy", LaunchMode::persistent, true, 4, "legacy", legacy},
                               {"persistent_sm/8_g1", LaunchMode::persistent, false, 1},
                               {"persistent_sm/8_g4", LaunchMode::persistent, false, 4}};
    std::printf("\nmodes: latency = one burst in flight, submit() to completed(); throughput at depth %u\n", kDepth);
    print_result_header();
    for (uint32_t bytes : {1024u, 8192u})
      for (uint32_t packets : {16u, 64u, 1024u})
        for (const Mode& m : modes) {
          const Result r = run_case(m, packets, bytes, opt, sms);
          print_result(r);
          if (r.latency_bursts < opt.bursts || r.throughput_bursts < opt.bursts)
            std::printf("  (time limit: %u latency / %u throughput bursts)\n", r.latency_bursts, r.throughput_bursts);
          rep.modes.push_back(r);
        }
  }

  if (opt.has("chain")) {
    // Each switch flipped alone against the default, and the legacy chain.
    std::vector<std::pair<std::string, PersistentTuning>> tunings;
    tunings.emplace_back("default", PersistentTuning{});
    tunings.emplace_back("legacy", legacy);
    // Each switch flipped alone against the default.
    auto flipped = [&tunings](const char* name, auto flip) {
      PersistentTuning t;
      flip(t);
      tunings.emplace_back(name, t);
    };
    flipped("fence_acquire", [](PersistentTuning& t) { t.acquire_load = false; });
    flipped("go_relay", [](PersistentTuning& t) { t.tagged_relay = false; });
    flipped("no_solo", [](PersistentTuning& t) { t.solo_max_bytes = 0; });
    flipped("solo_128k", [](PersistentTuning& t) { t.solo_max_bytes = 128 * 1024; });
    flipped("fence_add", [](PersistentTuning& t) { t.inc_arrival = false; });
    flipped("no_spin", [](PersistentTuning& t) { t.spin_polls = 0; });
    std::printf("\nchain: persistent kernel, 1 CTA per SM, each PersistentTuning switch flipped alone against the "
                "default (packets 0 = persistent_empty: an empty job)\n");
    print_result_header();
    const std::pair<uint32_t, uint32_t> cases[] = {{0, 0}, {16, 1024}, {64, 1024}, {16, 8192}};
    for (const auto& [packets, bytes] : cases)
      for (uint32_t groups : {1u, 4u})
        for (const auto& [tname, t] : tunings) {
          const std::string mname = std::string(packets ? "persistent_g" : "persistent_empty_g") + std::to_string(groups);
          const Mode m{mname, LaunchMode::persistent, true, groups, tname, t};
          const Result r = run_case(m, packets, bytes, opt, sms);
          print_result(r);
          rep.chain.push_back(r);
          rep.chain_tunings.push_back(t);
        }
  }

  if (opt.has("breakdown")) {
    std::printf("\nbreakdown: traced latency runs (%%globaltimer stamps in the kernel, clock_gettime on the host) of the "
                "bursts started after a random pause; means in us, which add up to total: doorbell (submit -> leader "
                "has READY), relay (-> the completing CTA has the job), start (-> its threads go), place (-> its thread "
                "0 placed), wait (-> the CTA placed), arrive, DONE (release store), writeback (-> completed() counts "
                "it). doorbell and writeback split at the aligned clocks (+- align); cross = total - GPU time needs no "
                "alignment; pingpong = the matching ping-pong's paused median; b2b = back-to-back bursts\n");
    std::printf("%-20s %-8s %7s %6s %6s %6s %8s %6s %6s %6s %6s %6s %6s %9s %6s | %6s %8s %6s | %6s %7s | %6s %7s %6s\n",
                "mode", "tuning", "packets", "bytes", "total", "median", "doorbell", "relay", "start", "place", "wait",
                "arrive", "DONE", "writeback", "+-align", "cross", "pingpong", "extra", "b2b", "b2b db", "calls",
                "ns/call", "SM MHz");
    struct Traced {
      Mode m;
      uint32_t packets, bytes;
      const char* ping;
    };
    const Traced runs[] = {
        {{"persistent_empty_g1", LaunchMode::persistent, true, 1, "default", PersistentTuning{}}, 0, 0, "spin_acqld_rel"},
        {{"persistent_empty_g1", LaunchMode::persistent, true, 1, "legacy", legacy}, 0, 0, "backoff_fence_rel"},
        {{"persistent_g1", LaunchMode::persistent, true, 1, "default", PersistentTuning{}}, 16, 1024, "spin_acqld_rel"},
        {{"persistent_g1", LaunchMode::persistent, true, 1, "legacy", legacy}, 16, 1024, "backoff_fence_rel"},
        {{"persistent_g1", LaunchMode::persistent, true, 1, "no_solo", [] {
            PersistentTuning t;
            t.solo_max_bytes = 0;
            return t;
          }()}, 16, 1024, "spin_acqld_rel"},
        {{"persistent_g4", LaunchMode::persistent, true, 4, "default", PersistentTuning{}}, 16, 1024, "spin_acqld_rel"},
        {{"persistent_g1", LaunchMode::persistent, true, 1, "default", PersistentTuning{}}, 1024, 8192, "spin_acqld_rel"},
        {{"persistent_g1", LaunchMode::persistent, true, 1, "legacy", legacy}, 1024, 8192, "backoff_fence_rel"},
    };
    for (const Traced& tr : runs) {
      TraceRun t;
      run_case(tr.m, tr.packets, tr.bytes, opt, sms, &t);
      const Breakdown b = analyse(tr.m, tr.packets, tr.bytes, t, tick_ns, ping_named(tr.ping));
      rep.breakdowns.push_back(b);
      std::printf("%-20s %-8s %7u %6u %6.2f %6.2f %8.2f %6.2f %6.2f %6.2f %6.2f %6.2f %6.2f %9.2f %6.2f | %6.2f %8.2f "
                  "%6.2f | %6.2f %7.2f | %6.0f %7.1f %6.0f\n",
                  b.mode.c_str(), b.tuning.c_str(), b.packets, b.bytes, b.total, b.total_median, b.doorbell, b.relay,
                  b.start, b.place, b.wait, b.arrive, b.done_fence, b.writeback, b.align_halfwidth, b.cross_median,
                  b.pingpong_rtt_median, b.cross_median - b.pingpong_rtt_median, b.total_b2b_median, b.doorbell_b2b,
                  b.calls_per_burst, b.ns_per_call, b.sm_mhz);
      if (b.missing || b.inconsistent || b.solo)
        std::printf("  (%u bursts placed by the leader alone, %u records missing, %u alignment windows inconsistent)\n",
                    b.solo, b.missing, b.inconsistent);
    }
  }
  if (!opt.json.empty()) write_json(opt.json, rep, prop.name, opt);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_latency: %s\n", e.what());
    return 1;
  }
}
