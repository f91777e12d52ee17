// The whole GPU data plane as an application sees it: FramePipeline::submit() of bursts of
// packets sitting in pinned host buffers (where the socket or afxdp engine leaves them), frames
// out of next_frame(), for each staging and launch mode. One CPU thread does everything, so
// the figures also say what the CPU side costs per packet. Anchor in the same run: one pinned
// host-to-device cudaMemcpy of the same payload bytes (the PCIe limit).
//
//   netdaq_gpu_pipeline [--seconds S] [--gpu I] [--json PATH]
//
// Before timing, each mode runs once with frames checked against the packets (every byte).
// The sequence number of each packet is rewritten before it is handed over again (what a
// NIC writing a new packet would do): 8 bytes per packet on the CPU, counted in the figures.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "netdaq/gpu.h"

namespace {

using namespace netdaq;
using namespace netdaq::gpu;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kHeader = 16;        // junk u32, sequence u64 LE at 4, junk u32
constexpr uint32_t kPoolPackets = 32768;

void cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(err));
    std::exit(1);
  }
}

// Packets in pinned memory handed out as RxBursts from a fixed set of descriptors (no
// allocation while timing); a burst's descriptor comes back when the pipeline releases it.
class PinnedSource final : public detail::BurstOwner {
 public:
  PinnedSource(uint32_t payload, uint32_t burst) : payload_(payload), burst_(burst) {
    stride_ = (kHeader + payload + 63) / 64 * 64;
    cuda(cudaHostAlloc(reinterpret_cast<void**>(&mem_), size_t{stride_} * kPoolPackets, cudaHostAllocMapped),
         "cudaHostAlloc");
    std::mt19937 rng(payload);
    for (size_t i = 0; i < size_t{stride_} * kPoolPackets; ++i) mem_[i] = std::byte(rng());
    descs_.resize(256);  // enough for jobs_in_flight x (job_packets / burst + 1) bursts held
    pkts_.resize(descs_.size() * burst);
    for (size_t d = 0; d < descs_.size(); ++d) {
      descs_[d].pkts = &pkts_[d * burst];
      descs_[d].capacity = burst;
      descs_[d].owner = this;
      free_.push_back(&descs_[d]);
    }
  }
  ~PinnedSource() { cudaFreeHost(mem_); }

  const std::byte* samples(uint64_t seq) const { return mem_ + (seq % kPoolPackets) * stride_ + kHeader; }

  // The next burst: packets seq .. seq + burst - 1 (pool slots wrap), or empty if every
  // descriptor is still held by the pipeline.
  RxBurst next(uint64_t& seq) {
    if (free_.empty()) return {};
    detail::BurstDesc* d = free_.back();
    free_.pop_back();
    d->count = burst_;
    d->first = 0;
    for (uint32_t k = 0; k < burst_; ++k, ++seq) {
      std::byte* p = mem_ + (seq % kPoolPackets) * stride_;
      std::memcpy(p + 4, &seq, 8);
      auto& f = detail::fields(d->pkts[k]);
      f.nseg = 1;
      f.data[0] = p;
      f.len[0] = f.cap[0] = kHeader + payload_;
    }
    return RxBurst(d);
  }
  void release(detail::BurstDesc* d) noexcept override { free_.push_back(d); }
  std::byte* memory() const { return mem_; }
  size_t bytes() const { return size_t{stride_} * kPoolPackets; }

 private:
  uint32_t payload_, burst_, stride_;
  std::byte* mem_ = nullptr;
  std::vector<detail::BurstDesc> descs_;
  std::vector<Packet> pkts_;
  std::vector<detail::BurstDesc*> free_;
};

struct Mode {
  const char* name;
  Staging staging;
  LaunchMode launch;
  uint32_t job_packets = 0;  // gather small bursts into jobs of this many packets
};

struct Result {
  std::string mode;
  uint32_t payload = 0, burst = 0;
  double gbytes_s = 0, mpps = 0, cpu_ns_per_packet = 0, anchor_gbytes_s = 0;
  uint64_t frames = 0, waits = 0, dropped = 0;
};

ReorderConfig config(const Mode& m, uint32_t payload) {
  ReorderConfig c;
  c.name = m.name;
  c.seq_offset = 4;
  c.seq_bits = 64;
  c.seq_byte_order = ByteOrder::little;
  c.payload_offset = kHeader;
  c.payload_size = payload;
  c.packets_per_frame = 256;
  c.max_open_frames = 4;
  c.frame_buffers = 64;  // >= frames a burst spans x bursts in flight + open frames: no no_buffer drops
  c.staging = m.staging;
  c.launch = m.launch;
  c.bursts_in_flight = 4;
  c.job_packets = m.job_packets;
  return c;
}

// Every frame of a short run must hold its packets' bytes.
bool check(const Mode& m, uint32_t payload, uint32_t burst) {
  PinnedSource src(payload, burst);
  FramePipeline p(config(m, payload));
  std::vector<std::byte> got(p.frame_bytes());
  uint64_t frames = 0, bad = 0;
  auto verify = [&](const Frame& f) {
    cuda(cudaMemcpy(got.data(), f.data(), got.size(), cudaMemcpyDeviceToHost), "cudaMemcpy(frame)");
    for (uint32_t i = 0; i < 256; ++i)
      if (std::memcmp(got.data() + size_t{i} * payload, src.samples(f.index() * 256 + i), payload) != 0) {
        if (bad++ == 0) std::printf("  frame %llu slot %u differs\n", (unsigned long long)f.index(), i);
      }
    ++frames;
  };
  uint64_t seq = 0;
  for (int b = 0; b < 64; ++b) {
    p.submit(src.next(seq));
    while (Frame f = p.next_frame()) verify(f);  // frames held by the app block new ones
  }
  p.flush();
  p.synchronize();
  while (Frame f = p.next_frame()) verify(f);
  const PipelineStats s = p.stats();
  const bool ok = bad == 0 && frames == 64u * burst / 256 && s.packets_placed == 64u * burst;
  if (!ok)
    std::printf("  %s %u B: frames %llu (want %u), placed %llu, bad slots %llu, incomplete %llu, late %llu, dup %llu, "
                "gpu_errors %llu\n",
                m.name, payload, (unsigned long long)frames, 64u * burst / 256, (unsigned long long)s.packets_placed,
                (unsigned long long)bad, (unsigned long long)s.frames_incomplete, (unsigned long long)s.late,
                (unsigned long long)s.duplicate, (unsigned long long)s.gpu_errors);
  return ok;
}

double h2d_anchor(const PinnedSource& src) {
  std::byte* dev = nullptr;
  cuda(cudaMalloc(reinterpret_cast<void**>(&dev), src.bytes()), "cudaMalloc");
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> ms;
  for (int r = 0; r < 12; ++r) {
    cudaEventRecord(a);
    cudaMemcpyAsync(dev, src.memory(), src.bytes(), cudaMemcpyHostToDevice);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float t = 0;
    cudaEventElapsedTime(&t, a, b);
    if (r >= 2) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaFree(dev);
  return double(src.bytes()) / (ms[ms.size() / 2] * 1e-3) / 1e9;
}

Result run(const Mode& m, uint32_t payload, uint32_t burst, double seconds) {
  PinnedSource src(payload, burst);
  Result r;
  r.mode = m.name;
  r.payload = payload;
  r.burst = burst;
  r.anchor_gbytes_s = h2d_anchor(src);
  FramePipeline p(config(m, payload));
  uint64_t seq = 0, frames = 0;
  for (int b = 0; b < 200; ++b) {  // warm-up
    p.submit(src.next(seq));
    while (Frame f = p.next_frame()) {}
  }
  const PipelineStats st0 = p.stats();
  const uint64_t placed0 = st0.packets_placed;
  const auto t0 = Clock::now();
  const auto end = t0 + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    for (int k = 0; k < 16; ++k) {
      if (RxBurst b = src.next(seq)) p.submit(std::move(b));
      while (Frame f = p.next_frame()) ++frames;
    }
  }
  p.flush();
  p.synchronize();
  while (Frame f = p.next_frame()) ++frames;
  const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
  const PipelineStats st = p.stats();
  const uint64_t packets = st.packets_placed - placed0;  // what reached frames, not what was offered
  r.gbytes_s = double(packets) * payload / dt / 1e9;
  r.mpps = double(packets) / dt / 1e6;
  r.cpu_ns_per_packet = dt * 1e9 / double(packets);
  r.frames = frames;
  r.waits = st.waits;
  r.dropped = (st.no_buffer + st.late + st.duplicate + st.malformed) -
              (st0.no_buffer + st0.late + st0.duplicate + st0.malformed);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  int gpu = 0;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) seconds = std::stod(argv[++i]);
    else if (a == "--gpu" && i + 1 < argc) gpu = std::stoi(argv[++i]);
    else if (a == "--json" && i + 1 < argc) json = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--seconds S] [--gpu I] [--json PATH]\n", argv[0]);
      return 2;
    }
  }
  cuda(cudaSetDevice(gpu), "cudaSetDevice");
  cudaDeviceProp prop{};
  cuda(cudaGetDeviceProperties(&prop, gpu), "cudaGetDeviceProperties");
  const Mode modes[] = {{"per_burst copy", Staging::copy, LaunchMode::per_burst},
                        {"per_burst direct", Staging::direct, LaunchMode::per_burst},
                        {"graph copy", Staging::copy, LaunchMode::graph},
                        {"persistent direct", Staging::direct, LaunchMode::persistent},
                        {"per_burst copy j1k", Staging::copy, LaunchMode::per_burst, 1024},
                        {"persistent dir j1k", Staging::direct, LaunchMode::persistent, 1024}};
  std::printf("gpu %d: %s; FramePipeline fed from pinned host packets by one CPU thread, %.1f s per case\n", gpu,
              prop.name, seconds);
  bool all_ok = true;
  for (const Mode& m : modes)
    for (uint32_t payload : {1024u, 8192u})
      if (!check(m, payload, 256)) {
        std::printf("WRONG FRAMES: %s, %u B\n", m.name, payload);
        all_ok = false;
      }
  if (!all_ok) return 3;
  std::printf("frames checked for every mode (every byte)\n");
  std::printf("%-18s %7s %6s %10s %9s %12s %11s %6s %8s\n", "mode", "payload", "burst", "GB/s", "Mpps", "CPU ns/pkt",
              "H2D GB/s", "ratio", "dropped");
  std::vector<Result> results;
  for (uint32_t payload : {1024u, 8192u})
    for (uint32_t burst : {64u, 1024u})
      for (const Mode& m : modes) {
        const Result r = run(m, payload, burst, seconds);
        std::printf("%-18s %7u %6u %10.1f %9.2f %12.1f %11.1f %6.2f %8llu\n", r.mode.c_str(), r.payload, r.burst,
                    r.gbytes_s, r.mpps, r.cpu_ns_per_packet, r.anchor_gbytes_s, r.gbytes_s / r.anchor_gbytes_s,
                    (unsigned long long)r.dropped);
        results.push_back(r);
      }
  if (!json.empty()) {
    std::FILE* f = std::fopen(json.c_str(), "w");
    if (!f) return 1;
    std::fprintf(f, "{\"bench\": \"gpu_pipeline\", \"device\": \"%s\", \"seconds\": %.2f, \"results\": [", prop.name,
                 seconds);
    for (size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      std::fprintf(f,
                   "%s\n  {\"mode\": \"%s\", \"payload\": %u, \"burst\": %u, \"gbytes_s\": %.2f, \"mpps\": %.3f, "
                   "\"cpu_ns_per_packet\": %.1f, \"h2d_gbytes_s\": %.2f, \"ratio\": %.3f, \"frames\": %llu, "
                   "\"waits\": %llu, \"dropped\": %llu}",
                   i ? "," : "", r.mode.c_str(), r.payload, r.burst, r.gbytes_s, r.mpps, r.cpu_ns_per_packet,
                   r.anchor_gbytes_s, r.gbytes_s / r.anchor_gbytes_s, (unsigned long long)r.frames,
                   (unsigned long long)r.waits, (unsigned long long)r.dropped);
    }
    std::fprintf(f, "\n]}\n");
    std::fclose(f);
  }
  return 0;
}
