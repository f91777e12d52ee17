// GPU-driven receive against the CPU-driven path, same veth, same sender, same run
// (issue 35, docs/gpu-afxdp.md): UDP senders in namespace B (sendmmsg; --senders threads, one
// sequence shared in batches of 32) flood an
// afxdp rx queue in namespace A for --seconds; the receiver is one of
//   gpu        XskFrameReceiver, Driver::gpu: a persistent kernel owns the RX and fill rings
//   cpu_loop   XskFrameReceiver, Driver::cpu: the same loop on a CPU thread (host frames)
//   pipeline   the queue polled by a CPU thread, bursts into FramePipeline (launch persistent)
// Each row: packets sent, placed, kernel drops, placed per second, the CPU time of every
// receiving thread (the application's thread, which takes frames every --poll-us, plus the
// driver's thread for cpu_loop / the polling thread for pipeline) per placed packet (cpu_ns:
// the whole row with setup, stop and drain; steady_ns: only while acquiring), the
// latency from the send of a frame's last packet to the application holding the frame (p50,
// p99: complete frames; it includes the application's poll interval), and the GPU the
// receiver holds (SMs with a resident block of it, of the device's). The application thread's
// share while acquiring has no per-packet term: cpu_us/s = looks/s x look_us, each look its
// sleep's wakeup (idle_look: the same sleep taking nothing, measured after the row) plus the
// frames it takes.
// Checks sent == taken + kernel drops + veth drops (the sender's veth, its peer's ring full)
// and taken == placed + counted fates; exits 1 otherwise.
// Sizes are UDP payloads; above 1472 bytes the veth pair runs at MTU 9000 and a packet spans
// several 4096-byte AF_XDP buffers (multi-buffer). The CPU-polled FramePipeline places packets
// of one buffer (3,798 payload bytes): its row is left out above that (the cpu_loop row, the
// same loop on a CPU thread, is the CPU-driven figure there).
//   netdaq_bench_xsk_gpu_receive [--sizes 1024,1400] [--seconds 2] [--modes gpu,cpu_loop,pipeline]
//                                [--poll-us 200,10000] [--frame-packets 64] [--senders 1] [--json F]
// --poll-us: the application's sleep between looks for frames (gpu and cpu_loop rows; one row
// each): short for latency, long for the least CPU.
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "afxdp_config.h"
#include "netdaq/gpu.h"
#include "netdaq/gpu_xsk.h"
#include "netdaq/netdaq.h"
#include "netns_lab.h"
#include "receiver_cpu.h"
#include "veth_drops.h"

using namespace netdaq;
using Clock = std::chrono::steady_clock;

namespace {

double thread_cpu_s() { return ndqbench::cpu_seconds(CLOCK_THREAD_CPUTIME_ID); }
using ndqbench::split_commas;

uint32_t per_frame = 64;  // --frame-packets
unsigned senders = 1;     // --senders
constexpr size_t kStamps = 4096;
// When each frame's last packet was sent (ns, steady clock), by frame index % kStamps.
std::array<std::atomic<uint64_t>, kStamps> last_sent{};

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

// Latency of frame `index` (complete frames only), into `out`.
void record_latency(const gpu::FrameInfo& info, std::vector<double>& out) {
  if (info.received != info.expected) return;
  const uint64_t sent = last_sent[info.index % kStamps].load(std::memory_order_relaxed);
  const uint64_t now = now_ns();
  if (sent && now > sent && out.size() < out.capacity()) out.push_back(double(now - sent) * 1e-3);
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * double(v.size())))];
}

struct Row {
  std::string mode;
  uint32_t size = 0;
  uint32_t poll_us = 0, frame_packets = 0;
  double p50_us = 0, p99_us = 0;
  uint64_t latencies = 0;
  int gpu_sms = 0, device_sms = 0;
  uint64_t sent = 0, taken = 0, placed = 0, kernel_drops = 0, other_fates = 0;
  uint64_t veth_drops = 0;  // dropped by the sender's veth (the peer's ring full): never reached the queue
  double seconds = 0, cpu_s = 0;
  double steady_ns = 0;  // CPU ns per packet placed while acquiring (without setup, stop and drain)
  // While acquiring: the application thread's CPU per second, its looks for frames, and the
  // CPU of one look (with the frames it took).
  double steady_us_per_s = 0, looks = 0, look_us = 0;
  double idle_look_us = 0;  // the CPU of one look that finds nothing (the sleep's wakeup alone), same thread
  bool ok = false;
};

// Sends size-byte payloads (sequence at byte 0, big endian) to ip:port until `stop`, 32 at a
// time, each batch's sequences taken from `next` (shared by the senders); returns packets sent.
uint64_t flood(int fd, const std::string& ip, uint16_t port, uint32_t size, std::atomic<uint64_t>& next,
               const std::atomic<bool>& stop) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &to.sin_addr);
  constexpr int kBatch = 32;
  std::vector<std::vector<unsigned char>> bufs(kBatch, std::vector<unsigned char>(size, 0x5a));
  mmsghdr msgs[kBatch]{};
  iovec iov[kBatch]{};
  uint64_t sent = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    const uint64_t seq = next.fetch_add(kBatch, std::memory_order_relaxed);
    for (int i = 0; i < kBatch; ++i) {
      const uint64_t s = seq + i;
      for (int k = 0; k < 4; ++k) bufs[i][k] = static_cast<unsigned char>(s >> (24 - 8 * k));
      iov[i] = {bufs[i].data(), size};
      msgs[i].msg_hdr = {};
      msgs[i].msg_hdr.msg_name = &to;
      msgs[i].msg_hdr.msg_namelen = sizeof to;
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const int n = sendmmsg(fd, msgs, kBatch, 0);
    if (n > 0) {  // (a batch cut short leaves its last sequences missing: never sent, never counted)
      const uint64_t t = now_ns();
      for (uint64_t s = seq; s < seq + uint64_t(n); ++s)
        if (s % per_frame == per_frame - 1) last_sent[(s / per_frame) % kStamps].store(t, std::memory_order_relaxed);
      sent += n;
    }
  }
  return sent;
}

ReorderConfig reorder(uint32_t size, LaunchMode launch) {
  ReorderConfig r;
  r.name = "bench";
  r.seq_bits = 32;
  r.payload_offset = 8;
  r.payload_size = size - 8;
  r.packets_per_frame = per_frame;
  r.max_open_frames = 4;
  r.frame_buffers = 256;  // 16,384 packets: a 10 ms poll interval at 1 Mpps
  r.launch = launch;
  return r;
}

Row run(const std::string& mode, uint32_t size, double seconds, uint32_t poll_us) {
  ndqtest::NetnsLab lab;
  if (size + 28 > 1500) lab.set_mtu(9000);
  // B's veth then sends only the senders' frames (its drops are counted as theirs): no IPv6
  // (router solicitations, MLD reports), A's address resolved for good (no ARP probes).
  lab.run_in(lab.b().ns, [&] { std::ofstream("/proc/sys/net/ipv6/conf/" + lab.b().veth + "/disable_ipv6") << "1\n"; });
  if (lab.exec_in(lab.b().ns, {"ip", "neigh", "replace", lab.a().ip4, "lladdr", lab.mac(lab.a()), "dev", lab.b().veth,
                               "nud", "permanent"}) != 0)
    throw std::runtime_error("ip neigh replace failed in " + lab.b().ns);
  Row row;
  row.mode = mode;
  row.size = size;
  row.poll_us = mode == "pipeline" ? 0 : poll_us;
  row.frame_packets = per_frame;
  for (auto& t : last_sent) t.store(0, std::memory_order_relaxed);
  std::vector<double> lat;
  lat.reserve(1 << 20);
  const uint16_t port = 47000;
  ndqtest::AfxdpIface iface;
  iface.dev = lab.a().veth;
  iface.rx_queues = {0};
  iface.flows = {ndqtest::udp_flow(1, 0, port)};
  iface.buf_size = 4096;
  iface.num_bufs = 8192;
  Config cfg = iface.build();
  if (mode != "cpu_loop") {  // the GPU reads the UMEM
    cfg.memory_regions[0].kind = MemoryKind::mapped;
    cfg.memory_regions[0].gpu = 0;
  }
  auto session = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(cfg); });
  std::vector<int> fds;
  for (unsigned i = 0; i < senders; ++i) fds.push_back(lab.run_in(lab.b().ns, [] { return socket(AF_INET, SOCK_DGRAM, 0); }));
  std::atomic<bool> stop{false};
  gpu::PipelineStats st;
  double cpu = 0;
  std::pair<double, uint64_t> steady{0, 0};  // the application thread's CPU and packets placed when acquiring ends
  uint64_t looks = 0;
  const uint64_t veth0 = ndqbench::veth_tx_dropped(lab);
  const auto t0 = Clock::now();
  std::atomic<uint64_t> next_seq{0}, sent{0};
  std::vector<std::thread> sender;
  for (int fd : fds) sender.emplace_back([&, fd] { sent += flood(fd, lab.a().ip4, port, size, next_seq, stop); });
  auto stop_senders = [&] {
    stop = true;
    for (std::thread& t : sender) t.join();
  };
  if (mode == "pipeline") {
    gpu::FramePipeline pipe(*session, "x0", reorder(size, LaunchMode::persistent));
    RxQueue& q = session->rx_queue("x0", 0);
    const double c0 = thread_cpu_s();
    while (Clock::now() - t0 < std::chrono::duration<double>(seconds)) {
      if (RxBurst b = q.poll(); b.size()) pipe.submit(std::move(b));
      while (gpu::Frame f = pipe.next_frame()) record_latency(f.info(), lat);
    }
    steady = {thread_cpu_s() - c0, pipe.stats().packets_placed};
    stop_senders();
    for (auto end = Clock::now() + std::chrono::milliseconds(300); Clock::now() < end;)
      if (RxBurst b = q.poll(); b.size()) pipe.submit(std::move(b));
    pipe.flush();
    pipe.synchronize();
    while (gpu::Frame f = pipe.next_frame()) {}
    cpu = thread_cpu_s() - c0;
    st = pipe.stats();
  } else {
    const auto driver = mode == "gpu" ? gpu::XskFrameReceiver::Driver::gpu : gpu::XskFrameReceiver::Driver::cpu;
    gpu::XskFrameReceiver rx(*session, "x0", reorder(size, LaunchMode::persistent), driver);
    const double c0 = thread_cpu_s();
    while (Clock::now() - t0 < std::chrono::duration<double>(seconds)) {
      while (gpu::Frame f = rx.next_frame()) record_latency(f.info(), lat);
      std::this_thread::sleep_for(std::chrono::microseconds(poll_us));  // frames, not packets: no busy wait
      ++looks;
    }
    steady = {thread_cpu_s() - c0, rx.stats().packets_placed};
    stop_senders();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    rx.stop();
    while (gpu::Frame f = rx.next_frame()) {}
    cpu = thread_cpu_s() - c0;
    if (driver == gpu::XskFrameReceiver::Driver::cpu) {
      // The driver's thread polls without pause: one core for the whole run.
      cpu += std::chrono::duration<double>(Clock::now() - t0).count();
    }
    st = rx.stats();
  }
  row.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  for (int fd : fds) close(fd);
  row.sent = sent;
  row.taken = st.packets_in;
  row.placed = st.packets_placed;
  row.other_fates = st.duplicate + st.late + st.malformed + st.no_buffer;
  row.kernel_drops = session->rx_queue("x0", 0).stats().total_drops();
  row.veth_drops = ndqbench::veth_tx_dropped(lab) - veth0;
  row.cpu_s = cpu;
  // The CPU loop's driver thread polls without pause: a core for the whole window.
  const double steady_cpu = steady.first + (mode == "cpu_loop" ? seconds : 0.0);
  row.steady_ns = steady.second ? steady_cpu * 1e9 / double(steady.second) : 0;
  row.steady_us_per_s = steady_cpu * 1e6 / seconds;
  row.looks = double(looks);
  row.look_us = looks ? steady.first * 1e6 / double(looks) : 0;
  row.ok = row.sent == row.taken + row.kernel_drops + row.veth_drops && row.taken == row.placed + row.other_fates;
  row.latencies = lat.size();
  row.p50_us = percentile(lat, 0.50);
  row.p99_us = percentile(lat, 0.99);
  // The GPU it holds: one block of the receive loop; the pipeline's persistent kernel keeps a
  // block resident on every SM.
  if (mode != "cpu_loop") {
    const auto devs = gpu::devices();
    row.device_sms = devs.empty() ? 0 : devs[0].multiprocessors;
    row.gpu_sms = mode == "gpu" ? 1 : row.device_sms;
  }
  return row;
}

// The CPU of a look that takes nothing: the thread's sleep and wakeup alone, over 0.5 s.
double idle_look_us(uint32_t poll_us) {
  const int n = std::max(10, static_cast<int>(500000 / std::max<uint32_t>(poll_us, 1)));
  const double c0 = thread_cpu_s();
  for (int i = 0; i < n; ++i) std::this_thread::sleep_for(std::chrono::microseconds(poll_us));
  return (thread_cpu_s() - c0) * 1e6 / n;
}

}  // namespace

int main(int argc, char** argv) {
  std::string sizes = "1024,1400", modes = "gpu,cpu_loop,pipeline", polls = "200", json;
  double seconds = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--sizes") sizes = v;
    else if (k == "--seconds") seconds = std::stod(v);
    else if (k == "--modes") modes = v;
    else if (k == "--poll-us") polls = v;
    else if (k == "--frame-packets") per_frame = static_cast<uint32_t>(std::stoul(v));
    else if (k == "--json") json = v;
    else if (k == "--senders") senders = std::max(1u, static_cast<unsigned>(std::stoul(v)));
    else {
      std::fprintf(stderr, "usage: %s [--sizes 1024,1400] [--seconds 2] [--modes gpu,cpu_loop,pipeline] [--poll-us 200] [--frame-packets 64] [--senders 1] [--json F]\n", argv[0]);
      return 2;
    }
  }
  if (modes != "cpu_loop" && gpu::device_count() == 0) {
    std::fprintf(stderr, "no GPU: %s\n", gpu::unavailable_reason().c_str());
    return 1;
  }
  std::vector<Row> rows;
  bool ok = true;
  std::printf("%u sender thread(s), frames of %u packets\n", senders, per_frame);
  std::printf("%-9s %6s %7s %10s %10s %10s %9s %8s %8s %12s %10s %9s %8s %9s %9s %9s %7s %s\n", "mode", "size", "poll_us", "sent",
              "placed", "kern_drop", "veth_drop", "other", "Mpps", "cpu_ns/pkt", "steady_ns", "cpu_us/s", "look_us", "idle_look", "p50_us",
              "p99_us", "SMs", "check");
  for (const std::string& size : split_commas(sizes))
    for (const std::string& mode : split_commas(modes))
      for (const std::string& poll : split_commas(polls)) {
        if (mode == "pipeline" && poll != split_commas(polls)[0]) continue;  // it polls the queue without pause
        if (mode == "pipeline" && std::stoul(size) + 42 > 4096 - 256) {
          std::printf("pipeline %6s: left out (the FramePipeline places packets of one buffer)\n", size.c_str());
          continue;
        }
        Row r = run(mode, static_cast<uint32_t>(std::stoul(size)), seconds, static_cast<uint32_t>(std::stoul(poll)));
        if (r.poll_us) r.idle_look_us = idle_look_us(r.poll_us);
        ok = ok && r.ok && r.placed > 0;
        std::printf("%-9s %6u %7u %10llu %10llu %10llu %9llu %8llu %8.3f %12.2f %10.2f %9.1f %8.2f %9.2f %9.1f %9.1f %3d/%-3d %s\n",
                    r.mode.c_str(), r.size, r.poll_us, (unsigned long long)r.sent, (unsigned long long)r.placed,
                    (unsigned long long)r.kernel_drops, (unsigned long long)r.veth_drops, (unsigned long long)r.other_fates, r.placed / r.seconds / 1e6,
                    r.cpu_s * 1e9 / double(r.placed ? r.placed : 1), r.steady_ns, r.steady_us_per_s, r.look_us,
                    r.idle_look_us, r.p50_us, r.p99_us, r.gpu_sms, r.device_sms, r.ok ? "ok" : "ACCOUNTING MISMATCH");
        rows.push_back(r);
      }
  if (!json.empty()) {
    std::ofstream o(json);
    o << "{\"bench\": \"xsk_gpu_receive\", \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      o << (i ? ", " : "") << "{\"mode\": \"" << r.mode << "\", \"size\": " << r.size << ", \"sent\": " << r.sent
        << ", \"taken\": " << r.taken << ", \"placed\": " << r.placed << ", \"kernel_drops\": " << r.kernel_drops << ", \"veth_drops\": " << r.veth_drops
        << ", \"other_fates\": " << r.other_fates << ", \"seconds\": " << r.seconds << ", \"placed_mpps\": "
        << r.placed / r.seconds / 1e6 << ", \"cpu_ns_per_packet\": " << r.cpu_s * 1e9 / double(r.placed ? r.placed : 1)
        << ", \"cpu_ns_per_packet_steady\": " << r.steady_ns << ", \"cpu_us_per_second_steady\": " << r.steady_us_per_s
        << ", \"looks\": " << r.looks << ", \"cpu_us_per_look\": " << r.look_us << ", \"cpu_us_per_idle_look\": "
        << r.idle_look_us << ", \"senders\": " << senders << ", \"poll_us\": " << r.poll_us << ", \"frame_packets\": " << r.frame_packets << ", \"latency_p50_us\": " << r.p50_us << ", \"latency_p99_us\": " << r.p99_us
        << ", \"latency_frames\": " << r.latencies << ", \"gpu_sms\": " << r.gpu_sms << ", \"device_sms\": " << r.device_sms
        << ", \"accounting_ok\": " << (r.ok ? "true" : "false") << "}";
    }
    o << "]}\n";
  }
  return ok ? 0 : 1;
}
