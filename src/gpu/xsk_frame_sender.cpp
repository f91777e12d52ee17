// XskFrameSender: hands an afxdp tx queue's rings to the send loop (xsk_send.cuh) run by a
// persistent kernel or a CPU thread, queues the application's frames to it, and kicks the
// kernel's side of the socket from a thread of its own.
#include "netdaq/gpu_xsk_send.h"

#include <cuda_runtime_api.h>
#include <linux/if_xdp.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/log.h"
#include "gpu/cuda_check.h"
#include "gpu/xsk_send_launch.h"
#include "gpu/xsk_shared_memory.h"
#include "netdaq/gpu.h"
#include "netdaq/session.h"

#ifndef XDP_RING_NEED_WAKEUP
#define XDP_RING_NEED_WAKEUP (1 << 0)
#endif

namespace netdaq::gpu {

using detail::XskSendControl;
using detail::XskSendEntry;
using detail::XskSendParams;

namespace {

using AtomicU32 = std::atomic_ref<uint32_t>;

// Refuses what the loop does not do, naming the field (before the queue's rings are taken).
void validate(const XskSendLayout& l, const std::string& who) {
  auto bad = [&](const std::string& key, const std::string& why) {
    throw Error(Errc::invalid_config, who + ": " + key + ": " + why);
  };
  if (l.seq_bits != 8 && l.seq_bits != 16 && l.seq_bits != 32 && l.seq_bits != 64)
    bad("seq_bits", "8, 16, 32 or 64 (got " + std::to_string(l.seq_bits) + ")");
  if (l.payload_size == 0) bad("payload_size", "required (sample bytes per packet, > 0)");
  if (l.packets_per_frame == 0) bad("packets_per_frame", "required (> 0)");
  if (l.seq_offset + l.seq_bits / 8 > l.payload_offset)
    bad("seq_offset", "the sequence (bytes " + std::to_string(l.seq_offset) + " to " +
                          std::to_string(l.seq_offset + l.seq_bits / 8) + ") must end by payload_offset (" +
                          std::to_string(l.payload_offset) + "): the samples follow it");
  if (l.frames_in_flight == 0 || l.frames_in_flight > 1024) bad("frames_in_flight", "1 to 1024");
  if (l.buffers == 0) bad("buffers", "> 0");
}

}  // namespace

struct XskFrameSender::Impl {
  XskSendLayout layout;
  Driver driver = Driver::gpu;
  std::string who;
  HandedOverTxRings rings;
  XskSendParams params;  // as the driver sees them
  XskSendControl* control = nullptr;
  XskSendEntry* queue = nullptr;
  uint64_t* buffers = nullptr;
  std::unique_ptr<detail::XskSharedMemory> mem;
  cudaStream_t stream = nullptr;
  std::thread cpu_thread, kicker;
  std::atomic<bool> kicking{true};
  std::atomic<uint64_t> kicks{0}, kick_errors{0};
  std::mutex send_mutex;  // send() from any thread
  uint64_t frames_queued = 0;  // its low 32 bits: the ring's producer index
  bool stopped = false;

  ~Impl() {
    if (stream) (void)cudaStreamDestroy(stream);
  }

  void setup() {
    const bool gpu = driver == Driver::gpu;
    XskSendParams& p = params;
    if (gpu) use_device(layout.gpu, who);
    mem = std::make_unique<detail::XskSharedMemory>(gpu, who);
    detail::XskSharedMemory& m = *mem;
    p.umem = m.umem(rings.umem, "the kernel writes each packet into the UMEM");
    m.register_ring(rings.tx, "TX");
    m.register_ring(rings.completion, "completion");
    p.tx_producer = m.on_driver(rings.tx.producer);
    p.tx_consumer = m.on_driver(rings.tx.consumer);
    p.tx_entries = m.on_driver(rings.tx.entries);
    p.tx_mask = rings.tx.size - 1;
    p.comp_producer = m.on_driver(rings.completion.producer);
    p.comp_consumer = m.on_driver(rings.completion.consumer);
    p.comp_entries = m.on_driver(static_cast<const uint64_t*>(rings.completion.entries));
    p.comp_mask = rings.completion.size - 1;
    const size_t n = rings.buffers.size();  // at most what the TX and completion rings hold
    buffers = m.alloc<uint64_t>(n);
    std::copy_n(rings.buffers.begin(), n, buffers);
    p.buffers = m.on_driver(buffers);
    p.nbuffers = static_cast<uint32_t>(n);
    if (rings.headers.size() > detail::kXskMaxHeaderBytes)
      throw Error(Errc::unsupported, who + ": the queue's headers are " + std::to_string(rings.headers.size()) + " bytes");
    std::memcpy(p.headers, rings.headers.data(), rings.headers.size());
    p.header_bytes = static_cast<uint32_t>(rings.headers.size());
    p.seq_offset = layout.seq_offset;
    p.seq_bytes = layout.seq_bits / 8u;
    p.seq_big = layout.seq_byte_order == ByteOrder::big;
    p.payload_offset = layout.payload_offset;
    p.payload_size = layout.payload_size;
    p.packets_per_frame = layout.packets_per_frame;
    // The queue refused a packet that neither fits a buffer nor may span several.
    p.buffer_bytes = rings.buffer_bytes;
    const uint32_t packet = p.header_bytes + layout.udp_payload_bytes();
    p.buffers_per_packet = (packet + p.buffer_bytes - 1) / p.buffer_bytes;
    if (p.buffers_per_packet > p.nbuffers)
      throw Error(Errc::invalid_config, who + ": buffers: a packet of " + std::to_string(packet) + " bytes takes " +
                                            std::to_string(p.buffers_per_packet) + " buffers; the queue gave " +
                                            std::to_string(p.nbuffers));
    const uint32_t ring = std::bit_ceil(layout.frames_in_flight);
    p.ring_mask = ring - 1;
    queue = m.alloc<XskSendEntry>(ring);
    control = m.alloc<XskSendControl>(1);
    p.queue = m.on_driver(queue);
    p.control = m.on_driver(control);
    // No device-wide synchronisation here or later: another persistent kernel (a receiver's)
    // may be running and never ends.
    if (gpu) check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), who + ": cudaStreamCreate");
  }

  void start() {
    if (driver == Driver::gpu) detail::launch_xsk_sender(params, stream);
    else cpu_thread = std::thread([p = params] { detail::run_xsk_sender_on_cpu(p); });
    kicker = std::thread([this] { kick_loop(); });
  }

  // Copy mode transmits only inside sendto(): a call whenever descriptors wait. Zero-copy
  // drivers send by themselves and ask (need_wakeup) only when they sleep. Nothing waits:
  // a sleep of ~50 µs between looks, which costs the CPU one syscall per look.
  void kick_loop() noexcept {
    while (kicking.load(std::memory_order_relaxed)) {
      const uint32_t prod = AtomicU32(*rings.tx.producer).load(std::memory_order_acquire);
      const uint32_t cons = AtomicU32(*rings.tx.consumer).load(std::memory_order_acquire);
      const bool asked = !rings.zero_copy || !rings.need_wakeup ||
                         (AtomicU32(*rings.tx.flags).load(std::memory_order_relaxed) & XDP_RING_NEED_WAKEUP);
      if (prod != cons && asked) {
        kicks.fetch_add(1, std::memory_order_relaxed);
        if (sendto(rings.fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0 && errno != EAGAIN && errno != EBUSY &&
            errno != ENOBUFS)
          kick_errors.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(prod != cons ? 1 : 20));
    }
  }

  bool exited() const noexcept { return AtomicU32(control->exited).load(std::memory_order_acquire) != 0; }

  void stop() noexcept {
    {
      std::lock_guard lock(send_mutex);
      if (stopped) return;
      stopped = true;
    }
    AtomicU32(control->stop).store(1, std::memory_order_release);
    // Queued frames go out and the kernel gives every buffer back; a driver that cannot
    // finish (a link that takes nothing) is told to exit after 10 s.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!exited()) {
      if (std::chrono::steady_clock::now() > deadline) {
        netdaq::detail::log()->error("{}: packets still in flight after 10 s; stopping without them", who);
        AtomicU32(control->stop).store(2, std::memory_order_release);
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (cpu_thread.joinable()) cpu_thread.join();
    if (driver == Driver::gpu) {
      const auto hard = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (!exited() && std::chrono::steady_clock::now() < hard) std::this_thread::sleep_for(std::chrono::microseconds(100));
      if (!exited()) netdaq::detail::log()->error("{}: the GPU kernel did not stop", who);
      else if (const cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
        netdaq::detail::log()->error("{}: the GPU kernel failed: {}", who, describe(e));
    }
    kicking.store(false, std::memory_order_relaxed);
    if (kicker.joinable()) kicker.join();
  }
};

XskFrameSender::XskFrameSender(Session& session, std::string_view interface, uint16_t queue, const XskSendLayout& layout,
                               Driver driver)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.layout = layout;
  m.driver = driver;
  m.who = "xsk frame sender '" + std::string(interface) + "/tx" + std::to_string(queue) + "'";
  validate(layout, m.who);
  if (driver == Driver::gpu) {
    if (device_count() == 0) throw Error(Errc::unsupported, m.who + ": no GPU: " + unavailable_reason());
    detail::require_gpu_reachable_umem(session.config(), interface, false, queue, m.who, "writes each packet into it");
  }
  m.rings = session.tx_queue(interface, queue).hand_over_rings(layout.udp_payload_bytes(), layout.buffers);
  m.setup();
  m.start();
}

XskFrameSender::~XskFrameSender() { stop(); }

bool XskFrameSender::send(const void* data, uint64_t index) noexcept {
  Impl& m = *impl_;
  std::lock_guard lock(m.send_mutex);
  if (m.stopped) return false;
  const uint32_t taken = AtomicU32(m.control->taken).load(std::memory_order_acquire);
  const auto queued = static_cast<uint32_t>(m.frames_queued);
  if (queued - taken > m.params.ring_mask) return false;
  XskSendEntry& e = m.queue[queued & m.params.ring_mask];
  e.index = index;
  e.data = static_cast<const std::byte*>(data);
  ++m.frames_queued;
  AtomicU32(m.control->queued).store(queued + 1, std::memory_order_release);
  return true;
}

uint64_t XskFrameSender::frames_sent() const noexcept {
  return std::atomic_ref<uint64_t>(impl_->control->counters.frames_sent).load(std::memory_order_acquire);
}

void XskFrameSender::stop() noexcept { impl_->stop(); }

XskSendStats XskFrameSender::stats() const noexcept {
  auto get = [](uint64_t& v) { return std::atomic_ref<uint64_t>(v).load(std::memory_order_relaxed); };
  detail::XskSendCounters& c = impl_->control->counters;
  XskSendStats s;
  {
    std::lock_guard lock(impl_->send_mutex);
    s.frames_queued = impl_->frames_queued;
  }
  s.frames_sent = get(c.frames_sent);
  s.packets_posted = get(c.packets_posted);
  s.packets_completed = get(c.packets_completed);
  s.bad_completions = get(c.bad_completions);
  s.batches = get(c.batches);
  s.kicks = impl_->kicks.load(std::memory_order_relaxed);
  s.kick_errors = impl_->kick_errors.load(std::memory_order_relaxed);
  return s;
}

uint64_t XskFrameSender::frame_bytes() const noexcept { return impl_->layout.frame_bytes(); }
XskFrameSender::Driver XskFrameSender::driver() const noexcept { return impl_->driver; }

}  // namespace netdaq::gpu
