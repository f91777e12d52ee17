// gpu_frames: receive into GPU frames with gpu::FramePipeline and print each frame's index,
// whether it is complete, and how many packets it misses (their slots hold zeros).
//
//   gpu_frames CONFIG [--frames N] [--seconds S]     (defaults: no frame limit, 30 s)
// Exit: 0 ran, 1 bad arguments / config / error, 77 cannot run here (no CUDA in netdaq, no GPU).
#include <netdaq/netdaq.h>

#include <bit>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;
volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) { g_stop = 1; }

void print(const netdaq::gpu::Frame& f) {
  unsigned missing = 0;  // bit i set: packet i of the frame never came
  for (uint64_t word : f.missing()) missing += static_cast<unsigned>(std::popcount(word));
  std::printf("frame %llu: %s, %u/%u packets, missing=%u, %zu bytes at GPU address %p\n",
              (unsigned long long)f.index(), f.complete() ? "complete" : "incomplete", f.packets_received(),
              f.packets_expected(), missing, f.size_bytes(), f.data());
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  uint64_t max_frames = 0;
  double seconds = 30;
  bool ok = true;
  for (int i = 1; i < argc && ok; ++i) {
    const std::string opt = argv[i];
    char* end = nullptr;
    if (opt[0] != '-' && path.empty()) path = opt;
    else if (opt == "--frames" && i + 1 < argc) max_frames = std::strtoull(argv[++i], &end, 10);
    else if (opt == "--seconds" && i + 1 < argc) seconds = std::strtod(argv[++i], &end);
    else ok = false;
    if (end && *end != '\0') ok = false;
  }
  if (!ok || path.empty()) {
    std::fprintf(stderr, "usage: %s CONFIG [--frames N] [--seconds S]\n", argv[0]);
    return 1;
  }
  // Ask before opening anything: a netdaq built without CUDA, or a machine without a usable
  // GPU (no driver, CUDA_VISIBLE_DEVICES=''), is not an error of this program.
  if (!netdaq::gpu::built_in()) {
    std::fprintf(stderr, "gpu_frames: cannot run: %s\n", netdaq::gpu::unavailable_reason().c_str());
    return 77;
  }
  if (const auto why = netdaq::gpu::unavailable_reason(); !why.empty()) {
    std::fprintf(stderr, "gpu_frames: no usable GPU: %s\n", why.c_str());
    return 77;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    const auto cfg = netdaq::Config::load(path);
    const netdaq::InterfaceConfig* iface = nullptr;  // the first interface with an rx.reorder
    for (const auto& i : cfg.interfaces)
      if (!i.rx.reorder.empty()) { iface = &i; break; }
    if (!iface) throw netdaq::Error(netdaq::Errc::invalid_config, path + ": no interface has rx.reorder");
    const auto& rcfg = iface->rx.reorder[0];

    netdaq::Session session{cfg};
    netdaq::gpu::FramePipeline frames(session, iface->name, rcfg);  // after the session: destroyed first
    auto& q = session.rx_queue(iface->name, rcfg.queue);
    std::printf("gpu_frames: %s -> frames of %u packets (%zu bytes) on GPU %d\n", q.name().c_str(),
                rcfg.packets_per_frame, frames.frame_bytes(), rcfg.gpu);

    uint64_t n = 0;
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    while (!g_stop && (max_frames == 0 || n < max_frames) && Clock::now() < deadline) {
      if (auto burst = q.poll()) frames.submit(std::move(burst));  // buffers return once the GPU read them
      else std::this_thread::sleep_for(std::chrono::microseconds(20));
      while (auto f = frames.next_frame()) {  // frames come out in order, each once its GPU work is done
        print(f);  // your kernel goes here, on frames.stream(): f.data() is device memory
        ++n;
      }  // releasing f hands its buffer back to the pipeline
    }
    // End of run: close the open frames and collect them (bounded: their GPU work is queued).
    frames.flush();
    frames.synchronize();
    for (int tries = 0; tries < 100 && (max_frames == 0 || n < max_frames); ++tries) {
      auto f = frames.next_frame();
      if (!f) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); continue; }
      print(f);
      ++n;
    }
    const auto s = frames.stats();
    std::printf("summary: frames=%llu complete=%llu incomplete=%llu packets_in=%llu packets_missing=%llu\n",
                (unsigned long long)n, (unsigned long long)s.frames_complete, (unsigned long long)s.frames_incomplete,
                (unsigned long long)s.packets_in, (unsigned long long)s.packets_missing);
    return 0;
  } catch (const netdaq::ConfigError& e) {  // every problem in the file, with file:line:col
    std::fprintf(stderr, "gpu_frames: %s\n", e.what());
    return 1;
  } catch (const netdaq::Error& e) {  // wrong GPU index, memory the GPU cannot read, CUDA fault, ...
    std::fprintf(stderr, "gpu_frames: %s\n", e.what());
    return 1;
  }
}
