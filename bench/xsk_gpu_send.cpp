// GPU-driven send against the CPU afxdp sender, same veth, same peer, same run (issue 35,
// docs/gpu-afxdp.md): an afxdp tx queue in namespace B sends to an afxdp rx queue in
// namespace A (a CPU thread counting what arrives) for --seconds; the sender is one of
//   gpu        XskFrameSender, Driver::gpu: a persistent kernel cuts frames in GPU memory into
//              packets, owns the TX and completion rings; a thread kicks sendto (copy mode)
//   cpu_loop   XskFrameSender, Driver::cpu: the same loop on a CPU thread (host frames)
//   afxdp      netdaq's TxQueue on the same queue: allocate, write the sequence and copy the
//              samples from a host frame, send (the CPU afxdp sender)
// Each row: packets posted and received, drops (the peer's queue, B's veth), packets per
// second received, and the CPU time of the sending side per packet: the process's CPU time
// less the peer thread's (copy mode: the kernel's transmit, and the veth delivery it triggers,
// run inside the kicking thread's sendto on every path).
// Checks posted == received + peer drops + veth drops + refused descriptors, and (XskFrameSender)
// posted == completed with no bad completion; exits 1 otherwise.
//   netdaq_bench_xsk_gpu_send [--sizes 1024,1400] [--seconds 2] [--modes gpu,cpu_loop,afxdp] [--json F]
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "afxdp_config.h"
#include "netdaq/gpu.h"
#include "netdaq/gpu_xsk_send.h"
#include "netdaq/netdaq.h"
#include "netns_lab.h"
#include "receiver_cpu.h"
#include "veth_drops.h"

using namespace netdaq;
using Clock = std::chrono::steady_clock;

namespace {

constexpr uint32_t kPerFrame = 64;
constexpr uint32_t kFrames = 64;  // frame buffers the application cycles through
constexpr uint16_t kPort = 47010;

using ndqbench::cpu_seconds;
using ndqbench::split_commas;
using ndqbench::veth_tx_dropped;

// Descriptors the kernel refused (invalid) on B's tx queue.
uint64_t refused(const QueueStats& s) {
  for (const auto& [name, value] : s.engine_counters)
    if (name == "xsk_tx_invalid_descs") return value;
  return 0;
}

struct Row {
  std::string mode;
  uint32_t size = 0;
  uint64_t posted = 0, completed = 0, bad_completions = 0, received = 0, peer_drops = 0, veth_drops = 0, refused = 0,
           kicks = 0;
  double seconds = 0, cpu_s = 0;
  bool ok = false;
};

gpu::XskSendLayout layout(uint32_t size) {
  gpu::XskSendLayout l;
  l.seq_bits = 32;
  l.payload_offset = 8;
  l.payload_size = size - 8;
  l.packets_per_frame = kPerFrame;
  l.frames_in_flight = kFrames;
  l.buffers = 2048;
  return l;
}

Row run(const std::string& mode, uint32_t size, double seconds) {
  ndqtest::NetnsLab lab;
  Row row;
  row.mode = mode;
  row.size = size;
  // The peer: A's afxdp rx queue, polled by one thread that counts.
  ndqtest::AfxdpIface peer;
  peer.dev = lab.a().veth;
  peer.rx_queues = {0};
  peer.flows = {ndqtest::udp_flow(1, 0, kPort)};
  auto rx_session = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(peer.build()); });
  std::atomic<bool> peer_stop{false};
  std::atomic<uint64_t> received{0};
  double peer_cpu = 0;
  std::thread peer_thread([&] {
    RxQueue& q = rx_session->rx_queue("x0", 0);
    const double c0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    uint64_t n = 0;
    while (!peer_stop.load(std::memory_order_relaxed)) n += q.poll().size();
    received = n;
    peer_cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
  });

  ndqtest::AfxdpIface sender;
  sender.dev = lab.b().veth;
  sender.tx_queue = 0;
  sender.destination = "udp://" + lab.a().ip4 + ":" + std::to_string(kPort);
  sender.dst_mac = lab.mac(lab.a());
  sender.num_bufs = 4096;
  Config cfg = sender.build();
  if (mode == "gpu") {
    cfg.memory_regions[0].kind = MemoryKind::mapped;
    cfg.memory_regions[0].gpu = 0;
  }
  auto tx_session = lab.run_in(lab.b().ns, [&] { return std::make_unique<Session>(cfg); });
  const gpu::XskSendLayout l = layout(size);
  std::vector<std::byte> host(l.frame_bytes() * kFrames);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::byte>(i * 13 + 7);
  const uint64_t veth0 = veth_tx_dropped(lab);

  const auto t0 = Clock::now();
  const double p0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
  const auto running = [&] { return Clock::now() - t0 < std::chrono::duration<double>(seconds); };
  if (mode == "afxdp") {
    TxQueue& q = tx_session->tx_queue("x0", 0);
    uint64_t seq = 0;
    while (running()) {
      TxBurst b = q.allocate(64);
      for (Packet& p : b) {
        std::byte* d = p.buffer().data();
        const uint64_t s = seq++;
        for (int k = 0; k < 4; ++k) d[k] = static_cast<std::byte>(s >> (24 - 8 * k));
        std::memset(d + 4, 0, 4);
        std::memcpy(d + 8, host.data() + (s % (kPerFrame * kFrames)) * l.payload_size, l.payload_size);
        p.set_size(size);
      }
      while (b && running()) b.send();
    }
    // Let the queue finish what it posted.
    for (auto end = Clock::now() + std::chrono::milliseconds(300); Clock::now() < end;) (void)q.allocate(0);
    const QueueStats st = q.stats();
    row.posted = st.packets;
    row.completed = st.packets;
    row.refused = refused(st);
  } else {
    const bool on_gpu = mode == "gpu";
    std::shared_ptr<void> frames;
    if (on_gpu) {
      void* d = nullptr;
      if (cudaMalloc(&d, host.size()) != cudaSuccess || cudaMemcpy(d, host.data(), host.size(), cudaMemcpyHostToDevice) != cudaSuccess) {
        std::fprintf(stderr, "cudaMalloc/cudaMemcpy of the frames failed\n");
        std::exit(2);
      }
      frames = std::shared_ptr<void>(d, [](void* p) { (void)cudaFree(p); });
    } else {
      frames = std::shared_ptr<void>(host.data(), [](void*) {});
    }
    gpu::XskFrameSender tx(*tx_session, "x0", 0, l,
                           on_gpu ? gpu::XskFrameSender::Driver::gpu : gpu::XskFrameSender::Driver::cpu);
    uint64_t index = 0;
    while (running()) {
      // Frame buffer index % kFrames is free once the sender has sent the frame queued kFrames before.
      while (index < tx.frames_sent() + kFrames &&
             tx.send(static_cast<const std::byte*>(frames.get()) + (index % kFrames) * l.frame_bytes(), index))
        ++index;
      std::this_thread::sleep_for(std::chrono::microseconds(500));  // frames, not packets: no busy wait
    }
    tx.stop();
    const gpu::XskSendStats st = tx.stats();
    row.posted = st.packets_posted;
    row.completed = st.packets_completed;
    row.bad_completions = st.bad_completions;
    row.kicks = st.kicks;
    row.refused = refused(tx_session->tx_queue("x0", 0).stats());
  }
  row.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the peer takes the last packets
  peer_stop = true;
  peer_thread.join();
  row.cpu_s = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - p0 - peer_cpu;
  row.received = received;
  row.peer_drops = rx_session->rx_queue("x0", 0).stats().total_drops();
  row.veth_drops = veth_tx_dropped(lab) - veth0;
  row.ok = row.posted == row.completed && row.bad_completions == 0 &&
           row.posted == row.received + row.peer_drops + row.veth_drops + row.refused;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes = "1024,1400", modes = "gpu,cpu_loop,afxdp", json;
  double seconds = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--sizes") sizes = v;
    else if (k == "--seconds") seconds = std::stod(v);
    else if (k == "--modes") modes = v;
    else if (k == "--json") json = v;
    else {
      std::fprintf(stderr, "usage: %s [--sizes 1024,1400] [--seconds 2] [--modes gpu,cpu_loop,afxdp] [--json F]\n", argv[0]);
      return 2;
    }
  }
  if (modes.find("gpu") != std::string::npos && gpu::device_count() == 0) {
    std::fprintf(stderr, "no GPU: %s\n", gpu::unavailable_reason().c_str());
    return 1;
  }
  std::vector<Row> rows;
  bool ok = true;
  std::printf("%-9s %6s %10s %10s %9s %9s %8s %10s %12s %s\n", "mode", "size", "posted", "received", "peer_drop",
              "veth_drop", "refused", "Mpps", "cpu_ns/pkt", "check");
  for (const std::string& size : split_commas(sizes))
    for (const std::string& mode : split_commas(modes)) {
      Row r = run(mode, static_cast<uint32_t>(std::stoul(size)), seconds);
      ok = ok && r.ok && r.received > 0;
      std::printf("%-9s %6u %10llu %10llu %9llu %9llu %8llu %10.3f %12.2f %s\n", r.mode.c_str(), r.size,
                  (unsigned long long)r.posted, (unsigned long long)r.received, (unsigned long long)r.peer_drops,
                  (unsigned long long)r.veth_drops, (unsigned long long)r.refused, r.received / r.seconds / 1e6,
                  r.cpu_s * 1e9 / double(r.posted ? r.posted : 1), r.ok ? "ok" : "ACCOUNTING MISMATCH");
      rows.push_back(r);
    }
  if (!json.empty()) {
    nlohmann::json out = {{"bench", "xsk_gpu_send"}, {"rows", nlohmann::json::array()}};
    for (const Row& r : rows)
      out["rows"].push_back({{"mode", r.mode}, {"size", r.size}, {"posted", r.posted}, {"completed", r.completed},
                             {"bad_completions", r.bad_completions}, {"received", r.received},
                             {"peer_drops", r.peer_drops}, {"veth_drops", r.veth_drops}, {"refused", r.refused},
                             {"kicks", r.kicks}, {"seconds", r.seconds}, {"received_mpps", r.received / r.seconds / 1e6},
                             {"cpu_ns_per_packet", r.cpu_s * 1e9 / double(r.posted ? r.posted : 1)},
                             {"accounting_ok", r.ok}});
    std::ofstream(json) << out.dump(1) << "\n";
  }
  return ok ? 0 : 1;
}
