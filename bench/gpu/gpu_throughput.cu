// Bytes-moving throughput of the GPU data plane against the copy the hardware does best
// (bench/gpu/README.md):
//   (a) place kernel (packets -> random slots, raw copy and int16 -> fp32) vs cudaMemcpy
//       device-to-device, in bytes read + written per second; target >= 0.8x
//   (b) Stager (pinned packet buffers scattered over a pool -> packed device buffer), sm
//       engine (one place-kernel launch per burst; entries mapped or copied to the device)
//       and copy_engine (one batched copy per burst), gathers on the caller's stream or on
//       the Stager's own streams (bursts overlap), driven as the frame pipeline drives it:
//       bursts back to back, 4 slots in flight; vs one pinned host-to-device cudaMemcpy;
//       target >= 0.9x
//   (c) zero-copy: the place kernel reading the same pinned buffers directly over PCIe,
//       per burst and as one job, vs the same host-to-device cudaMemcpy (no target)
//   h2d the anchor of (b) and (c) alone: one pinned host-to-device cudaMemcpy of --h2d-mib MiB
//       per packet size (section "h2d_pinned"; bench/pipeline.sh's GPU limit)
//   (s) span jobs (modes fields / spead / vita49: PlaceJob::spans, each SpanEntry its own
//       source, length and destination) launched with launch_place as the executors do, vs
//       the same cudaMemcpy D2D as (a): SPEAD packets (bench/span_traffic.h) in device memory
//       as in a pool, one span per packet into frames of 256 packets, in random order; beside
//       a slot job over the same packets by the same launcher. Target >= 0.8x at 8 KB.
// Every case is checked against the CPU reference once before it is timed.
//
//   netdaq_gpu_throughput [--sections LIST] [--d2d-mib N] [--h2d-mib N] [--reps N] [--gpu I]
//                         [--stager-streams N] [--json PATH]
//   --sections LIST  comma-separated: a (or place), b (or staged), c (or zero_copy), h2d,
//                    s (or spans); default a,b,c,s (h2d's figure is already the anchor of b and c)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../span_traffic.h"
#include "gpu/host/sample_reference.h"
#include "gpu/place_device.cuh"
#include "gpu/place_kernel.h"
#include "gpu/stager.h"

namespace {

using namespace netdaq;
using namespace netdaq::gpu;

constexpr unsigned kThreads = 256;
constexpr int kWarmup = 3;

#define CK(call)                                                                                     \
  do {                                                                                               \
    const cudaError_t err_ = (call);                                                                 \
    if (err_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(2);                                                                                  \
    }                                                                                                \
  } while (0)

// The kernel the executors launch (a group of threads per packet, sized by place_job), and a
// block-per-packet variant to show what the grouping buys.
__global__ void __launch_bounds__(kThreads, 4) place_k(const __grid_constant__ PlaceJob job) {
  place_job(job, blockIdx.x, gridDim.x);
}
struct BlockPerPacket {
  const PlaceJob& job;
  template <class Path>
  __device__ void operator()(const Path& path) const {
    for (uint32_t i = blockIdx.x; i < job.count; i += gridDim.x)
      detail::place_with(job, job.entries[i], path, threadIdx.x, blockDim.x);
  }
};
__global__ void __launch_bounds__(kThreads, 4) block_per_packet_k(const __grid_constant__ PlaceJob job) {
  detail::with_path(job, BlockPerPacket{job});
}

struct Options {
  uint64_t d2d_mib = 256, h2d_mib = 64;
  int reps = 20, gpu = 0;
  uint32_t stager_streams = 4;  // (b): the Stager's own streams in the "N streams" rows
  std::string json;
  bool place = true, staged = true, zero_copy = true, h2d = false, spans = true;  // --sections
};

struct Row {
  std::string section, name;
  uint32_t packet = 0, burst = 0;
  double mib = 0;            // bytes counted (see section)
  double gbps = 0, anchor_gbps = 0, target = 0;
  double ratio() const { return anchor_gbps > 0 ? gbps / anchor_gbps : 0; }
};

template <class T>
struct DevBuf {  // device memory, or pinned host memory (mapped) when host
  T* p = nullptr;
  bool host = false;
  explicit DevBuf(uint64_t n, bool pinned_host = false) : host(pinned_host) {
    void* v = nullptr;
    CK(host ? cudaHostAlloc(&v, n * sizeof(T), cudaHostAllocMapped) : cudaMalloc(&v, n * sizeof(T)));
    p = static_cast<T*>(v);
  }
  ~DevBuf() { host ? cudaFreeHost(p) : cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

// Median milliseconds of `reps` runs of fn (enqueued on stream), after warm-up.
double median_ms(const Options& o, cudaStream_t stream, const std::function<void()>& fn) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = 0; r < kWarmup + o.reps; ++r) {
    CK(cudaEventRecord(a, stream));
    fn();
    CK(cudaEventRecord(b, stream));
    CK(cudaEventSynchronize(b));
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    if (r >= kWarmup) ms.push_back(t);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

unsigned grid_for(const void* kernel, int gpu) {
  int sms = 0, per_sm = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  return static_cast<unsigned>(sms * std::max(per_sm, 1));
}

// Compares the GPU's output ring with the reference applied to host copies; exits on a mismatch.
void check_output(const char* what, const PlaceJob& dev_job, const std::vector<PlacementEntry>& host_entries,
                  const std::byte* host_in_base, uint64_t dev_in_base) {
  const uint64_t out_bytes = uint64_t{dev_job.out_slot_bytes} * host_entries.size();
  std::vector<std::byte> got(out_bytes), want(out_bytes, std::byte{0xA5});
  CK(cudaMemcpy(got.data(), dev_job.out, out_bytes, cudaMemcpyDeviceToHost));
  std::vector<PlacementEntry> rebased(host_entries);
  for (auto& e : rebased)  // device addresses -> the host copy of the same input
    if (e.src) e.src = e.src - dev_in_base + reinterpret_cast<uint64_t>(host_in_base);
  PlaceJob job = dev_job;
  job.entries = rebased.data();
  job.out = want.data();
  place_reference(job);
  if (got != want) {
    const auto mm = std::mismatch(got.begin(), got.end(), want.begin());
    std::fprintf(stderr, "%s: output differs from the CPU reference at byte %zu\n", what,
                 static_cast<size_t>(mm.first - got.begin()));
    std::exit(3);
  }
}

// (a) packets packed in device memory (as the stager leaves them) -> random slots.
void bench_place(const Options& o, cudaStream_t stream, std::vector<Row>& rows) {
  std::mt19937_64 rng(1);
  for (uint32_t size : {1024u, 8192u}) {
    for (SampleFormat out_fmt : {SampleFormat::raw, SampleFormat::fp32}) {
      const SampleFormat in_fmt = out_fmt == SampleFormat::raw ? SampleFormat::raw : SampleFormat::int16;
      const uint32_t n = static_cast<uint32_t>((o.d2d_mib << 20) / size);
      const uint32_t out_size = static_cast<uint32_t>(converted_bytes(size, in_fmt, out_fmt));
      std::vector<std::byte> in_host(uint64_t{n} * size);
      for (size_t i = 0; i < in_host.size(); i += 8) {
        const uint64_t r = rng();
        std::memcpy(&in_host[i], &r, 8);
      }
      DevBuf<std::byte> in(in_host.size()), out(uint64_t{n} * out_size);
      DevBuf<PlacementEntry> entries(n);
      CK(cudaMemcpy(in.p, in_host.data(), in_host.size(), cudaMemcpyHostToDevice));
      std::vector<uint32_t> slots(n);
      std::iota(slots.begin(), slots.end(), 0u);
      std::shuffle(slots.begin(), slots.end(), rng);
      std::vector<PlacementEntry> e(n);
      for (uint32_t i = 0; i < n; ++i) e[i] = {reinterpret_cast<uint64_t>(in.p) + uint64_t{i} * size, slots[i], 0};
      CK(cudaMemcpy(entries.p, e.data(), sizeof(PlacementEntry) * n, cudaMemcpyHostToDevice));
      PlaceJob job{entries.p, n, size, out.p, out_size, in_fmt, out_fmt, ByteOrder::big};
      const double moved = double(n) * (size + out_size);  // read + written

      // The anchor: cudaMemcpy D2D moving as many bytes (half read, half written).
      const uint64_t copy_bytes = (uint64_t{n} * size + uint64_t{n} * out_size) / 2;
      DevBuf<std::byte> a(copy_bytes), b(copy_bytes);
      const double t_copy = median_ms(o, stream, [&] { CK(cudaMemcpyAsync(b.p, a.p, copy_bytes, cudaMemcpyDeviceToDevice, stream)); });

      const std::string conv = out_fmt == SampleFormat::raw ? "raw" : "int16be->fp32";
      struct Kernel {
        const char* name;
        void (*fn)(PlaceJob);
      };
      for (const Kernel k : {Kernel{"", place_k}, Kernel{" (block/packet)", block_per_packet_k}}) {
        const unsigned grid = grid_for(reinterpret_cast<const void*>(k.fn), o.gpu);
        CK(cudaMemsetAsync(out.p, 0xA5, uint64_t{n} * out_size, stream));
        k.fn<<<grid, kThreads, 0, stream>>>(job);
        CK(cudaStreamSynchronize(stream));
        check_output((conv + k.name).c_str(), job, e, in_host.data(), reinterpret_cast<uint64_t>(in.p));
        const double t = median_ms(o, stream, [&] { k.fn<<<grid, kThreads, 0, stream>>>(job); });
        Row r{"a_place_vs_d2d", conv + k.name, size, 0, moved / (1 << 20), gbps(moved, t), gbps(2.0 * copy_bytes, t_copy), 0.8};
        if (*k.name) r.target = 0;  // shown for the design choice only
        rows.push_back(r);
      }
    }
  }
}

// (s) span jobs against D2D, packets in device memory. The packets are the SPEAD generator's
// (16 frames, repeated: packet n is packet n % P's bytes in frame n / 256), laid out as a
// pool (stride rounded to 64 bytes); `misalign` puts each packet's frame bytes that many bytes
// past a 16-byte boundary (0: aligned as (a)'s packets; 2: where a UDP payload's 42-byte
// offset plus SPEAD's 40-byte header puts them, 82 = 5 x 16 + 2).
void bench_spans(const Options& o, cudaStream_t stream, std::vector<Row>& rows) {
  constexpr uint32_t kPerFrame = 256, kFrames = 16;
  const uint32_t max_grid = place_max_grid(o.gpu);
  for (uint32_t size : {1024u, 8192u}) {
    const benchspan::SpanTraffic t = benchspan::make_span_traffic(benchspan::Proto::spead, size, kPerFrame, kFrames);
    const uint32_t n = static_cast<uint32_t>((o.d2d_mib << 20) / size) / kPerFrame * kPerFrame;
    const uint64_t frame_bytes = t.frame_bytes(), out_bytes = uint64_t{n} * size;
    for (uint32_t misalign : {0u, 2u}) {
      const uint32_t lead = (misalign + 16 - t.header % 16) % 16;  // frame bytes at lead + header
      const uint64_t stride = (lead + t.header + size + 63) / 64 * 64;
      std::vector<std::byte> in_host(stride * n);
      for (uint32_t i = 0; i < n; ++i)
        std::memcpy(&in_host[i * stride + lead], t.t.packets[i % t.packets()].payload.data(), t.header + size);
      DevBuf<std::byte> in(in_host.size()), out(out_bytes);
      CK(cudaMemcpy(in.p, in_host.data(), in_host.size(), cudaMemcpyHostToDevice));
      // One span per packet (the generator's truth: frame n / 256, offset (n % 256) x size),
      // entries in random order; the slot job places the same bytes at the same places.
      std::vector<uint32_t> order(n);
      std::iota(order.begin(), order.end(), 0u);
      std::mt19937_64 rng(size + misalign);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<SpanEntry> se(n);
      std::vector<PlacementEntry> pe(n);
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t i = order[k];
        const testgen::TruthSpan& sp = t.t.packets[i % t.packets()].spans.at(0);
        const uint64_t frame = i / kPerFrame;  // sp.frame + 16 x the repetition
        const uint64_t src = reinterpret_cast<uint64_t>(in.p) + i * stride + lead + sp.packet_offset;
        se[k] = SpanEntry{src, frame * frame_bytes + sp.offset, sp.bytes, 0};
        pe[k] = PlacementEntry{src, i, 0};  // slot i = frame i / 256, offset (i % 256) x size
      }
      DevBuf<SpanEntry> span_entries(n);
      DevBuf<PlacementEntry> slot_entries(n);
      CK(cudaMemcpy(span_entries.p, se.data(), sizeof(SpanEntry) * n, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(slot_entries.p, pe.data(), sizeof(PlacementEntry) * n, cudaMemcpyHostToDevice));
      PlaceJob span_job;
      span_job.span_entries = span_entries.p;
      span_job.count = n;
      span_job.in_bytes = size;  // the largest span
      span_job.out = out.p;
      span_job.out_slot_bytes = size;
      span_job.spans = 1;
      PlaceJob slot_job{slot_entries.p, n, size, out.p, size, SampleFormat::raw, SampleFormat::raw, ByteOrder::little};
      const uint32_t grid = place_grid(n, max_grid);

      const DevBuf<std::byte> a(out_bytes), b(out_bytes);  // the anchor: D2D of the bytes placed
      const double t_copy = median_ms(o, stream, [&] { CK(cudaMemcpyAsync(b.p, a.p, out_bytes, cudaMemcpyDeviceToDevice, stream)); });
      const double moved = 2.0 * double(out_bytes);  // read + written

      // Every frame must be the generator's frame (each job checked alone).
      std::vector<std::byte> got(out_bytes);
      for (const PlaceJob* job : {&span_job, &slot_job}) {
        CK(cudaMemsetAsync(out.p, 0xA5, out_bytes, stream));
        CK(launch_place(*job, grid, stream));
        CK(cudaStreamSynchronize(stream));
        CK(cudaMemcpy(got.data(), out.p, out_bytes, cudaMemcpyDeviceToHost));
        for (uint64_t f = 0; f < n / kPerFrame; ++f)
          if (std::memcmp(got.data() + f * frame_bytes, t.truth(f).data(), frame_bytes) != 0) {
            std::fprintf(stderr, "%s job, %u B packets: frame %llu differs from the generator's\n",
                         job->spans ? "span" : "slot", size, static_cast<unsigned long long>(f));
            std::exit(3);
          }
      }
      const double t_span = median_ms(o, stream, [&] { CK(launch_place(span_job, grid, stream)); });
      const double t_slot = median_ms(o, stream, [&] { CK(launch_place(slot_job, grid, stream)); });
      const std::string at = misalign ? " +" + std::to_string(misalign) + " B" : "";
      rows.push_back({"s_spans_vs_d2d", "spans (launch_place)" + at, size, 0, moved / (1 << 20), gbps(moved, t_span),
                      gbps(moved, t_copy), size == 8192 && !misalign ? 0.8 : 0});
      rows.push_back({"s_spans_vs_d2d", "slots (launch_place)" + at, size, 0, moved / (1 << 20), gbps(moved, t_slot),
                      gbps(moved, t_copy), 0});
    }
  }
}

// The anchor of (b) and (c): one pinned host-to-device copy of `bytes` bytes, GB/s.
double h2d_anchor_gbps(const Options& o, cudaStream_t stream, const DevBuf<std::byte>& packed_host,
                       const DevBuf<std::byte>& dev, uint64_t bytes) {
  const double t_h2d = median_ms(o, stream, [&] {
    CK(cudaMemcpyAsync(dev.p, packed_host.p, bytes, cudaMemcpyHostToDevice, stream));
  });
  return gbps(double(bytes), t_h2d);
}

// h2d: the anchor alone, per packet size (the same bytes as (b) and (c) copy).
void bench_h2d_anchor(const Options& o, cudaStream_t stream, std::vector<Row>& rows) {
  for (uint32_t size : {1024u, 8192u}) {
    const uint64_t bytes = uint64_t{static_cast<uint32_t>((o.h2d_mib << 20) / size)} * size;
    DevBuf<std::byte> packed_host(bytes, true), dev(bytes);
    std::memset(packed_host.p, 0x5A, bytes);
    const double anchor = h2d_anchor_gbps(o, stream, packed_host, dev, bytes);
    rows.push_back({"h2d_pinned", "cudaMemcpy pinned H2D", size, 0, double(bytes) / (1 << 20), anchor, anchor, 0});
  }
}

// (b) and (c): packets in pinned buffers scattered over a pool, in random order.
void bench_h2d(const Options& o, cudaStream_t stream, std::vector<Row>& rows) {
  std::mt19937_64 rng(2);
  for (uint32_t size : {1024u, 8192u}) {
    const uint32_t stride = (size + 63) / 64 * 64;
    const uint32_t n = static_cast<uint32_t>((o.h2d_mib << 20) / size);
    DevBuf<std::byte> pool(uint64_t{n} * stride, true), packed_host(uint64_t{n} * size, true);
    for (uint64_t i = 0; i < uint64_t{n} * stride; i += 8) {
      const uint64_t r = rng();
      std::memcpy(pool.p + i, &r, 8);
    }
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<const void*> srcs(n);
    for (uint32_t i = 0; i < n; ++i) srcs[i] = pool.p + uint64_t{order[i]} * stride;
    const double bytes = double(n) * size;

    // The anchor: one pinned host-to-device copy of the same bytes.
    DevBuf<std::byte> dev(uint64_t{n} * size);
    const double anchor = h2d_anchor_gbps(o, stream, packed_host, dev, uint64_t{n} * size);

    // Bursts driven as the frame pipeline drives the Stager: one caller stream, stage() of
    // each burst then (check pass only) a consumer on that stream reading the slot, bursts
    // queued back to back with kSlots in flight, a slot staged into again only after the
    // event recorded on the caller stream after its previous burst completed (the slot
    // reuse contract). Each option of the Stager is a row; "caller stream" is the gather
    // queued on the caller's stream itself (no overlap between bursts), "N streams" the
    // Stager's own streams ordered with the caller's by events.
    struct Case {
      std::string name;
      StagerOptions opts;
    };
    const uint32_t ns = o.stager_streams;
    const std::string own = std::to_string(ns) + (ns == 1 ? " stream" : " streams");
    const Case cases[] = {
        {"stager sm, caller stream", {StagerEngine::sm, StagerEntries::mapped, 0}},
        {"stager sm, " + own, {StagerEngine::sm, StagerEntries::mapped, ns}},
        {"stager sm dev-entries, caller", {StagerEngine::sm, StagerEntries::device, 0}},
        {"stager sm dev-entries, " + own, {StagerEngine::sm, StagerEntries::device, ns}},
        {"stager copy_engine, caller", {StagerEngine::copy_engine, StagerEntries::mapped, 0}},
        {"stager copy_engine, " + own, {StagerEngine::copy_engine, StagerEntries::mapped, ns}},
    };
    DevBuf<std::byte> consumed(uint64_t{n} * size);
    for (const Case& c : cases) {
      if (!o.staged) break;
      if (ns == 0 && c.name.find("caller") == std::string::npos) continue;  // same as the caller row
      for (uint32_t burst : {64u, 1024u}) {
        const uint32_t bursts = n / burst, kSlots = 4;
        Stager st(o.gpu, kSlots, burst, size, c.opts);
        cudaEvent_t done[kSlots];
        for (cudaEvent_t& ev : done) CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
        auto run_all = [&](bool consume) {
          for (uint32_t b = 0; b < bursts; ++b) {
            const uint32_t slot = b % kSlots;
            if (b >= kSlots) CK(cudaEventSynchronize(done[slot]));
            CK(st.stage(slot, &srcs[uint64_t{b} * burst], burst, stream));
            if (consume)  // the placement job's stand-in: reads the slot in caller-stream order
              CK(cudaMemcpyAsync(consumed.p + uint64_t{b} * burst * size, st.slot_base(slot), uint64_t{burst} * size,
                                 cudaMemcpyDeviceToDevice, stream));
            CK(cudaEventRecord(done[slot], stream));
          }
        };
        // Check: every burst, read on the caller stream right after its stage(), is the packed
        // copy of its packets (the caller stream saw each gather complete, slots reused).
        CK(cudaMemsetAsync(consumed.p, 0xA5, uint64_t{n} * size, stream));
        run_all(true);
        CK(cudaStreamSynchronize(stream));
        std::vector<std::byte> got(uint64_t{bursts} * burst * size);
        CK(cudaMemcpy(got.data(), consumed.p, got.size(), cudaMemcpyDeviceToHost));
        for (uint64_t i = 0; i < uint64_t{bursts} * burst; ++i)
          if (std::memcmp(got.data() + i * size, srcs[i], size) != 0) {
            std::fprintf(stderr, "%s: burst %u packet %u differs\n", c.name.c_str(), static_cast<unsigned>(i / burst),
                         static_cast<unsigned>(i % burst));
            std::exit(3);
          }
        const double t = median_ms(o, stream, [&] { run_all(false); });
        for (cudaEvent_t ev : done) CK(cudaEventDestroy(ev));
        rows.push_back({"b_staged_vs_h2d", c.name, size, burst, bytes / (1 << 20),
                        gbps(double(bursts) * burst * size, t), anchor, 0.9});
      }
    }

    if (!o.zero_copy) continue;
    // (c) the place kernel reads the pool itself (mapped pinned memory, same address on the GPU).
    std::vector<uint32_t> slots(n);
    std::iota(slots.begin(), slots.end(), 0u);
    std::shuffle(slots.begin(), slots.end(), rng);
    std::vector<PlacementEntry> e(n);
    for (uint32_t i = 0; i < n; ++i) e[i] = {reinterpret_cast<uint64_t>(srcs[i]), slots[i], 0};
    DevBuf<PlacementEntry> entries(n);
    CK(cudaMemcpy(entries.p, e.data(), sizeof(PlacementEntry) * n, cudaMemcpyHostToDevice));
    PlaceJob all{entries.p, n, size, dev.p, size, SampleFormat::raw, SampleFormat::raw, ByteOrder::little};
    const unsigned max_grid = grid_for(reinterpret_cast<const void*>(place_k), o.gpu);
    CK(cudaMemsetAsync(dev.p, 0xA5, uint64_t{n} * size, stream));
    place_k<<<max_grid, kThreads, 0, stream>>>(all);
    CK(cudaStreamSynchronize(stream));
    check_output("zero-copy", all, e, pool.p, reinterpret_cast<uint64_t>(pool.p));
    for (uint32_t burst : {64u, 1024u, n}) {
      const uint32_t bursts = n / burst;
      const unsigned grid = std::min(burst, max_grid);  // as the per-burst executor sizes it
      const double t = median_ms(o, stream, [&] {
        for (uint32_t b = 0; b < bursts; ++b) {
          PlaceJob j = all;
          j.entries = entries.p + uint64_t{b} * burst;
          j.count = burst;
          place_k<<<grid, kThreads, 0, stream>>>(j);
        }
      });
      rows.push_back({"c_zero_copy_vs_h2d", burst == n ? "zero-copy, one job" : "zero-copy", size, burst,
                      bytes / (1 << 20), gbps(double(bursts) * burst * size, t), anchor, 0});
    }
  }
}

void print(const std::vector<Row>& rows) {
  std::printf("%-20s %-36s %7s %6s %8s %12s %12s %6s %s\n", "section", "case", "packet", "burst", "MiB",
              "netdaq GB/s", "anchor GB/s", "ratio", "target");
  for (const Row& r : rows) {
    char target[32] = "-";
    if (r.target > 0) std::snprintf(target, sizeof target, ">= %.1f %s", r.target, r.ratio() >= r.target ? "ok" : "MISSED");
    std::printf("%-20s %-36s %7u %6s %8.0f %12.1f %12.1f %6.2f %s\n", r.section.c_str(), r.name.c_str(), r.packet,
                r.burst ? std::to_string(r.burst).c_str() : "-", r.mib, r.gbps, r.anchor_gbps, r.ratio(), target);
  }
}

void write_json(const std::string& path, const std::string& device, const std::vector<Row>& rows) {
  FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::fprintf(f, "{\n  \"bench\": \"gpu_throughput\",\n  \"device\": \"%s\",\n  \"results\": [\n", device.c_str());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::fprintf(f,
                 "    {\"section\": \"%s\", \"case\": \"%s\", \"packet_bytes\": %u, \"burst\": %u, \"mib\": %.1f, "
                 "\"gbps\": %.2f, \"anchor_gbps\": %.2f, \"ratio\": %.3f, \"target\": %.1f, \"ok\": %s}%s\n",
                 r.section.c_str(), r.name.c_str(), r.packet, r.burst, r.mib, r.gbps, r.anchor_gbps, r.ratio(), r.target,
                 r.target == 0 || r.ratio() >= r.target ? "true" : "false", i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  if (f != stdout) std::fclose(f);
}

// --sections LIST: false (said on stderr) for an unknown section or an empty list.
bool parse_sections(const std::string& list, Options& o) {
  o.place = o.staged = o.zero_copy = o.h2d = o.spans = false;
  size_t start = 0, n = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string s = list.substr(start, end - start);
    start = end + 1;
    if (s.empty()) continue;
    ++n;
    if (s == "a" || s == "place") o.place = true;
    else if (s == "b" || s == "staged") o.staged = true;
    else if (s == "c" || s == "zero_copy") o.zero_copy = true;
    else if (s == "h2d") o.h2d = true;
    else if (s == "s" || s == "spans") o.spans = true;
    else {
      std::fprintf(stderr, "--sections: unknown section '%s' (a|place, b|staged, c|zero_copy, h2d, s|spans)\n", s.c_str());
      return false;
    }
  }
  if (n == 0) std::fprintf(stderr, "--sections: empty list (a|place, b|staged, c|zero_copy, h2d, s|spans)\n");
  return n > 0;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--json" && has) o.json = argv[++i];
    else if (a == "--sections" && has) {
      if (!parse_sections(argv[++i], o)) std::exit(1);
    } else if (a == "--d2d-mib" && has) o.d2d_mib = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--h2d-mib" && has) o.h2d_mib = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--reps" && has) o.reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--gpu" && has) o.gpu = std::atoi(argv[++i]);
    else if (a == "--stager-streams" && has) o.stager_streams = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    else {
      std::fprintf(stderr,
                   "usage: %s [--sections a,b,c,h2d,s] [--d2d-mib N] [--h2d-mib N] [--reps N] [--gpu I] [--stager-streams N] "
                   "[--json PATH]\n",
                   argv[0]);
      std::exit(a == "--help" ? 0 : 1);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= o.gpu) {
    std::fprintf(stderr, "gpu_throughput: no usable GPU %d\n", o.gpu);
    return 1;
  }
  CK(cudaSetDevice(o.gpu));
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, o.gpu));
  std::printf("gpu %d: %s, %d SMs; D2D %llu MiB, H2D %llu MiB per measurement, median of %d\n", o.gpu, p.name,
              p.multiProcessorCount, static_cast<unsigned long long>(o.d2d_mib),
              static_cast<unsigned long long>(o.h2d_mib), o.reps);
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<Row> rows;
  if (o.place) bench_place(o, stream, rows);
  if (o.h2d) bench_h2d_anchor(o, stream, rows);
  if (o.staged || o.zero_copy) bench_h2d(o, stream, rows);
  if (o.spans) bench_spans(o, stream, rows);
  print(rows);
  if (!o.json.empty()) write_json(o.json, p.name, rows);
  CK(cudaStreamDestroy(stream));
  return 0;
}
