// Issue 35, item 1: can a GPU kernel own an AF_XDP socket's rings? Measured, not assumed.
//
// The probe makes an AF_XDP socket the way the afxdp engine does, but from raw syscalls (the
// GPU machine has no libxdp; raw_xsk.h): a UMEM, the rings mmap()ed from the socket, an XSKMAP
// and a small XDP program (UDP to one port -> the socket) attached in generic mode to the
// loopback of a network namespace of its own (nothing else is on that lo, everything
// disappears with the process). Then it registers each ring mapping
// with CUDA (cudaHostRegister, mapped) and lets a block of GPU warps run the consumer side:
//   - reads the RX producer the kernel writes (system-scope acquire),
//   - checks each packet's payload in the UMEM (pinned host memory, mapped; a warp per packet),
//   - publishes the RX consumer and gives each buffer straight back through the fill ring
//     (system-scope release of the producer the kernel reads).
// The CPU only sends the test traffic (a UDP socket to 127.0.0.1, at most --window packets
// ahead of what the GPU has taken, read from a counter the GPU writes to mapped memory) and
// never touches a descriptor. --consumer cpu runs the same ring protocol on a CPU thread
// instead (the control, and the mode that runs on a machine without a GPU).
//
// Accounting, checked: sent == taken + the socket's drops (XDP_STATISTICS: rx_dropped, which
// includes an empty fill ring, and rx_ring_full) + what the XDP program passed to the stack
// (a UDP socket on the port counts them); every taken packet's length, sequence and pattern
// checked (bad ones counted, the run fails). If a ring cannot be registered, the CUDA error is
// printed for that ring: the finding the issue asks for.
//
//   netdaq_xsk_gpu_rings [--consumer gpu|cpu] [--packets N] [--size B] [--window W]
//                        [--hold N] [--corrupt-every N] [--seconds S] [--json FILE]
// --hold N keeps the first N buffers taken (a starved fill ring: the kernel's drops must
// account for the rest); --corrupt-every N spoils one byte of every N-th message (the
// consumer must find exactly those).
// Exit status: 0 every packet accounted for and checked, 1 a check failed, 2 setup failed.
#include <netinet/in.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <cuda/atomic>
#include <cuda_runtime.h>

#include "raw_xsk.h"
#include "xsk_gpu_map.h"

namespace {

using raw_xsk::kFrameSize;
using raw_xsk::kFrames;
using raw_xsk::kRingSize;
using raw_xsk::die;
using raw_xsk::Xsk;
constexpr uint32_t kHeaders = 14 + 20 + 8;  // what generic XDP hands the socket before the payload
constexpr uint16_t kPort = 47000;
constexpr unsigned kWarps = 8;             // GPU consumer: packets checked at once

struct Options {
  bool gpu = true;
  uint64_t packets = 200000;
  uint32_t size = 1024;  // UDP payload bytes (>= 8: the sequence)
  uint32_t window = kRingSize / 2;
  uint32_t hold = 0;  // the first N buffers taken are kept, never given back: a starved fill ring
  uint64_t corrupt_every = 0;  // message k with k % N == N - 1 has its last byte wrong: found bad
  double seconds = 20;
  std::string json;
};

// What the consumer found; in mapped memory for the GPU (the sender reads `taken` as it goes).
struct Counts {
  unsigned long long taken;    // RX descriptors consumed (and their buffers given back)
  unsigned long long bad;      // wrong length, sequence out of range or a pattern byte wrong
  unsigned long long dupes;    // a sequence seen before (never expected)
  unsigned long long polls;    // producer reads
  unsigned int done;           // the consumer has stopped
};

// Payload byte i (after the 8-byte sequence) of message seq.
__host__ __device__ inline uint8_t pattern(uint64_t seq, uint32_t i) { return uint8_t(seq * 7 + i); }

// True when the warp finds packet pkt (len bytes) to be message seq of the traffic: its
// payload read as aligned 16-byte vectors (a PCIe read each, all lanes at once), every byte
// compared. *seq_out: its sequence (read by lane 0, shared).
__device__ bool warp_checks(const uint8_t* pkt, uint32_t len, uint32_t size, uint64_t packets, uint64_t* seq_out) {
  const unsigned lane = threadIdx.x & 31;
  uint64_t seq = 0;
  bool ok = len == kHeaders + size;
  if (lane == 0 && ok) memcpy(&seq, pkt + kHeaders, 8);
  seq = __shfl_sync(0xffffffffu, seq, 0);
  ok = ok && seq < packets;
  if (__all_sync(0xffffffffu, ok)) {
    const uint8_t* first = pkt + kHeaders + 8;
    const uint8_t* last = pkt + kHeaders + size;  // one past
    const auto base = reinterpret_cast<uintptr_t>(first) & ~uintptr_t(15);
    for (uintptr_t v = base + 16 * lane; v < reinterpret_cast<uintptr_t>(last); v += 16 * 32) {
      const uint4 word = *reinterpret_cast<const uint4*>(v);
      const auto* b = reinterpret_cast<const uint8_t*>(&word);
      for (int k = 0; k < 16; ++k) {
        const auto* at = reinterpret_cast<const uint8_t*>(v + k);
        if (at >= first && at < last && b[k] != pattern(seq, static_cast<uint32_t>(at - first))) ok = false;
      }
    }
  }
  *seq_out = seq;
  return __all_sync(0xffffffffu, ok);
}

// The consumer: thread 0 reads the RX producer (system-scope acquire); each warp checks every
// W-th new packet; thread 0 then publishes the RX consumer and the fill producer (system-scope
// release), each buffer's chunk back in the fill ring at a place fixed by its position, so no
// warp waits for another's.
__global__ void gpu_consumer(uint32_t* rx_prod, uint32_t* rx_cons, const xdp_desc* rx_desc, uint32_t* fill_prod,
                             uint64_t* fill_desc, const uint8_t* umem, uint32_t size, uint64_t packets,
                             uint32_t hold, uint32_t* seen, Counts* c, const volatile unsigned int* stop,
                             unsigned long long limit_ns) {
  const unsigned warp = threadIdx.x / 32, warps = blockDim.x / 32, lane = threadIdx.x & 31;
  cuda::atomic_ref<uint32_t, cuda::thread_scope_system> prod(*rx_prod), cons_ref(*rx_cons), fprod(*fill_prod);
  __shared__ uint32_t s_prod;
  __shared__ int s_quit;
  __shared__ unsigned long long s_bad, s_dupes;
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  // Every buffer to the kernel first: the fill ring's producer, written by the GPU.
  if (threadIdx.x == 0) {
    for (uint32_t i = 0; i < kRingSize; ++i) fill_desc[i] = uint64_t(i) * kFrameSize;
    fprod.store(kRingSize, cuda::memory_order_release);
    s_bad = s_dupes = 0;
  }
  uint32_t cons = 0;
  unsigned long long taken = 0, polls = 0;
  for (;;) {
    if (threadIdx.x == 0) {
      s_prod = prod.load(cuda::memory_order_acquire);
      ++polls;
      unsigned long long now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      s_quit = s_prod == cons && (*stop || taken >= packets || now - t0 > limit_ns);
    }
    __syncthreads();
    const uint32_t p = s_prod, n = p - cons;
    if (s_quit) break;
    if (n == 0) {
      __syncthreads();  // nobody reads s_prod again before thread 0 rewrites it
      continue;
    }
    for (uint32_t j = warp; j < n; j += warps) {
      const xdp_desc d = rx_desc[(cons + j) & (kRingSize - 1)];
      uint64_t seq = 0;
      const bool ok = warp_checks(umem + d.addr, d.len, size, packets, &seq);
      if (lane == 0) {
        if (!ok) atomicAdd(&s_bad, 1ull);
        else if (atomicOr(&seen[seq / 32], 1u << (seq % 32)) & (1u << (seq % 32))) atomicAdd(&s_dupes, 1ull);
        // Its chunk straight back, unless it is one of the first `hold` taken (kept: starving)
        const unsigned long long g = taken + j;
        if (g >= hold) fill_desc[(kRingSize + (g - hold)) & (kRingSize - 1)] = d.addr & ~uint64_t(kFrameSize - 1);
      }
    }
    __threadfence_system();  // each warp's fill entries visible to the host before thread 0's release
    __syncthreads();
    cons = p;
    taken += n;
    if (threadIdx.x == 0) {
      const uint32_t fill_at = kRingSize + static_cast<uint32_t>(taken > hold ? taken - hold : 0);
      cons_ref.store(cons, cuda::memory_order_release);  // the kernel may reuse those RX slots
      fprod.store(fill_at, cuda::memory_order_release);  // and has the buffers back
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(c->taken).store(taken, cuda::memory_order_release);
    }
  }
  if (threadIdx.x == 0) {
    c->bad = s_bad;
    c->dupes = s_dupes;
    c->polls = polls;
    cuda::atomic_ref<unsigned int, cuda::thread_scope_system>(c->done).store(1, cuda::memory_order_release);
  }
}

// The same protocol on a CPU thread (the control).
void cpu_consumer(Xsk& x, uint32_t size, uint64_t packets, uint32_t hold, uint32_t* seen, Counts* c,
                  const std::atomic<bool>& stop, double seconds) {
  std::atomic_ref<uint32_t> prod(*x.rx.producer), cons_ref(*x.rx.consumer), fprod(*x.fill.producer);
  auto* fill_desc = static_cast<uint64_t*>(x.fill.desc);
  const auto* rx_desc = static_cast<const xdp_desc*>(x.rx.desc);
  for (uint32_t i = 0; i < kRingSize; ++i) fill_desc[i] = uint64_t(i) * kFrameSize;
  uint32_t fill_at = kRingSize, cons = 0;
  fprod.store(fill_at, std::memory_order_release);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  unsigned long long taken = 0;
  for (;;) {
    const uint32_t p = prod.load(std::memory_order_acquire);
    ++c->polls;
    if (p == cons) {
      if (stop.load(std::memory_order_relaxed) || taken >= packets || std::chrono::steady_clock::now() > end) break;
      continue;
    }
    for (; cons != p; ++cons) {
      const xdp_desc d = rx_desc[cons & (kRingSize - 1)];
      const uint8_t* pkt = x.umem + d.addr;
      bool ok = d.len == kHeaders + size;
      uint64_t seq = 0;
      if (ok) {
        std::memcpy(&seq, pkt + kHeaders, 8);
        ok = seq < packets;
        for (uint32_t i = 0; ok && i < size - 8; ++i) ok = pkt[kHeaders + 8 + i] == pattern(seq, i);
      }
      ++taken;
      if (!ok) ++c->bad;
      else if (seen[seq / 32] & (1u << (seq % 32))) ++c->dupes;
      else seen[seq / 32] |= 1u << (seq % 32);
      if (taken > hold) fill_desc[fill_at++ & (kRingSize - 1)] = d.addr & ~uint64_t(kFrameSize - 1);
    }
    cons_ref.store(cons, std::memory_order_release);
    fprod.store(fill_at, std::memory_order_release);
    std::atomic_ref<unsigned long long>(c->taken).store(taken, std::memory_order_release);
  }
  std::atomic_ref<unsigned int>(c->done).store(1, std::memory_order_release);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return raw_xsk::option_value(argc, argv, i); };
    if (a == "--consumer") o.gpu = std::string(next()) == "gpu";
    else if (a == "--packets") o.packets = std::strtoull(next(), nullptr, 10);
    else if (a == "--size") o.size = static_cast<uint32_t>(std::strtoul(next(), nullptr, 10));
    else if (a == "--window") o.window = static_cast<uint32_t>(std::strtoul(next(), nullptr, 10));
    else if (a == "--seconds") o.seconds = std::strtod(next(), nullptr);
    else if (a == "--corrupt-every") o.corrupt_every = std::strtoull(next(), nullptr, 10);
    else if (a == "--hold") o.hold = static_cast<uint32_t>(std::strtoul(next(), nullptr, 10));
    else if (a == "--json") o.json = next();
    else {
      std::fprintf(stderr, "usage: %s [--consumer gpu|cpu] [--packets N] [--size B] [--window W] [--hold N] [--corrupt-every N] [--seconds S] [--json FILE]\n", argv[0]);
      std::exit(2);
    }
  }
  if (o.size < 8 || kHeaders + o.size > kFrameSize || o.packets == 0 || o.window == 0 || o.window > kRingSize || o.hold > kRingSize) {
    std::fprintf(stderr, "xsk_gpu_rings: --size 8..%u, --packets > 0, --window 1..%u, --hold <= %u\n", kFrameSize - kHeaders, kRingSize, kRingSize);
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const int ifindex = raw_xsk::own_loopback();

  // The UMEM: pinned and mapped for the GPU consumer, plain pages for the CPU one.
  const size_t umem_len = size_t(kFrames) * kFrameSize;
  uint8_t* umem = nullptr;
  Counts* counts = nullptr;
  unsigned int* stop_flag = nullptr;
  if (o.gpu) {
    if (cudaHostAlloc(reinterpret_cast<void**>(&umem), umem_len, cudaHostAllocMapped) != cudaSuccess) die("cudaHostAlloc(UMEM)", 0);
    if (cudaHostAlloc(reinterpret_cast<void**>(&counts), sizeof(Counts) + 64, cudaHostAllocMapped) != cudaSuccess) die("cudaHostAlloc", 0);
    stop_flag = reinterpret_cast<unsigned int*>(reinterpret_cast<uint8_t*>(counts) + sizeof(Counts));
  } else {
    umem = static_cast<uint8_t*>(std::aligned_alloc(4096, umem_len));
    counts = new Counts;
    stop_flag = new unsigned int;
  }
  // Which sequences arrived: device memory for the GPU (read back at the end), else host.
  const size_t seen_words = (o.packets + 31) / 32;
  std::vector<uint32_t> seen(seen_words, 0);
  uint32_t* d_seen = nullptr;
  if (o.gpu) {
    if (cudaMalloc(&d_seen, seen_words * 4) != cudaSuccess) die("cudaMalloc(seen)", 0);
    cudaMemset(d_seen, 0, seen_words * 4);
  }
  std::memset(umem, 0, umem_len);
  std::memset(counts, 0, sizeof(Counts));
  *stop_flag = 0;

  Xsk x = raw_xsk::open_xsk(ifindex, umem);
  raw_xsk::attach(ifindex, x.fd, kPort);

  // A UDP socket on the port: whatever the program passes to the stack lands here, counted.
  const int passed_sock = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(kPort);
  dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(passed_sock, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) != 0) die("bind the pass counter");

  std::string map_error;
  std::atomic<bool> cpu_stop{false};
  std::thread cpu_thread;
  if (o.gpu) {
    void* d_umem = nullptr;
    if (cudaHostGetDevicePointer(&d_umem, umem, 0) != cudaSuccess) die("cudaHostGetDevicePointer(UMEM)", 0);
    raw_xsk::GpuRing fill, rx;
    if (!raw_xsk::map_for_gpu("fill ring", x.fill, &fill, &map_error) ||
        !raw_xsk::map_for_gpu("rx ring", x.rx, &rx, &map_error)) {
      std::printf("{\"consumer\":\"gpu\",\"rings_mapped\":false,\"error\":\"%s\"}\n", map_error.c_str());
      return 2;
    }
    void *d_counts = nullptr, *d_stop = nullptr;
    cudaHostGetDevicePointer(&d_counts, counts, 0);
    cudaHostGetDevicePointer(&d_stop, stop_flag, 0);
    gpu_consumer<<<1, 32 * kWarps>>>(rx.producer, rx.consumer, static_cast<const xdp_desc*>(rx.desc), fill.producer,
                                     static_cast<uint64_t*>(fill.desc), static_cast<const uint8_t*>(d_umem),
                            o.size, o.packets, o.hold, d_seen, static_cast<Counts*>(d_counts),
                            static_cast<const volatile unsigned int*>(d_stop),
                            static_cast<unsigned long long>((o.seconds + 5) * 1e9));
    if (cudaGetLastError() != cudaSuccess) die("launch", 0);
  } else {
    cpu_thread = std::thread(cpu_consumer, std::ref(x), o.size, o.packets, o.hold, seen.data(), counts,
                             std::cref(cpu_stop), o.seconds + 5);
  }

  // Wait until the consumer has given the kernel its buffers (the fill producer moves).
  const auto t_setup = std::chrono::steady_clock::now();
  while (std::atomic_ref<uint32_t>(*x.fill.producer).load(std::memory_order_acquire) == 0) {
    if (std::chrono::steady_clock::now() - t_setup > std::chrono::seconds(10)) {
      std::fprintf(stderr, "xsk_gpu_rings: the consumer never filled the fill ring\n");
      return 2;
    }
  }

  // The traffic: message k carries k, then the pattern; at most --window ahead of the consumer.
  const int tx = socket(AF_INET, SOCK_DGRAM, 0);
  uint8_t buf[kFrameSize];
  std::atomic_ref<unsigned long long> taken(counts->taken);
  const auto t0 = std::chrono::steady_clock::now();
  const auto end = t0 + std::chrono::duration<double>(o.seconds);
  uint64_t sent = 0, send_errors = 0, corrupted = 0;
  auto dropped = [&] {  // the socket's own drop counters (a syscall: only when the window is full)
    const xdp_statistics st = raw_xsk::stats(x.fd);
    return st.rx_dropped + st.rx_ring_full;
  };
  for (uint64_t k = 0; k < o.packets && std::chrono::steady_clock::now() < end; ++k) {
    while (sent - taken.load(std::memory_order_acquire) >= o.window && std::chrono::steady_clock::now() < end &&
           sent - taken.load(std::memory_order_acquire) - dropped() >= o.window) {
    }
    std::memcpy(buf, &k, 8);
    for (uint32_t i = 0; i < o.size - 8; ++i) buf[8 + i] = pattern(k, i);
    const bool corrupt = o.corrupt_every && k % o.corrupt_every == o.corrupt_every - 1;
    if (corrupt) buf[o.size - 1] ^= 0x5a;
    if (sendto(tx, buf, o.size, 0, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) == ssize_t(o.size)) {
      ++sent;
      corrupted += corrupt;
    } else {
      ++send_errors;
    }
  }
  // Everything sent has been taken or dropped once the consumer's count stops moving.
  for (unsigned long long last = ~0ull; ;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const unsigned long long now = taken.load(std::memory_order_acquire);
    if (now == last || now + dropped() >= sent) break;
    last = now;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.gpu) {
    *static_cast<volatile unsigned int*>(stop_flag) = 1;
    if (cudaDeviceSynchronize() != cudaSuccess) die("the GPU consumer failed", 0);
    cudaMemcpy(seen.data(), d_seen, seen_words * 4, cudaMemcpyDeviceToHost);
  } else {
    cpu_stop = true;
    cpu_thread.join();
  }
  uint64_t passed = 0;
  while (recv(passed_sock, buf, sizeof(buf), 0) > 0) ++passed;
  const xdp_statistics st = raw_xsk::stats(x.fd);
  const unsigned long long got = counts->taken;
  const uint64_t drops = st.rx_dropped + st.rx_ring_full;
  // Every corrupted message found, nothing else (with drops: no more than were corrupted)
  const bool every_byte = drops + passed > 0 ? counts->bad <= corrupted : counts->bad == corrupted;
  const bool accounted = sent == got + drops + passed;
  // Each good packet a sequence of its own (none twice) and, with no drop, every one sent.
  uint64_t distinct = 0;
  for (uint32_t w : seen) distinct += static_cast<uint64_t>(__builtin_popcount(w));
  const bool sequences = counts->dupes == 0 && distinct == got - counts->bad && (drops + passed > 0 || distinct + counts->bad == sent);
  const double mpps = secs > 0 ? double(got) / secs / 1e6 : 0;
  char line[1024];
  std::snprintf(line, sizeof(line),
                "{\"consumer\":\"%s\",\"rings_mapped\":true,\"size\":%u,\"window\":%u,\"sent\":%llu,\"send_errors\":%llu,"
                "\"taken\":%llu,\"corrupted\":%llu,\"bad\":%llu,\"passed_to_stack\":%llu,\"rx_dropped\":%llu,\"rx_ring_full\":%llu,"
                "\"rx_fill_ring_empty_descs\":%llu,\"rx_invalid_descs\":%llu,\"held\":%u,\"distinct\":%llu,\"dupes\":%llu,"
                "\"producer_polls\":%llu,"
                "\"seconds\":%.3f,\"mpps\":%.4f,\"accounted\":%s,\"every_byte\":%s,\"sequences\":%s}",
                o.gpu ? "gpu" : "cpu", o.size, o.window, (unsigned long long)sent, (unsigned long long)send_errors, got,
                (unsigned long long)corrupted,
                counts->bad, (unsigned long long)passed, (unsigned long long)st.rx_dropped,
                (unsigned long long)st.rx_ring_full, (unsigned long long)st.rx_fill_ring_empty_descs,
                (unsigned long long)st.rx_invalid_descs, o.hold, (unsigned long long)distinct, counts->dupes, counts->polls, secs, mpps, accounted ? "true" : "false",
                every_byte ? "true" : "false", sequences ? "true" : "false");
  std::printf("%s\n", line);
  if (!o.json.empty()) {
    if (FILE* f = std::fopen(o.json.c_str(), "a")) {
      std::fprintf(f, "%s\n", line);
      std::fclose(f);
    }
  }
  // --hold of the whole ring: exactly the ring's buffers taken, every later packet dropped
  const bool starved = o.hold < kRingSize || got == std::min<uint64_t>(sent, kRingSize);
  return accounted && every_byte && sequences && starved && got > 0 ? 0 : 1;
}
