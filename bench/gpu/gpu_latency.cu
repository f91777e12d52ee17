// Per-burst latency and throughput of the three ways to run GPU work (bench/gpu/README.md):
// launch per burst, CUDA graph replay, persistent kernel (1 CTA per 8 SMs, and 1 per SM),
// each persistent grid as 1 group (every CTA on every burst) and as 4 groups (up to 4 bursts
// placed at once, burst k by group k % 4).
//
//   netdaq_gpu_latency [--bursts N] [--max-seconds S] [--gpu I] [--json PATH]
//
// Latency: one burst in flight; submit() to completed() seen on the CPU, median and p99 (us).
// Throughput: up to 4 bursts in flight, payload Gb/s placed. Packets sit in device memory;
// each burst places them into random slots of its own part of an output ring.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu/place_executor.h"
#include "netdaq/status.h"

namespace {

using namespace netdaq;
using namespace netdaq::gpu;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kJobs = 16;   // distinct bursts cycled through (different slots each)
constexpr uint32_t kWarmup = 200;
constexpr uint32_t kDepth = 4;

void cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw Error(Errc::resource, std::string(what) + ": " + cudaGetErrorString(err));
}

struct Options {
  uint32_t bursts = 2000;
  double max_seconds = 10;  // per case and phase
  int gpu = 0;
  std::string json;
};

struct Mode {
  const char* name;
  LaunchMode mode;
  bool all_sms;     // persistent: 1 CTA per SM instead of the default 1 per 8
  uint32_t groups;  // persistent: ExecutorOptions::groups
};

struct Result {
  std::string mode;
  uint32_t packets, bytes;
  uint32_t latency_bursts = 0, throughput_bursts = 0;
  double median_us = 0, p99_us = 0, min_us = 0, gbps = 0;
};

// Device buffers of one case, allocated before the executor exists and freed after it is
// gone (cudaFree may synchronize the device, which a persistent kernel never lets finish).
struct CaseData {
  CaseData(uint32_t packets, uint32_t bytes) {
    const size_t in_bytes = size_t{packets} * bytes, out_slots = size_t{kJobs} * packets;
    cuda(cudaMalloc(&in, in_bytes), "cudaMalloc(in)");
    cuda(cudaMalloc(&out, out_slots * bytes), "cudaMalloc(out)");
    cuda(cudaMalloc(&entries, out_slots * sizeof(PlacementEntry)), "cudaMalloc(entries)");
    std::vector<std::byte> fill(in_bytes);
    std::mt19937 rng(packets * 31 + bytes);
    for (auto& b : fill) b = std::byte(rng());
    cuda(cudaMemcpy(in, fill.data(), in_bytes, cudaMemcpyHostToDevice), "cudaMemcpy(in)");
    std::vector<PlacementEntry> e(out_slots);
    for (uint32_t j = 0; j < kJobs; ++j) {
      std::vector<uint32_t> slots(packets);
      std::iota(slots.begin(), slots.end(), j * packets);
      std::shuffle(slots.begin(), slots.end(), rng);
      for (uint32_t i = 0; i < packets; ++i)
        e[size_t{j} * packets + i] = {reinterpret_cast<uint64_t>(in + size_t{i} * bytes), slots[i], 0};
      PlaceJob job;
      job.entries = entries + size_t{j} * packets;
      job.count = packets;
      job.in_bytes = bytes;
      job.out = out;
      job.out_slot_bytes = bytes;
      jobs.push_back(job);
    }
    cuda(cudaMemcpy(entries, e.data(), e.size() * sizeof e[0], cudaMemcpyHostToDevice), "cudaMemcpy(entries)");
  }
  ~CaseData() {
    cudaFree(in);
    cudaFree(out);
    cudaFree(entries);
  }
  std::byte* in = nullptr;
  std::byte* out = nullptr;
  PlacementEntry* entries = nullptr;
  std::vector<PlaceJob> jobs;
};

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

void wait_all(PlaceExecutor& ex, Clock::time_point deadline) {
  while (ex.completed() < ex.submitted())
    if (Clock::now() > deadline) throw Error(Errc::state, "bursts did not finish in time");
}

Result run_case(const Mode& m, uint32_t packets, uint32_t bytes, const Options& opt, int sms) {
  CaseData data(packets, bytes);
  Result r{m.name, packets, bytes};
  ExecutorOptions eo;
  eo.gpu = opt.gpu;
  eo.depth = kDepth;
  eo.max_entries = packets;
  // One CTA per SM (the default), or the earlier default of one per 8 SMs for comparison.
  eo.blocks = m.all_sms ? static_cast<uint32_t>(sms) : static_cast<uint32_t>(std::max(1, sms / 8));
  eo.groups = m.groups;
  auto ex = make_executor(m.mode, eo);
  const auto budget = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.max_seconds));

  // Latency: one burst at a time.
  std::vector<double> us;
  us.reserve(opt.bursts);
  auto deadline = Clock::now() + budget;
  for (uint32_t i = 0; i < kWarmup + opt.bursts && Clock::now() < deadline; ++i) {
    const auto t0 = Clock::now();
    if (!ex->submit(data.jobs[i % kJobs])) throw Error(Errc::state, "submit refused with nothing in flight");
    wait_all(*ex, deadline + std::chrono::seconds(5));
    const auto t1 = Clock::now();
    if (i >= kWarmup) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  r.latency_bursts = static_cast<uint32_t>(us.size());
  r.min_us = us.empty() ? 0 : *std::min_element(us.begin(), us.end());
  r.median_us = percentile(us, 0.5);
  r.p99_us = percentile(us, 0.99);

  // Throughput: keep kDepth bursts in flight.
  deadline = Clock::now() + budget;
  const uint64_t base = ex->submitted();
  const uint64_t target = base + opt.bursts;
  const auto t0 = Clock::now();
  while (ex->submitted() < target && Clock::now() < deadline)
    if (!ex->submit(data.jobs[ex->submitted() % kJobs])) ex->completed();
  wait_all(*ex, deadline + std::chrono::seconds(5));
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  r.throughput_bursts = static_cast<uint32_t>(ex->submitted() - base);
  r.gbps = double(r.throughput_bursts) * packets * bytes * 8 / secs / 1e9;
  ex->synchronize();
  ex.reset();  // before `data` is freed
  return r;
}

void write_json(const std::string& path, const std::vector<Result>& rs, const char* device, const Options& opt) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw Error(Errc::system, "cannot write " + path);
  std::fprintf(f, "{\n  \"bench\": \"gpu_latency\",\n  \"device\": \"%s\",\n  \"bursts\": %u,\n  \"depth\": %u,\n",
               device, opt.bursts, kDepth);
  std::fprintf(f, "  \"cases\": [\n");
  for (size_t i = 0; i < rs.size(); ++i) {
    const Result& r = rs[i];
    std::fprintf(f,
                 "    {\"mode\": \"%s\", \"packets\": %u, \"packet_bytes\": %u, \"latency_bursts\": %u, "
                 "\"latency_us\": {\"min\": %.2f, \"median\": %.2f, \"p99\": %.2f}, "
                 "\"throughput_bursts\": %u, \"throughput_gbps\": %.2f}%s\n",
                 r.mode.c_str(), r.packets, r.bytes, r.latency_bursts, r.min_us, r.median_us, r.p99_us,
                 r.throughput_bursts, r.gbps, i + 1 < rs.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

int run(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(Errc::invalid_config, a + " needs a value");
      return argv[++i];
    };
    if (a == "--json") opt.json = value();
    else if (a == "--bursts") opt.bursts = static_cast<uint32_t>(std::stoul(value()));
    else if (a == "--max-seconds") opt.max_seconds = std::stod(value());
    else if (a == "--gpu") opt.gpu = std::stoi(value());
    else {
      std::fprintf(stderr, "usage: %s [--bursts N] [--max-seconds S] [--gpu I] [--json PATH]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop{};
  cuda(cudaGetDeviceProperties(&prop, opt.gpu), "cudaGetDeviceProperties");
  cuda(cudaSetDevice(opt.gpu), "cudaSetDevice");
  std::printf("gpu %d: %s, %d SMs; %u bursts per case after %u warm-up, throughput at depth %u\n", opt.gpu, prop.name,
              prop.multiProcessorCount, opt.bursts, kWarmup, kDepth);

  const Mode modes[] = {{"per_burst", LaunchMode::per_burst, false, 0},
                        {"graph", LaunchMode::graph, false, 0},
                        {"persistent_g1", LaunchMode::persistent, true, 1},
                        {"persistent_g4", LaunchMode::persistent, true, 4},
                        {"persistent_sm/8_g1", LaunchMode::persistent, false, 1},
                        {"persistent_sm/8_g4", LaunchMode::persistent, false, 4}};
  std::vector<Result> results;
  std::printf("%-20s %7s %6s %10s %10s %10s %12s\n", "mode", "packets", "bytes", "min us", "median us", "p99 us",
              "Gb/s depth4");
  for (uint32_t bytes : {1024u, 8192u})
    for (uint32_t packets : {16u, 64u, 1024u})
      for (const Mode& m : modes) {
        const Result r = run_case(m, packets, bytes, opt, prop.multiProcessorCount);
        std::printf("%-20s %7u %6u %10.2f %10.2f %10.2f %12.1f\n", r.mode.c_str(), r.packets, r.bytes, r.min_us,
                    r.median_us, r.p99_us, r.gbps);
        if (r.latency_bursts < opt.bursts || r.throughput_bursts < opt.bursts)
          std::printf("  (time limit: %u latency / %u throughput bursts)\n", r.latency_bursts, r.throughput_bursts);
        results.push_back(r);
      }
  if (!opt.json.empty()) write_json(opt.json, results, prop.name, opt);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_latency: %s\n", e.what());
    return 1;
  }
}
