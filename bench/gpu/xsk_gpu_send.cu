// Issue 35, item 3's feasibility: a GPU kernel transmits through an AF_XDP socket's TX ring.
//
// The socket is raw_xsk.h's (a namespace's lo, copy mode, need_wakeup). A block of GPU warps
// writes each packet into a UMEM frame (pinned host memory, mapped: Ethernet/IPv4/UDP headers
// from a template, then the sequence and a pattern), posts its TX descriptor and publishes the
// TX producer (system-scope release); it reads the completion ring (system-scope acquire) to
// reuse frames, checking each completion names the frame it expects, in order. The CPU's part:
//   - the kick: copy mode transmits only inside sendto(), so a CPU thread watching two ring
//     indices (TX producer != consumer) and the ring's need_wakeup flag calls
//     sendto(MSG_DONTWAIT); it never reads a descriptor or a payload;
//   - the peer: a UDP socket in the namespace receives the packets (they go up lo's stack:
//     the XDP program passes this port) and checks every byte, publishing how many it has
//     (credits: the GPU stays at most --window packets ahead, so a slow peer never loses any).
// --producer cpu runs the same ring protocol on a CPU thread (the control; no GPU needed).
//
// Accounting, checked: posted == completed, and posted == received + the socket's TX invalid
// descriptors + UDP receive-buffer drops; every received packet's sequence once, every byte
// right.
//   netdaq_xsk_gpu_send [--producer gpu|cpu] [--packets N] [--size B] [--window W]
//                       [--corrupt-every N] [--seconds S] [--json FILE]
// Exit status: 0 every packet accounted for and checked, 1 a check failed, 2 setup failed.
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cuda/atomic>
#include <cuda_runtime.h>

#include "raw_xsk.h"
#include "xsk_gpu_map.h"

namespace {

using raw_xsk::die;
using raw_xsk::kFrameSize;
using raw_xsk::kFrames;
using raw_xsk::kRingSize;
using raw_xsk::Xsk;
constexpr uint32_t kHeaders = 14 + 20 + 8;
constexpr uint16_t kRxPort = 47000;    // the probe's XDP program redirects this one (unused here)
constexpr uint16_t kPeerPort = 47001;  // the peer socket's: passed up the stack
constexpr unsigned kWarps = 8;
constexpr uint32_t kTxBase = kRingSize * kFrameSize;  // TX frames: the UMEM's second half

struct Options {
  bool gpu = true;
  uint64_t packets = 200000;
  uint32_t size = 1024;
  uint32_t window = kRingSize / 2;
  uint64_t corrupt_every = 0;  // packet k with k % N == N - 1 has its last byte wrong: the peer must find it
  double seconds = 20;
  std::string json;
};

// Shared with the GPU (mapped memory): what each side has done.
struct Progress {
  unsigned long long posted;     // TX descriptors published (producer)
  unsigned long long completed;  // completions read back
  unsigned long long received;   // the peer's count (credits)
  unsigned long long bad_completions;  // a completion naming another frame than expected
  unsigned int done;
  unsigned int stop;
};

struct Headers {
  uint8_t bytes[48];  // 42 used
};

__host__ __device__ inline uint8_t pattern(uint64_t seq, uint32_t i) { return uint8_t(seq * 7 + i); }

// Byte i of packet seq's frame of len bytes (headers, then the sequence, then the pattern;
// the last byte flipped in every corrupt_every-th packet).
__host__ __device__ inline uint8_t frame_byte(const Headers& h, uint64_t seq, uint32_t i, uint32_t len,
                                              uint64_t corrupt_every) {
  if (i < kHeaders) return h.bytes[i];
  if (i < kHeaders + 8) return uint8_t(seq >> (8 * (i - kHeaders)));
  const bool flip = corrupt_every && i == len - 1 && seq % corrupt_every == corrupt_every - 1;
  return pattern(seq, i - kHeaders - 8) ^ (flip ? 0x5a : 0);
}

uint16_t ip_checksum(const uint8_t* p, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < n; i += 2) sum += uint32_t(p[i]) << 8 | p[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// 127.0.0.1:47002 -> 127.0.0.1:kPeerPort, Ethernet addresses lo's (zero), UDP checksum 0.
Headers make_headers(uint32_t size) {
  Headers h{};
  uint8_t* e = h.bytes;
  e[12] = 0x08;  // IPv4
  uint8_t* ip = e + 14;
  const uint16_t total = static_cast<uint16_t>(20 + 8 + size);
  ip[0] = 0x45;
  ip[2] = total >> 8, ip[3] = total & 0xff;
  ip[6] = 0x40;  // DF
  ip[8] = 64, ip[9] = IPPROTO_UDP;
  ip[12] = 127, ip[15] = 1, ip[16] = 127, ip[19] = 1;
  const uint16_t c = ip_checksum(ip, 20);
  ip[10] = c >> 8, ip[11] = c & 0xff;
  uint8_t* udp = ip + 20;
  udp[0] = 47002 >> 8, udp[1] = 47002 & 0xff;
  udp[2] = kPeerPort >> 8, udp[3] = kPeerPort & 0xff;
  udp[4] = (8 + size) >> 8, udp[5] = (8 + size) & 0xff;
  return h;
}

// The GPU producer: thread 0 decides how many packets may go (frames free: completions; the
// peer's credits), each warp writes every W-th of them as 16-byte words, then thread 0
// publishes the TX producer and reads the completion ring.
__global__ void gpu_sender(uint32_t* tx_prod, xdp_desc* tx_desc, uint32_t* comp_prod, uint32_t* comp_cons,
                           const uint64_t* comp_desc, uint8_t* umem, Headers h, uint32_t size, uint64_t packets,
                           uint32_t window, uint64_t corrupt_every, Progress* pr, unsigned long long limit_ns) {
  const unsigned warp = threadIdx.x / 32, warps = blockDim.x / 32, lane = threadIdx.x & 31;
  cuda::atomic_ref<uint32_t, cuda::thread_scope_system> prod(*tx_prod), cprod(*comp_prod), ccons(*comp_cons);
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> received(pr->received), posted_ref(pr->posted),
      completed_ref(pr->completed);
  cuda::atomic_ref<unsigned int, cuda::thread_scope_system> stop(pr->stop);
  __shared__ unsigned long long s_first, s_n;
  __shared__ int s_quit;
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  unsigned long long posted = 0, completed = 0, bad = 0;
  const uint32_t len = kHeaders + size, words = (len + 15) / 16;
  for (;;) {
    if (threadIdx.x == 0) {
      // Completions first: frames come back in the order they went.
      const uint32_t cp = cprod.load(cuda::memory_order_acquire);
      for (uint32_t c = static_cast<uint32_t>(completed); c != cp; ++c, ++completed)
        if (comp_desc[c & (kRingSize - 1)] != kTxBase + (completed % kRingSize) * kFrameSize) ++bad;
      ccons.store(static_cast<uint32_t>(completed), cuda::memory_order_release);
      completed_ref.store(completed, cuda::memory_order_release);
      const unsigned long long got = received.load(cuda::memory_order_acquire);
      unsigned long long n = packets - posted;
      n = min(n, kRingSize - (posted - completed));  // frames (and TX slots) free
      n = min(n, got + window > posted ? got + window - posted : 0ull);
      s_first = posted;
      s_n = n;
      unsigned long long now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      s_quit = stop.load(cuda::memory_order_relaxed) || now - t0 > limit_ns || (posted == packets && completed == packets);
    }
    __syncthreads();
    if (s_quit) break;
    const unsigned long long first = s_first, n = s_n;
    for (unsigned long long j = warp; j < n; j += warps) {
      const unsigned long long seq = first + j;
      const uint32_t frame = kTxBase + static_cast<uint32_t>(seq % kRingSize) * kFrameSize;
      uint4* dst = reinterpret_cast<uint4*>(umem + frame);
      for (uint32_t w = lane; w < words; w += 32) {
        uint8_t b[16];
        for (int k = 0; k < 16; ++k) b[k] = 16 * w + k < len ? frame_byte(h, seq, 16 * w + k, len, corrupt_every) : 0;
        uint4 v;
        memcpy(&v, b, 16);
        dst[w] = v;
      }
      if (lane == 0) tx_desc[seq & (kRingSize - 1)] = xdp_desc{frame, len, 0};
    }
    __threadfence_system();  // frames and descriptors out before the producer moves
    __syncthreads();
    if (threadIdx.x == 0 && n) {
      posted += n;
      prod.store(static_cast<uint32_t>(posted), cuda::memory_order_release);
      posted_ref.store(posted, cuda::memory_order_release);
    }
  }
  if (threadIdx.x == 0) {
    pr->bad_completions = bad;
    cuda::atomic_ref<unsigned int, cuda::thread_scope_system>(pr->done).store(1, cuda::memory_order_release);
  }
}

// The same protocol on a CPU thread (the control).
void cpu_sender(Xsk& x, const Headers& h, uint32_t size, uint64_t packets, uint32_t window, uint64_t corrupt_every,
                Progress* pr, double seconds) {
  std::atomic_ref<uint32_t> prod(*x.tx.producer), cprod(*x.comp.producer), ccons(*x.comp.consumer);
  std::atomic_ref<unsigned long long> received(pr->received), posted_ref(pr->posted), completed_ref(pr->completed);
  auto* tx_desc = static_cast<xdp_desc*>(x.tx.desc);
  const auto* comp_desc = static_cast<const uint64_t*>(x.comp.desc);
  const uint32_t len = kHeaders + size;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  unsigned long long posted = 0, completed = 0;
  while (!(posted == packets && completed == packets) && std::chrono::steady_clock::now() < end &&
         !std::atomic_ref<unsigned int>(pr->stop).load()) {
    const uint32_t cp = cprod.load(std::memory_order_acquire);
    for (uint32_t c = static_cast<uint32_t>(completed); c != cp; ++c, ++completed)
      if (comp_desc[c & (kRingSize - 1)] != kTxBase + (completed % kRingSize) * kFrameSize) ++pr->bad_completions;
    ccons.store(static_cast<uint32_t>(completed), std::memory_order_release);
    completed_ref.store(completed, std::memory_order_release);
    const unsigned long long got = received.load(std::memory_order_acquire);
    unsigned long long n = std::min<unsigned long long>(packets - posted, kRingSize - (posted - completed));
    n = std::min(n, got + window > posted ? got + window - posted : 0ull);
    for (unsigned long long j = 0; j < n; ++j) {
      const unsigned long long seq = posted + j;
      const uint32_t frame = kTxBase + static_cast<uint32_t>(seq % kRingSize) * kFrameSize;
      for (uint32_t i = 0; i < len; ++i) x.umem[frame + i] = frame_byte(h, seq, i, len, corrupt_every);
      tx_desc[seq & (kRingSize - 1)] = xdp_desc{frame, len, 0};
    }
    if (n) {
      posted += n;
      prod.store(static_cast<uint32_t>(posted), std::memory_order_release);
      posted_ref.store(posted, std::memory_order_release);
    }
  }
  std::atomic_ref<unsigned int>(pr->done).store(1, std::memory_order_release);
}

// The peer: every datagram to kPeerPort checked (size, sequence, every byte), counted.
struct PeerResult {
  unsigned long long received = 0, bad = 0, dupes = 0;
  std::vector<uint32_t> seen;
};

void peer(int fd, uint32_t size, uint64_t packets, Progress* pr, const std::atomic<bool>& stop, PeerResult& r) {
  std::atomic_ref<unsigned long long> credits(pr->received);
  r.seen.assign((packets + 31) / 32, 0);
  constexpr int kBatch = 64;
  static uint8_t bufs[kBatch][kFrameSize];
  mmsghdr msgs[kBatch];
  iovec iov[kBatch];
  for (;;) {
    for (int i = 0; i < kBatch; ++i) {
      iov[i] = {bufs[i], kFrameSize};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const int got = recvmmsg(fd, msgs, kBatch, MSG_DONTWAIT, nullptr);
    if (got <= 0) {
      if (stop.load(std::memory_order_relaxed)) return;
      continue;
    }
    for (int i = 0; i < got; ++i) {
      const uint8_t* p = bufs[i];
      uint64_t seq = 0;
      bool ok = msgs[i].msg_len == size;
      if (ok) {
        std::memcpy(&seq, p, 8);
        ok = seq < packets;
        for (uint32_t k = 0; ok && k < size - 8; ++k) ok = p[8 + k] == pattern(seq, k);
      }
      ++r.received;
      if (!ok) ++r.bad;
      else if (r.seen[seq / 32] & (1u << (seq % 32))) ++r.dupes;
      else r.seen[seq / 32] |= 1u << (seq % 32);
    }
    credits.store(r.received, std::memory_order_release);
  }
}

uint64_t udp_rcvbuf_errors() {  // this namespace's (the probe's own)
  std::ifstream f("/proc/net/snmp");
  std::string names, values;
  while (std::getline(f, names) && std::getline(f, values)) {
    if (names.rfind("Udp:", 0) != 0) continue;
    std::istringstream n(names), v(values);
    std::string name, value;
    while (n >> name && v >> value)
      if (name == "RcvbufErrors") return std::stoull(value);
  }
  return 0;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return raw_xsk::option_value(argc, argv, i); };
    if (a == "--producer") o.gpu = std::string(next()) == "gpu";
    else if (a == "--packets") o.packets = std::strtoull(next(), nullptr, 10);
    else if (a == "--size") o.size = static_cast<uint32_t>(std::strtoul(next(), nullptr, 10));
    else if (a == "--window") o.window = static_cast<uint32_t>(std::strtoul(next(), nullptr, 10));
    else if (a == "--corrupt-every") o.corrupt_every = std::strtoull(next(), nullptr, 10);
    else if (a == "--seconds") o.seconds = std::strtod(next(), nullptr);
    else if (a == "--json") o.json = next();
    else {
      std::fprintf(stderr, "usage: %s [--producer gpu|cpu] [--packets N] [--size B] [--window W] [--corrupt-every N] [--seconds S] [--json FILE]\n", argv[0]);
      std::exit(2);
    }
  }
  if (o.size < 8 || kHeaders + o.size > kFrameSize || o.packets == 0 || o.window == 0) {
    std::fprintf(stderr, "xsk_gpu_send: --size 8..%u, --packets > 0, --window > 0\n", kFrameSize - kHeaders);
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const int ifindex = raw_xsk::own_loopback();
  const size_t umem_len = size_t(kFrames) * kFrameSize;
  uint8_t* umem = nullptr;
  Progress* pr = nullptr;
  if (o.gpu) {
    if (cudaHostAlloc(reinterpret_cast<void**>(&umem), umem_len, cudaHostAllocMapped) != cudaSuccess) die("cudaHostAlloc(UMEM)", 0);
    if (cudaHostAlloc(reinterpret_cast<void**>(&pr), sizeof(Progress), cudaHostAllocMapped) != cudaSuccess) die("cudaHostAlloc", 0);
  } else {
    umem = static_cast<uint8_t*>(std::aligned_alloc(4096, umem_len));
    pr = new Progress;
  }
  std::memset(umem, 0, umem_len);
  std::memset(pr, 0, sizeof(Progress));
  Xsk x = raw_xsk::open_xsk(ifindex, umem);
  raw_xsk::attach(ifindex, x.fd, kRxPort);

  const int peer_fd = socket(AF_INET, SOCK_DGRAM, 0);
  const int rcvbuf = 64 << 20;
  setsockopt(peer_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(kPeerPort);
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(peer_fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) != 0) die("bind the peer");
  std::atomic<bool> peer_stop{false};
  PeerResult pres;
  std::thread peer_thread(peer, peer_fd, o.size, o.packets, pr, std::cref(peer_stop), std::ref(pres));

  const Headers h = make_headers(o.size);
  const auto t0 = std::chrono::steady_clock::now();
  std::thread cpu_thread;
  if (o.gpu) {
    raw_xsk::GpuRing tx, comp;
    std::string map_error;
    if (!raw_xsk::map_for_gpu("TX ring", x.tx, &tx, &map_error) ||
        !raw_xsk::map_for_gpu("completion ring", x.comp, &comp, &map_error)) {
      std::printf("{\"producer\":\"gpu\",\"rings_mapped\":false,\"error\":\"%s\"}\n", map_error.c_str());
      return 2;
    }
    void *d_umem = nullptr, *d_pr = nullptr;
    cudaHostGetDevicePointer(&d_umem, umem, 0);
    cudaHostGetDevicePointer(&d_pr, pr, 0);
    gpu_sender<<<1, 32 * kWarps>>>(tx.producer, static_cast<xdp_desc*>(tx.desc), comp.producer, comp.consumer,
                                   static_cast<const uint64_t*>(comp.desc), static_cast<uint8_t*>(d_umem),
                                   h, o.size, o.packets, o.window, o.corrupt_every, static_cast<Progress*>(d_pr),
                                   static_cast<unsigned long long>((o.seconds + 5) * 1e9));
    if (cudaGetLastError() != cudaSuccess) die("launch", 0);
  } else {
    cpu_thread = std::thread(cpu_sender, std::ref(x), std::cref(h), o.size, o.packets, o.window, o.corrupt_every, pr,
                             o.seconds + 5);
  }

  // The kick: ring indices and the need_wakeup flag only.
  std::atomic_ref<uint32_t> tx_prod(*x.tx.producer), tx_cons(*x.tx.consumer), tx_flags(*x.tx.flags);
  std::atomic_ref<unsigned int> done(pr->done);
  uint64_t kicks = 0, kick_errors = 0;
  const auto end = t0 + std::chrono::duration<double>(o.seconds);
  while (!done.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() > end) {
      std::atomic_ref<unsigned int>(pr->stop).store(1);
      break;
    }
    if (tx_prod.load(std::memory_order_acquire) != tx_cons.load(std::memory_order_acquire) &&
        (tx_flags.load(std::memory_order_acquire) & XDP_RING_NEED_WAKEUP)) {
      ++kicks;
      if (sendto(x.fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0 && errno != EAGAIN && errno != EBUSY &&
          errno != ENOBUFS)
        ++kick_errors;
    }
  }
  if (o.gpu) {
    if (cudaDeviceSynchronize() != cudaSuccess) die("the GPU sender failed", 0);
  } else {
    cpu_thread.join();
  }
  // The peer has everything once its count stops moving.
  for (unsigned long long last = ~0ull;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const unsigned long long now = std::atomic_ref<unsigned long long>(pr->received).load();
    if (now == last || now >= pr->posted) break;
    last = now;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  peer_stop = true;
  peer_thread.join();

  const xdp_statistics st = raw_xsk::stats(x.fd);
  const uint64_t rcvbuf_drops = udp_rcvbuf_errors();
  uint64_t distinct = 0;
  for (uint32_t w : pres.seen) distinct += static_cast<uint64_t>(__builtin_popcount(w));
  const bool completions = pr->posted == pr->completed && pr->bad_completions == 0;
  const bool accounted = pr->posted == pres.received + st.tx_invalid_descs + rcvbuf_drops;
  // The peer finds exactly the corrupted packets (one per corrupt_every posted), nothing else
  const uint64_t corrupted = o.corrupt_every ? pr->posted / o.corrupt_every : 0;
  const bool every_byte = pres.bad == corrupted && pres.dupes == 0 && distinct + pres.bad == pres.received;
  const bool all = pr->posted == o.packets;
  char line[1024];
  std::snprintf(line, sizeof(line),
                "{\"producer\":\"%s\",\"rings_mapped\":true,\"size\":%u,\"window\":%u,\"posted\":%llu,\"completed\":%llu,"
                "\"bad_completions\":%llu,\"received\":%llu,\"corrupted\":%llu,\"bad\":%llu,\"dupes\":%llu,\"tx_invalid_descs\":%llu,"
                "\"udp_rcvbuf_errors\":%llu,\"kicks\":%llu,\"kick_errors\":%llu,\"seconds\":%.3f,\"mpps\":%.4f,"
                "\"completions\":%s,\"accounted\":%s,\"every_byte\":%s,\"all_posted\":%s}",
                o.gpu ? "gpu" : "cpu", o.size, o.window, pr->posted, pr->completed, pr->bad_completions, pres.received,
                (unsigned long long)corrupted,
                pres.bad, pres.dupes, (unsigned long long)st.tx_invalid_descs, (unsigned long long)rcvbuf_drops,
                (unsigned long long)kicks, (unsigned long long)kick_errors, secs,
                secs > 0 ? double(pres.received) / secs / 1e6 : 0, completions ? "true" : "false",
                accounted ? "true" : "false", every_byte ? "true" : "false", all ? "true" : "false");
  std::printf("%s\n", line);
  if (!o.json.empty())
    if (FILE* f = std::fopen(o.json.c_str(), "a")) {
      std::fprintf(f, "%s\n", line);
      std::fclose(f);
    }
  return completions && accounted && every_byte && all && kick_errors == 0 ? 0 : 1;
}
