// The whole GPU data plane as an application sees it: FramePipeline::submit() of bursts of
// packets sitting in pinned host buffers (where the socket or afxdp engine leaves them), frames
// out of next_frame(), for each staging and launch mode. One CPU thread does everything, so
// the figures also say what the CPU side costs per packet: "pipeline ns" is the time inside
// submit() and next_frame(), "busy ns" the same less submit()'s waits for a free GPU job slot
// (PipelineStats::wait_ns: the GPU behind, the CPU idle). Anchor in the same run: one pinned
// host-to-device cudaMemcpy of the same payload bytes (the PCIe limit).
//
//   netdaq_gpu_pipeline [--seconds S] [--gpu I] [--json PATH] [--payloads LIST] [--bursts LIST]
//                       [--job-packets LIST] [--in-flight K] [--header B] [--decoders LIST|none]
//                       [--span-seconds S]
//
// --payloads / --bursts time only those sizes (default 1024,8192 and 64,1024); --job-packets
// adds a per_burst copy, graph copy and persistent direct row per job size given (what the
// defaults of `job_packets: auto` were chosen from); --in-flight sets bursts_in_flight (4);
// --header the bytes before each packet's samples (16; 42: a UDP payload's offset, samples not
// 16-byte aligned).
//
// Before timing, each mode runs once per burst size it is timed at, with frames checked
// against the packets (every byte). Every run (checked or timed) then checks the pipeline's
// counters against what was handed to it: every packet placed (packets_in = packets_placed =
// packets offered), bytes_to_gpu = packets x payload, no duplicate / late / malformed /
// no_buffer packet, no GPU error, no frame skipped or dropped, and the frames out = the
// complete frames plus at most the last one, flushed incomplete with exactly its missing
// tail. Exit status: 0 all checked, 3 a frame's bytes were wrong, 4 a timed run's counters
// did not match (the table and the JSON are still written; the "check" column says which).
// The sequence number of each packet is rewritten before it is handed over again (what a
// NIC writing a new packet would do): 8 bytes per packet on the CPU, counted in the figures.
//
// Span modes (rows "<decoder> copy auto" = per_burst copy auto, "<decoder> persist auto" =
// persistent direct auto, for fields, spead and vita49; --decoders LIST or none, timed
// --span-seconds each, 0.25 by default): real packets of that wire format from the test
// generators (bench/span_traffic.h; frames of 256 packets of `payload` frame bytes, the frame
// bytes 16-byte aligned as above, or at --header's offset modulo 16), each packet's frame
// field (frame number, heap counter, sample timestamp) rewritten before it is handed over
// again, as the sequence is. Checked the same way, each frame against the generator's frame
// byte for byte and bytes_missing in place of packets_missing. Column "x seq": pipeline ns
// against the sequence row of the same launch mode, payload and burst (the issue's target:
// a decoder costs <= 1.3x the sequence path per packet).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../span_traffic.h"
#include "netdaq/gpu.h"

namespace {

using namespace netdaq;
using namespace netdaq::gpu;
using benchspan::Proto;
using benchspan::SpanTraffic;
using Clock = std::chrono::steady_clock;

// Bytes in front of each packet's samples: junk u32, sequence u64 LE at 4, junk (--header;
// 16 keeps the samples 16-byte aligned, 42 puts them where a UDP payload is, 10 past).
uint32_t g_header = 16;
constexpr uint32_t kPoolPackets = 32768;
constexpr uint32_t kPerFrame = 256;     // ReorderConfig::packets_per_frame below
uint32_t g_in_flight = 4;  // ReorderConfig::bursts_in_flight of every row (--in-flight)
uint32_t g_max_job = 1024;  // the largest job_packets of any row (PinnedSource's descriptors)

void cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(err));
    std::exit(1);
  }
}

// Packets in pinned memory handed out as RxBursts from a fixed set of descriptors (no
// allocation while timing); a burst's descriptor comes back when the pipeline releases it.
// kPoolPackets packets of stride bytes; what a packet holds and how it is renewed for its
// next use is the subclass's (write()).
class Source : public detail::BurstOwner {
 public:
  Source(uint32_t len, uint32_t burst, uint32_t lead) : len_(len), burst_(burst), lead_(lead) {
    stride_ = (lead + len + 63) / 64 * 64;
    cuda(cudaHostAlloc(reinterpret_cast<void**>(&mem_), size_t{stride_} * kPoolPackets, cudaHostAllocMapped),
         "cudaHostAlloc");
    // Enough for bursts_in_flight jobs of (job_packets / burst + 1) bursts each, and spare.
    descs_.resize(std::max<size_t>(256, size_t{g_in_flight} * (g_max_job / burst + 2) + 16));
    pkts_.resize(descs_.size() * burst);
    for (size_t d = 0; d < descs_.size(); ++d) {
      descs_[d].pkts = &pkts_[d * burst];
      descs_[d].capacity = burst;
      descs_[d].owner = this;
      free_.push_back(&descs_[d]);
    }
  }
  virtual ~Source() { cudaFreeHost(mem_); }
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  // The next burst: packets seq .. seq + burst - 1 (pool slots wrap), or empty if every
  // descriptor is still held by the pipeline.
  RxBurst next(uint64_t& seq) {
    if (free_.empty()) return {};
    detail::BurstDesc* d = free_.back();
    free_.pop_back();
    d->count = burst_;
    d->first = 0;
    for (uint32_t k = 0; k < burst_; ++k, ++seq) {
      std::byte* p = packet(seq);
      write(p, seq);
      auto& f = detail::fields(d->pkts[k]);
      f.nseg = 1;
      f.data[0] = p;
      f.len[0] = f.cap[0] = len_;
    }
    return RxBurst(d);
  }
  void release(detail::BurstDesc* d) noexcept override { free_.push_back(d); }
  std::byte* memory() const { return mem_; }
  size_t bytes() const { return size_t{stride_} * kPoolPackets; }

 protected:
  // Packet n's first byte (its pool slot, lead bytes into its buffer).
  std::byte* packet(uint64_t n) const { return mem_ + (n % kPoolPackets) * stride_ + lead_; }
  virtual void write(std::byte* p, uint64_t n) noexcept = 0;  // makes the slot's packet packet n

 private:
  uint32_t len_, burst_, lead_, stride_;
  std::byte* mem_ = nullptr;
  std::vector<detail::BurstDesc> descs_;
  std::vector<Packet> pkts_;
  std::vector<detail::BurstDesc*> free_;
};

// Mode sequence: random samples after a header holding the u64 LE sequence at 4.
class PinnedSource final : public Source {
 public:
  PinnedSource(uint32_t payload, uint32_t burst) : Source(g_header + payload, burst, 0) {
    std::mt19937 rng(payload);
    for (size_t i = 0; i < bytes(); ++i) memory()[i] = std::byte(rng());
  }
  const std::byte* samples(uint64_t seq) const { return packet(seq) + g_header; }

 private:
  void write(std::byte* p, uint64_t n) noexcept override { std::memcpy(p + 4, &n, 8); }
};

// Span modes: the generator's packets, slot i a copy of packet i % t.packets() (kPoolPackets
// is a multiple of it), packet n stamped with its frame number (SpanTraffic::stamp). The
// frame bytes start at --header's offset modulo 16 past a 16-byte boundary, as the sequence
// rows' samples do.
class SpanSource final : public Source {
 public:
  SpanSource(const SpanTraffic& t, uint32_t burst)
      : Source(t.header + t.payload, burst, (g_header % 16 + 16 - t.header % 16) % 16), t_(t) {
    if (kPoolPackets % t.packets()) {
      std::fprintf(stderr, "span traffic: %zu packets do not divide the pool\n", t.packets());
      std::exit(1);
    }
    for (uint64_t i = 0; i < kPoolPackets; ++i)
      std::memcpy(packet(i), t.t.packets[i % t.packets()].payload.data(), t.header + t.payload);
  }

 private:
  void write(std::byte* p, uint64_t n) noexcept override { t_.stamp(p, n); }
  const SpanTraffic& t_;
};

struct Mode {
  std::string name;
  Staging staging;
  LaunchMode launch;
  std::optional<uint32_t> job_packets = 0;  // gather small bursts into jobs of this many (nullopt: auto)
  std::optional<Proto> proto;               // a span mode's wire format; unset: mode sequence
  std::string base;                         // span modes: the sequence row of the same launch mode ("x seq")
};

// Span traffic per wire format and payload, generated once (16 frames of kPerFrame packets).
const SpanTraffic& traffic(Proto p, uint32_t payload) {
  static std::vector<std::unique_ptr<SpanTraffic>> made;
  for (const auto& t : made)
    if (t->proto == p && t->payload == payload) return *t;
  made.push_back(std::make_unique<SpanTraffic>(benchspan::make_span_traffic(p, payload, kPerFrame, 16)));
  return *made.back();
}

std::unique_ptr<Source> source(const Mode& m, uint32_t payload, uint32_t burst) {
  if (m.proto) return std::make_unique<SpanSource>(traffic(*m.proto, payload), burst);
  return std::make_unique<PinnedSource>(payload, burst);
}

struct Result {
  std::string mode, decoder = "sequence";
  double x_seq = 0;  // span modes: pipeline ns / the sequence row's (same launch mode, payload, burst)
  uint32_t payload = 0, burst = 0;
  double gbytes_s = 0, mpps = 0, cpu_ns_per_packet = 0, anchor_gbytes_s = 0;
  double pipeline_ns_per_packet = 0;  // inside submit() and next_frame() only (no packet source)
  double busy_ns_per_packet = 0;      // the same less submit()'s waits for the GPU (PipelineStats::wait_ns)
  uint64_t frames = 0, waits = 0, dropped = 0;
  uint64_t offered = 0, placed = 0, bytes_expected = 0, bytes_to_gpu = 0, missing = 0;  // whole run
  std::string problems;  // empty: the counters match what was offered
};

// What the pipeline must report after OFFERED packets of PAYLOAD bytes (sequence numbers
// 0 .. OFFERED - 1, in order), a flush() and FRAMES_OUT frames taken out of next_frame():
// every packet placed and its bytes moved, nothing dropped, every frame complete but a last
// partial one (its missing slots = the tail never sent). Returns the mismatches, "" if none.
// Span modes: no packets_missing; bytes_missing = the unsent tail's bytes instead.
std::string counter_problems(const PipelineStats& s, uint64_t offered, uint64_t frames_out, uint32_t payload,
                             bool spans) {
  std::string why;
  auto want = [&why](const char* what, uint64_t got, uint64_t expected) {
    if (got == expected) return;
    char b[160];
    std::snprintf(b, sizeof b, "%s%s %llu (want %llu)", why.empty() ? "" : ", ", what, (unsigned long long)got,
                  (unsigned long long)expected);
    why += b;
  };
  const uint64_t full = offered / kPerFrame, rest = offered % kPerFrame;
  want("packets_in", s.packets_in, offered);
  want("packets_placed", s.packets_placed, offered);
  want("bytes_to_gpu", s.bytes_to_gpu, offered * payload);
  want("duplicate", s.duplicate, 0);
  want("late", s.late, 0);
  want("malformed", s.malformed, 0);
  want("no_buffer", s.no_buffer, 0);
  want("gpu_errors", s.gpu_errors, 0);
  want("frames_skipped", s.frames_skipped, 0);
  want("frames_dropped", s.frames_dropped, 0);
  want("frames_complete", s.frames_complete, full);
  want("frames_incomplete", s.frames_incomplete, rest ? 1 : 0);
  if (spans) {
    want("bytes_missing", s.bytes_missing, rest ? uint64_t{kPerFrame - rest} * payload : 0);
    want("control+no_stream", s.control + s.no_stream, 0);
  } else {
    want("packets_missing", s.packets_missing, rest ? kPerFrame - rest : 0);
  }
  want("frames out", frames_out, full + (rest ? 1 : 0));
  return why;
}

ReorderConfig config(const Mode& m, uint32_t payload) {
  ReorderConfig c;
  if (m.proto) {
    c = traffic(*m.proto, payload).config();  // frame_bytes = kPerFrame x payload
  } else {
    c.seq_offset = 4;
    c.seq_bits = 64;
    c.seq_byte_order = ByteOrder::little;
    c.payload_offset = g_header;
    c.payload_size = payload;
    c.packets_per_frame = kPerFrame;
  }
  c.name = m.name;
  c.max_open_frames = 4;
  // >= frames a job spans x jobs in flight + open frames: no no_buffer drops
  c.frame_buffers = std::max<uint32_t>(64, (g_max_job / kPerFrame + 2) * g_in_flight + c.max_open_frames + 4);
  c.staging = m.staging;
  c.launch = m.launch;
  c.bursts_in_flight = g_in_flight;
  c.job_packets = m.job_packets;
  return c;
}

// Every frame of a short run (64 bursts of BURST packets) must hold its packets' bytes, and the
// counters must match what was offered (counter_problems).
// Span modes: each frame must equal the generator's frame (every byte, its size too).
bool check(const Mode& m, uint32_t payload, uint32_t burst) {
  const std::unique_ptr<Source> src = source(m, payload, burst);
  FramePipeline p(config(m, payload));
  std::vector<std::byte> got(p.frame_bytes());
  uint64_t frames = 0, bad = 0;
  auto verify = [&](const Frame& f) {
    cuda(cudaMemcpy(got.data(), f.data(), got.size(), cudaMemcpyDeviceToHost), "cudaMemcpy(frame)");
    if (m.proto) {
      const std::vector<std::byte>& want = traffic(*m.proto, payload).truth(f.index());
      if (f.size_bytes() != want.size() || std::memcmp(got.data(), want.data(), want.size()) != 0)
        if (bad++ == 0) std::printf("  frame %llu differs from the generator's\n", (unsigned long long)f.index());
    } else {
      const auto& seq_src = static_cast<const PinnedSource&>(*src);
      for (uint32_t i = 0; i < kPerFrame; ++i)
        if (std::memcmp(got.data() + size_t{i} * payload, seq_src.samples(f.index() * kPerFrame + i), payload) != 0) {
          if (bad++ == 0) std::printf("  frame %llu slot %u differs\n", (unsigned long long)f.index(), i);
        }
    }
    ++frames;
  };
  uint64_t seq = 0;
  for (int b = 0; b < 64; ++b) {
    p.submit(src->next(seq));
    while (Frame f = p.next_frame()) verify(f);  // frames held by the app block new ones
  }
  p.flush();
  p.synchronize();
  while (Frame f = p.next_frame()) verify(f);
  const PipelineStats s = p.stats();
  const std::string why = counter_problems(s, seq, frames, payload, m.proto.has_value());
  const bool ok = bad == 0 && why.empty() && seq == 64u * burst;
  if (!ok)
    std::printf("  %s %u B, bursts of %u: %llu packets offered (want %u), bad slots %llu; %s\n", m.name.c_str(), payload, burst,
                (unsigned long long)seq, 64u * burst, (unsigned long long)bad, why.empty() ? "counters ok" : why.c_str());
  return ok;
}

double h2d_anchor(const Source& src) {
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
  const std::unique_ptr<Source> owned = source(m, payload, burst);
  Source& src = *owned;
  Result r;
  r.mode = m.name;
  if (m.proto) r.decoder = benchspan::name_of(*m.proto);
  r.payload = payload;
  r.burst = burst;
  r.anchor_gbytes_s = h2d_anchor(src);
  FramePipeline p(config(m, payload));
  uint64_t seq = 0, frames = 0, warm_frames = 0;
  for (int b = 0; b < 200; ++b) {  // warm-up
    p.submit(src.next(seq));
    while (Frame f = p.next_frame()) ++warm_frames;
  }
  const PipelineStats st0 = p.stats();
  const uint64_t placed0 = st0.packets_placed;
  const auto t0 = Clock::now();
  const auto end = t0 + std::chrono::duration<double>(seconds);
  Clock::duration in_pipeline{};
  while (Clock::now() < end) {
    for (int k = 0; k < 16; ++k) {
      RxBurst b = src.next(seq);
      const auto a = Clock::now();
      if (b) p.submit(std::move(b));
      while (Frame f = p.next_frame()) ++frames;
      in_pipeline += Clock::now() - a;
    }
  }
  const uint64_t waited_ns = p.stats().wait_ns - st0.wait_ns;  // in the timed loop only
  p.flush();
  p.synchronize();
  while (Frame f = p.next_frame()) ++frames;
  const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
  const PipelineStats st = p.stats();
  const uint64_t packets = st.packets_placed - placed0;  // what reached frames, not what was offered
  r.gbytes_s = double(packets) * payload / dt / 1e9;
  r.mpps = double(packets) / dt / 1e6;
  r.cpu_ns_per_packet = dt * 1e9 / double(packets);
  r.pipeline_ns_per_packet = std::chrono::duration<double>(in_pipeline).count() * 1e9 / double(packets);
  r.busy_ns_per_packet = r.pipeline_ns_per_packet - double(waited_ns) / double(packets);
  r.frames = frames;
  r.waits = st.waits;
  r.dropped = (st.no_buffer + st.late + st.duplicate + st.malformed) -
              (st0.no_buffer + st0.late + st0.duplicate + st0.malformed);
  // The whole run (warm-up included: the counters are cumulative) against what was offered.
  r.offered = seq;
  r.placed = st.packets_placed;
  r.bytes_expected = seq * payload;
  r.bytes_to_gpu = st.bytes_to_gpu;
  r.missing = st.packets_missing;
  r.problems = counter_problems(st, seq, warm_frames + frames, payload, m.proto.has_value());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0, span_seconds = 0.25;
  std::vector<Proto> decoders(std::begin(benchspan::kProtos), std::end(benchspan::kProtos));
  int gpu = 0;
  std::string json;
  std::vector<uint32_t> payloads{1024, 8192}, bursts{64, 1024}, jobs;
  auto list = [](const char* text) {
    std::vector<uint32_t> v;
    for (const char* p = text; *p;) {
      char* end = nullptr;
      v.push_back(static_cast<uint32_t>(std::strtoul(p, &end, 10)));
      p = *end == ',' ? end + 1 : end;
      if (end == p && *p) break;
    }
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) seconds = std::stod(argv[++i]);
    else if (a == "--payloads" && i + 1 < argc) payloads = list(argv[++i]);
    else if (a == "--bursts" && i + 1 < argc) bursts = list(argv[++i]);
    else if (a == "--job-packets" && i + 1 < argc) jobs = list(argv[++i]);
    else if (a == "--in-flight" && i + 1 < argc) g_in_flight = std::max(1ul, std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--header" && i + 1 < argc) g_header = std::max(12ul, std::strtoul(argv[++i], nullptr, 10));
    else if (a == "--gpu" && i + 1 < argc) gpu = std::stoi(argv[++i]);
    else if (a == "--json" && i + 1 < argc) json = argv[++i];
    else if (a == "--span-seconds" && i + 1 < argc) span_seconds = std::stod(argv[++i]);
    else if (a == "--decoders" && i + 1 < argc) {
      decoders.clear();
      for (std::string rest = argv[++i]; !rest.empty();) {
        const std::string d = rest.substr(0, rest.find(','));
        rest = d.size() < rest.size() ? rest.substr(d.size() + 1) : "";
        bool known = d == "none" || d.empty();
        for (Proto p : benchspan::kProtos)
          if (d == benchspan::name_of(p)) decoders.push_back(p), known = true;
        if (!known) {
          std::fprintf(stderr, "--decoders: unknown '%s' (fields, spead, vita49, none)\n", d.c_str());
          return 2;
        }
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--seconds S] [--gpu I] [--json PATH] [--payloads LIST] [--bursts LIST] "
                   "[--job-packets LIST] [--in-flight K] [--header B] [--decoders LIST|none] [--span-seconds S]\n",
                   argv[0]);
      return 2;
    }
  }
  cuda(cudaSetDevice(gpu), "cudaSetDevice");
  cudaDeviceProp prop{};
  cuda(cudaGetDeviceProperties(&prop, gpu), "cudaGetDeviceProperties");
  std::vector<Mode> modes = {{"per_burst copy", Staging::copy, LaunchMode::per_burst},
                        {"per_burst direct", Staging::direct, LaunchMode::per_burst},
                        {"graph copy", Staging::copy, LaunchMode::graph},
                        {"persistent direct", Staging::direct, LaunchMode::persistent},
                        {"persistent copy", Staging::copy, LaunchMode::persistent},
                        {"per_burst copy auto", Staging::copy, LaunchMode::per_burst, std::nullopt},
                        {"graph copy auto", Staging::copy, LaunchMode::graph, std::nullopt},
                        {"persistent dir auto", Staging::direct, LaunchMode::persistent, std::nullopt},
                        {"persistent copy auto", Staging::copy, LaunchMode::persistent, std::nullopt}};
  for (uint32_t j : jobs) {
    g_max_job = std::max(g_max_job, j);
    const std::string n = " j" + std::to_string(j);
    modes.push_back({"per_burst copy" + n, Staging::copy, LaunchMode::per_burst, j});
    modes.push_back({"graph copy" + n, Staging::copy, LaunchMode::graph, j});
    modes.push_back({"persistent dir" + n, Staging::direct, LaunchMode::persistent, j});
  }
  // A row per decoder and the two auto modes that lead (staging copy, persistent in place).
  for (Proto d : decoders) {
    const std::string n = benchspan::name_of(d);
    modes.push_back({n + " copy auto", Staging::copy, LaunchMode::per_burst, std::nullopt, d, "per_burst copy auto"});
    modes.push_back({n + " persist auto", Staging::direct, LaunchMode::persistent, std::nullopt, d, "persistent dir auto"});
  }
  std::printf("gpu %d: %s; FramePipeline fed from pinned host packets (samples %u bytes in) by one CPU thread, %.1f s per case\n", gpu,
              prop.name, g_header, seconds);
  bool all_ok = true;
  for (const Mode& m : modes)
    for (uint32_t payload : payloads)
      for (uint32_t burst : bursts)
        if (!check(m, payload, burst)) {
          std::printf("WRONG FRAMES: %s, %u B, bursts of %u\n", m.name.c_str(), payload, burst);
          all_ok = false;
        }
  if (!all_ok) return 3;
  std::printf("frames checked for every mode and burst size (every byte, and the counters)\n");
  std::printf("%-19s %7s %6s %10s %9s %12s %13s %9s %11s %6s %8s %6s %6s\n", "mode", "payload", "burst", "GB/s", "Mpps",
              "CPU ns/pkt", "pipeline ns", "busy ns", "H2D GB/s", "ratio", "dropped", "check", "x seq");
  std::vector<Result> results;
  std::vector<std::string> failed;
  for (uint32_t payload : payloads)
    for (uint32_t burst : bursts)
      for (const Mode& m : modes) {
        Result r = run(m, payload, burst, m.proto ? span_seconds : seconds);
        char x_seq[16] = "-";
        for (const Result& b : results)  // the sequence row of the same launch mode, run just before
          if (m.proto && b.mode == m.base && b.payload == payload && b.burst == burst) {
            r.x_seq = r.pipeline_ns_per_packet / b.pipeline_ns_per_packet;
            std::snprintf(x_seq, sizeof x_seq, "%.2f", r.x_seq);
          }
        std::printf("%-19s %7u %6u %10.1f %9.2f %12.1f %13.1f %9.1f %11.1f %6.2f %8llu %6s %6s\n", r.mode.c_str(), r.payload,
                    r.burst, r.gbytes_s, r.mpps, r.cpu_ns_per_packet, r.pipeline_ns_per_packet, r.busy_ns_per_packet,
                    r.anchor_gbytes_s,
                    r.gbytes_s / r.anchor_gbytes_s,
                    (unsigned long long)r.dropped, r.problems.empty() ? "ok" : "FAIL", x_seq);
        if (!r.problems.empty())
          failed.push_back(r.mode + ", " + std::to_string(r.payload) + " B, bursts of " + std::to_string(r.burst) +
                           ": " + r.problems);
        results.push_back(r);
      }
  if (!json.empty()) {
    std::FILE* f = std::fopen(json.c_str(), "w");
    if (!f) return 1;
    std::fprintf(f, "{\"bench\": \"gpu_pipeline\", \"device\": \"%s\", \"seconds\": %.2f, \"span_seconds\": %.2f, "
                 "\"header\": %u, \"results\": [",
                 prop.name, seconds, span_seconds, g_header);
    for (size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      std::fprintf(f,
                   "%s\n  {\"mode\": \"%s\", \"decoder\": \"%s\", \"pipeline_x_sequence\": %.3f, \"payload\": %u, \"burst\": %u, \"gbytes_s\": %.2f, \"mpps\": %.3f, "
                   "\"cpu_ns_per_packet\": %.1f, \"pipeline_ns_per_packet\": %.1f, \"busy_ns_per_packet\": %.1f, "
                   "\"h2d_gbytes_s\": %.2f, \"ratio\": %.3f, \"frames\": %llu, "
                   "\"waits\": %llu, \"dropped\": %llu, \"packets_offered\": %llu, \"packets_placed\": %llu, "
                   "\"bytes_expected\": %llu, \"bytes_to_gpu\": %llu, \"packets_missing\": %llu, \"check_ok\": %s, "
                   "\"problems\": \"%s\"}",
                   i ? "," : "", r.mode.c_str(), r.decoder.c_str(), r.x_seq, r.payload, r.burst, r.gbytes_s, r.mpps, r.cpu_ns_per_packet,
                   r.pipeline_ns_per_packet, r.busy_ns_per_packet, r.anchor_gbytes_s, r.gbytes_s / r.anchor_gbytes_s,
                   (unsigned long long)r.frames,
                   (unsigned long long)r.waits, (unsigned long long)r.dropped, (unsigned long long)r.offered,
                   (unsigned long long)r.placed, (unsigned long long)r.bytes_expected,
                   (unsigned long long)r.bytes_to_gpu, (unsigned long long)r.missing,
                   r.problems.empty() ? "true" : "false", r.problems.c_str());
    }
    std::fprintf(f, "\n], \"ok\": %s}\n", failed.empty() ? "true" : "false");
    std::fclose(f);
  }
  if (!failed.empty()) {
    std::printf("FAILED: %zu timed run%s whose counters do not match what was offered:\n", failed.size(),
                failed.size() == 1 ? "" : "s");
    for (const auto& f : failed) std::printf("  %s\n", f.c_str());
    return 4;
  }
  std::printf("every timed run: all packets placed, bytes_to_gpu = packets x payload, no drop or missing packet\n");
  return 0;
}
