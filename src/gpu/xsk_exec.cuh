// Who runs the XSK drivers' loops (xsk_receive.cuh, xsk_send.cuh): a thread block of a
// persistent kernel (GpuExec) or one CPU thread (CpuExec). Each says who this thread is, how
// threads meet, how they fence and what time it is; a loop is written once over them.
#pragma once

#include <linux/if_xdp.h>
#include <time.h>

#include <cuda/atomic>

#include "gpu/sample_convert.cuh"  // NDQ_HD

#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)  // a descriptor continued by the next (multi-buffer), linux/if_xdp.h 6.6+
#endif

namespace netdaq::gpu::detail {

// 32 warps: each step's packets are read over the bus (a round trip of ~1-2 µs each), one packet
// after another within a warp; with 8 warps the receive loop placed 0.45 Mpps on the H200,
// bound by those round trips, not by the SM.
constexpr unsigned kThreads = 1024;

// A thread block. Host versions exist only so that the shared template compiles for the host.
struct GpuExec {
  static constexpr bool kCpu = false;
  NDQ_HD uint32_t tid() const {
#ifdef __CUDA_ARCH__
    return threadIdx.x;
#else
    return 0;
#endif
  }
  NDQ_HD uint32_t threads() const { return kThreads; }
  NDQ_HD uint32_t warp() const { return tid() / 32; }
  NDQ_HD uint32_t warps() const { return kThreads / 32; }
  NDQ_HD uint32_t lane() const { return tid() & 31; }
  NDQ_HD uint32_t lanes() const { return 32; }
  NDQ_HD void sync() const {
#ifdef __CUDA_ARCH__
    __syncthreads();
#endif
  }
  NDQ_HD void sync_warp() const {
#ifdef __CUDA_ARCH__
    __syncwarp();
#endif
  }
  NDQ_HD void fence_system() const {
#ifdef __CUDA_ARCH__
    __threadfence_system();
#endif
  }
  NDQ_HD uint64_t now_ns() const {
    uint64_t t = 0;
#ifdef __CUDA_ARCH__
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
#endif
    return t;
  }
  NDQ_HD void idle() const {
#ifdef __CUDA_ARCH__
    __nanosleep(500);  // an empty ring: a poll every ~µs is enough, and leaves the bus alone
#endif
  }
};

// One CPU thread (device versions only so that the shared template compiles for the device).
struct CpuExec {
  static constexpr bool kCpu = true;
  NDQ_HD uint32_t tid() const { return 0; }
  NDQ_HD uint32_t threads() const { return 1; }
  NDQ_HD uint32_t warp() const { return 0; }
  NDQ_HD uint32_t warps() const { return 1; }
  NDQ_HD uint32_t lane() const { return 0; }
  NDQ_HD uint32_t lanes() const { return 1; }
  NDQ_HD void sync() const {}
  NDQ_HD void sync_warp() const {}
  NDQ_HD void fence_system() const { cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system); }
  NDQ_HD uint64_t now_ns() const {
#ifndef __CUDA_ARCH__
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
#else
    return 0;
#endif
  }
  NDQ_HD void idle() const {
#ifndef __CUDA_ARCH__
    __builtin_ia32_pause();
#endif
  }
};

// Ring indices and flags shared with the kernel or the API thread: system-scope acquire loads
// and release stores, as the kernel's smp_load_acquire / smp_store_release expect.
NDQ_HD uint32_t xsk_load_acquire(const uint32_t* a) {
  return cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(*const_cast<uint32_t*>(a)).load(cuda::memory_order_acquire);
}
NDQ_HD void xsk_store_release(uint32_t* a, uint32_t v) {
  cuda::atomic_ref<uint32_t, cuda::thread_scope_system>(*a).store(v, cuda::memory_order_release);
}

// A driver's counters (a struct of uint64_t) into the copy the API thread reads at any time.
template <class Counters>
NDQ_HD void publish_xsk_counters(const Counters& from, Counters& to) {
  using AtomicU64 = cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>;
  const auto* f = reinterpret_cast<const uint64_t*>(&from);
  auto* t = reinterpret_cast<unsigned long long*>(&to);
  for (uint32_t i = 0; i < sizeof(Counters) / sizeof(uint64_t); ++i) AtomicU64(t[i]).store(f[i], cuda::memory_order_relaxed);
}

// Thread 0 of a driver that leaves its loop: its last counters, then `exited` (after them).
template <class Exec, class Counters>
NDQ_HD void announce_xsk_exit(const Exec& x, const Counters& c, Counters& published, uint32_t* exited) {
  publish_xsk_counters(c, published);
  x.fence_system();
  xsk_store_release(exited, 1);
}

}  // namespace netdaq::gpu::detail
