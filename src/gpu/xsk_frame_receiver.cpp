// XskFrameReceiver: hands an afxdp queue's rings to the receive loop (xsk_receive.cuh) run by
// a persistent kernel or a CPU thread, and hands its published frames to the application.
#include "netdaq/gpu_xsk.h"

#include <cuda_runtime_api.h>
#include <linux/if_xdp.h>
#include <sys/socket.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/config_limits.h"
#include "core/log.h"
#include "core/rings_launch.h"
#include "gpu/cuda_check.h"
#include "gpu/xsk_receive_launch.h"
#include "gpu/xsk_shared_memory.h"
#include "netdaq/session.h"
#include "netdaq/config.h"

#ifndef XDP_RING_NEED_WAKEUP
#define XDP_RING_NEED_WAKEUP (1 << 0)
#endif

namespace netdaq::gpu {

using detail::XskControl;
using detail::XskDoneEntry;
using detail::XskParams;

namespace {

using AtomicU32 = std::atomic_ref<uint32_t>;

// Refuses what the loop does not do, naming the key (before the queue's rings are taken).
void validate(const ReorderConfig& c, const std::string& who) {
  auto bad = [&](const std::string& key, const std::string& why) {
    throw Error(Errc::invalid_config, who + ": rx.reorder." + key + ": " + why);
  };
  if (const auto p = netdaq::detail::rings_launch_problem(c)) bad(p->key, p->value + ": " + p->why);
  if (c.seq_bits != 8 && c.seq_bits != 16 && c.seq_bits != 32 && c.seq_bits != 64) bad("seq_bits", "8, 16, 32 or 64");
  if (c.payload_size == 0) bad("payload_size", "required (sample bytes per packet, > 0)");
  if (c.packets_per_frame == 0) bad("packets_per_frame", "required (> 0)");
}
static_assert(detail::kXskMaxOpen == netdaq::detail::kRingsMaxOpenFrames &&
              detail::kXskMaxBuffers == netdaq::detail::kRingsMaxFrameBuffers);

}  // namespace

struct XskFrameReceiver::Impl {
  ReorderConfig cfg;
  Driver driver = Driver::gpu;
  std::string who;
  HandedOverRings rings;
  XskParams params;           // as the driver sees them
  // Host views of what the driver writes.
  XskControl* control = nullptr;
  XskDoneEntry* done = nullptr;
  uint32_t* free_ring = nullptr;
  uint64_t* missing = nullptr;
  std::byte* frames = nullptr;  // device (gpu) or host (cpu) memory
  uint32_t done_cons = 0;
  uint32_t free_prod = 0;
  std::mutex release_mutex;     // frames may be released on any thread (once per frame)
  std::unique_ptr<detail::XskSharedMemory> mem;
  cudaStream_t stream = nullptr;
  std::thread cpu_thread;
  bool stopped = false;
  uint64_t wakeups = 0;
  std::chrono::steady_clock::time_point last_kick{};

  ~Impl() {
    if (stream) (void)cudaStreamDestroy(stream);
  }

  void setup() {
    const bool gpu = driver == Driver::gpu;
    if (!std::has_single_bit(rings.chunk)) throw Error(Errc::unsupported, who + ": the UMEM's chunk size is not a power of two");
    XskParams& p = params;
    if (gpu) use_device(cfg.gpu, who);
    mem = std::make_unique<detail::XskSharedMemory>(gpu, who);
    detail::XskSharedMemory& m = *mem;
    p.umem = m.umem(rings.umem, "the kernel reads each packet from the UMEM");
    m.register_ring(rings.rx, "RX");
    m.register_ring(rings.fill, "fill");
    p.rx_producer = m.on_driver(rings.rx.producer);
    p.rx_consumer = m.on_driver(rings.rx.consumer);
    p.rx_entries = m.on_driver(static_cast<const xdp_desc*>(rings.rx.entries));
    p.rx_mask = rings.rx.size - 1;
    p.fill_producer = m.on_driver(rings.fill.producer);
    p.fill_entries = m.on_driver(static_cast<uint64_t*>(rings.fill.entries));
    p.fill_mask = rings.fill.size - 1;
    p.chunk = rings.chunk;
    p.seq_offset = cfg.seq_offset;
    p.seq_bytes = cfg.seq_bits / 8u;
    p.seq_big = cfg.seq_byte_order == ByteOrder::big;
    p.payload_offset = cfg.payload_offset;
    p.payload_size = cfg.payload_size;
    p.packets_per_frame = cfg.packets_per_frame;
    p.max_open = cfg.max_open_frames;
    p.timeout_ns = uint64_t{cfg.frame_timeout_us ? cfg.frame_timeout_us : kFrameTimeoutUs} * 1000;
    p.buffers = cfg.frame_buffers;
    p.frame_bytes = uint64_t{cfg.packets_per_frame} * cfg.payload_size;
    p.words = (cfg.packets_per_frame + 63) / 64;
    const uint32_t ring = std::bit_ceil(cfg.frame_buffers);
    p.ring_mask = ring - 1;

    control = m.alloc<XskControl>(1);
    done = m.alloc<XskDoneEntry>(ring);
    free_ring = m.alloc<uint32_t>(ring);
    missing = m.alloc<uint64_t>(size_t{p.buffers} * p.words);
    p.control = m.on_driver(control);
    p.done = m.on_driver(done);
    p.free_ring = m.on_driver(free_ring);
    p.missing_out = m.on_driver(missing);
    const size_t frame_total = size_t{p.buffers} * p.frame_bytes;
    const size_t present_total = size_t{p.buffers} * p.words * sizeof(uint64_t);
    if (gpu) {
      void* f = m.device_alloc(frame_total, "frames");
      void* pr = m.device_alloc(present_total, "present bitmaps");
      frames = static_cast<std::byte*>(f);
      p.present = static_cast<uint64_t*>(pr);
      // Ordered before the kernel by its stream: no device-wide synchronisation, which would
      // wait forever for another persistent kernel (a sender's) that is running.
      check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), who + ": cudaStreamCreate");
      check(cudaMemsetAsync(pr, 0, present_total, stream), who + ": cudaMemsetAsync");
    } else {
      frames = m.alloc<std::byte>(frame_total);
      p.present = m.alloc<uint64_t>(size_t{p.buffers} * p.words);
    }
    p.frames = frames;
  }

  void start() {
    if (driver == Driver::gpu) detail::launch_xsk_receiver(params, stream);
    else cpu_thread = std::thread([p = params] { detail::run_xsk_receiver_on_cpu(p); });
  }

  // The kernel's side of the socket asked for a kick (need_wakeup), at most every 20 µs.
  void kick() noexcept {
    if (!rings.need_wakeup) return;
    if (!(AtomicU32(*rings.fill.flags).load(std::memory_order_relaxed) & XDP_RING_NEED_WAKEUP)) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_kick < std::chrono::microseconds(20)) return;
    last_kick = now;
    recvfrom(rings.fd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
    ++wakeups;
  }

  void stop() noexcept {
    if (stopped) return;
    stopped = true;
    AtomicU32(control->stop).store(1, std::memory_order_release);
    if (driver == Driver::cpu) {
      if (cpu_thread.joinable()) cpu_thread.join();
      return;
    }
    // The kernel drains the ring first; a sender still sending keeps it busy, so wait a while.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!AtomicU32(control->exited).load(std::memory_order_acquire)) {
      kick();
      if (std::chrono::steady_clock::now() > deadline) {
        netdaq::detail::log()->error("{}: the GPU kernel did not stop within 10 s", who);
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (const cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
      netdaq::detail::log()->error("{}: the GPU kernel failed: {}", who, describe(e));
  }
};

XskFrameReceiver::XskFrameReceiver(Session& session, std::string_view interface, const ReorderConfig& cfg, Driver driver)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.cfg = cfg;
  m.driver = driver;
  if (m.cfg.name.empty()) m.cfg.name = std::string(interface) + "/reorder" + std::to_string(cfg.queue);
  m.who = "xsk frame receiver '" + m.cfg.name + "'";
  validate(m.cfg, m.who);
  if (driver == Driver::gpu) {
    if (device_count() == 0) throw Error(Errc::unsupported, m.who + ": no GPU: " + unavailable_reason());
    detail::require_gpu_reachable_umem(session.config(), interface, true, cfg.queue, m.who, "reads each packet from it");
  }
  m.rings = session.rx_queue(interface, cfg.queue).hand_over_rings();
  m.setup();
  m.start();
}

XskFrameReceiver::~XskFrameReceiver() { stop(); }

Frame XskFrameReceiver::next_frame() noexcept {
  Impl& m = *impl_;
  m.kick();
  const uint32_t prod = AtomicU32(m.control->done_prod).load(std::memory_order_acquire);
  if (prod == m.done_cons) return {};
  const XskDoneEntry e = m.done[m.done_cons++ & m.params.ring_mask];
  Frame f;
  f.owner_ = this;
  f.buffer_ = e.buffer;
  f.data_ = m.frames + uint64_t{e.buffer} * m.params.frame_bytes;
  f.info_.index = e.index;
  f.info_.bytes = m.params.frame_bytes;
  f.info_.bytes_expected = m.params.frame_bytes;
  f.info_.bytes_received = uint64_t{e.received} * m.params.payload_size;
  f.info_.expected = m.params.packets_per_frame;
  f.info_.received = e.received;
  f.info_.granule = m.params.payload_size;
  f.missing_ = {m.missing + uint64_t{e.buffer} * m.params.words, m.params.words};
  return f;
}

void XskFrameReceiver::release_frame(uint32_t buffer) noexcept {
  Impl& m = *impl_;
  std::lock_guard lock(m.release_mutex);
  m.free_ring[m.free_prod++ & m.params.ring_mask] = buffer;
  AtomicU32(m.control->free_prod).store(m.free_prod, std::memory_order_release);
}

void XskFrameReceiver::stop() noexcept { impl_->stop(); }

PipelineStats XskFrameReceiver::stats() const noexcept {
  auto get = [](uint64_t& v) { return std::atomic_ref<uint64_t>(v).load(std::memory_order_relaxed); };
  detail::XskCounters& c = impl_->control->counters;
  PipelineStats s;
  s.packets_in = get(c.packets_in);
  s.packets_placed = get(c.packets_placed);
  s.duplicate = get(c.duplicate);
  s.late = get(c.late);
  s.malformed = get(c.malformed);
  s.no_buffer = get(c.no_buffer);
  s.frames_complete = get(c.frames_complete);
  s.frames_incomplete = get(c.frames_incomplete);
  s.frames_skipped = get(c.frames_skipped);
  s.frames_dropped = get(c.frames_dropped);
  s.packets_missing = get(c.packets_missing);
  s.bytes_to_gpu = impl_->driver == Driver::gpu ? s.packets_placed * impl_->params.payload_size : 0;
  s.jobs = get(c.batches);
  return s;
}

uint64_t XskFrameReceiver::wakeups() const noexcept { return impl_->wakeups; }
size_t XskFrameReceiver::frame_bytes() const noexcept { return impl_->params.frame_bytes; }
XskFrameReceiver::Driver XskFrameReceiver::driver() const noexcept { return impl_->driver; }

}  // namespace netdaq::gpu
