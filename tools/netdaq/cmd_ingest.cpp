// netdaq ingest CONFIG: an ingest node of a fleet (docs/fleet.md). Receives an rx queue's
// packets into frames in host memory (a reorder entry with `frames: host`, any mode placed by
// the sensor's headers), or in GPU memory (`frames: gpu`, any mode: staged into pinned host
// buffers first, ingest_gpu.h), and sends every frame, or the fragment of it the route names, to the
// builders of the `fleet:` block over UCX. A frame's buffer goes back to the assembler when
// the sink no longer reads it. Says what came and what became of every fragment.
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "errors.h"
#include "fleet_block.h"
#include "fleet_metrics.h"
#include "fleet_report.h"
#include "idle_backoff.h"
#include "ingest_gpu.h"
#include "netdaq/host_frames.h"
#include "netdaq/netdaq.h"
#include "signals.h"

namespace netdaq::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct IngestOptions {
  std::string config;
  std::string metrics;
  double metrics_linger = 0;
  uint64_t frames = 0;       // stop after this many frames were sent (0: no limit)
  double duration = 0;
  uint32_t idle_ms = 0;      // after the first packet, stop when nothing came for this long
  uint32_t drain_ms = 5000;  // at the end: wait this long for the builders' credits
  std::string json;  // --json FILE ('-': stdout)
  bool expect_no_loss = false;
  uint32_t staging_buffers = 0;  // frames: gpu: pinned staging buffers (0: credits x builders + max_open_frames)
};

// The first reorder entry with frames: host (a span mode), else the first with frames: gpu.
const ReorderConfig* find_frames(const Config& cfg, const InterfaceConfig** iface) {
  for (const FrameTarget t : {FrameTarget::host, FrameTarget::gpu})
    for (const auto& i : cfg.interfaces)
      for (const auto& r : i.rx.reorder)
        if (r.frames == t && (t == FrameTarget::gpu || places_spans(r.mode))) {
          *iface = &i;
          return &r;
        }
  return nullptr;
}

uint64_t realtime_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

// The assembler's frames go to the sink; their buffers come back once the sink is done.
class FrameForwarder {
 public:
  FrameForwarder(HostFrameAssembler& frames, fleet::FrameSink& sink, uint32_t buffers)
      : frames_(frames), sink_(sink), held_(buffers), busy_(buffers, false) {}

  uint64_t forward() {
    uint64_t n = 0;
    HostFrameView f;
    while (frames_.pop(f)) {
      if (f.buffer >= held_.size()) {  // cannot happen: frame_buffers sized both
        frames_.release(f);
        continue;
      }
      held_[f.buffer] = f;
      busy_[f.buffer] = true;
      const uint64_t now = realtime_ns();
      fleet::OutFrame out;
      out.stream = f.stream;
      out.frame = f.frame;
      out.bytes = f.bytes;
      out.presence = f.presence;
      out.granule = f.granule;
      out.bytes_present = f.bytes_present;
      out.complete = f.complete;
      out.first_ns = out.last_ns = now;  // the frame was complete (or closed) now
      out.token = f.buffer;
      sink_.send(out);
      ++n;
      if (f.complete) ++complete_;
      else ++incomplete_;
      give_back();
    }
    return n;
  }

  void give_back() {
    sink_.progress();
    uint64_t token = 0;
    while (sink_.done(token))
      if (token < held_.size() && busy_[token]) {
        busy_[token] = false;
        frames_.release(held_[token]);
      }
  }

  uint64_t complete() const { return complete_; }
  uint64_t incomplete() const { return incomplete_; }

 private:
  HostFrameAssembler& frames_;
  fleet::FrameSink& sink_;
  std::vector<HostFrameView> held_;  // by buffer index
  std::vector<bool> busy_;
  uint64_t complete_ = 0, incomplete_ = 0;
};

int ingest(const IngestOptions& o) {
  const std::string err = "netdaq ingest: ";
  Config cfg;
  if (!setup_step([&] { cfg = Config::load(o.config); }, err + o.config + ": ")) return kExitError;
  const InterfaceConfig* iface = nullptr;
  const ReorderConfig* r = find_frames(cfg, &iface);
  if (!r) {
    std::fprintf(stderr,
                 "%s%s: no rx.reorder entry with frames: host (a mode placed by the sensor's headers) or frames: gpu\n",
                 err.c_str(), o.config.c_str());
    return kExitError;
  }
  fleet::SinkConfig sink_cfg;
  try {
    sink_cfg = sink_config(fleet_block(cfg));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s%s: fleet: %s\n", err.c_str(), o.config.c_str(), e.what());
    return kExitError;
  }
  const ReorderConfig reorder = *r;
  const std::string iface_name = iface->name;
  const bool on_gpu = reorder.frames == FrameTarget::gpu;
  // The sink holds a frame's buffer until its send completed: with fewer buffers than the
  // frames that may be in flight, the assembler runs out (counted no_buffer) before the credits do.
  const uint64_t in_flight = uint64_t{sink_cfg.credits} * sink_cfg.destinations.size() + reorder.max_open_frames;
  if (!on_gpu && reorder.frame_buffers < in_flight)
    std::fprintf(stderr,
                 "netdaq ingest: warning: frame_buffers %u < credits x builders + max_open_frames = %llu: frames "
                 "may be dropped (no_buffer) while the builders still have credit\n",
                 reorder.frame_buffers, (unsigned long long)in_flight);
  install_stop_signals();
  std::unique_ptr<Session> session;
  std::unique_ptr<HostFrameAssembler> frames;
  std::unique_ptr<GpuFrameForwarder> gpu_frames;  // frames: gpu
  std::unique_ptr<fleet::FrameSink> sink;
  std::unique_ptr<FleetMetrics> metrics;
  RxQueue* queue = nullptr;
  if (!setup_step(
          [&] {
            if (!on_gpu) frames = std::make_unique<HostFrameAssembler>(reorder);
            sink = std::make_unique<fleet::FrameSink>(sink_cfg);
            session = std::make_unique<Session>(std::move(cfg));
            queue = &session->rx_queue(iface_name, reorder.queue);
            if (on_gpu)
              gpu_frames = std::make_unique<GpuFrameForwarder>(*session, iface_name, reorder, *sink, o.staging_buffers);
            if (!o.metrics.empty()) metrics = std::make_unique<FleetMetrics>(o.metrics, session.get());
          },
          err))
    return kExitError;
  std::fprintf(stderr, "netdaq ingest: node %u of %u, %zu builder(s), route %s, %s, frames in %s%s%s\n",
               sink_cfg.node, sink_cfg.nodes, sink_cfg.destinations.size(), fleet::to_string(sink_cfg.route),
               fleet::to_string(sink_cfg.transport),
               on_gpu ? "GPU memory (staged into pinned host buffers)" : "host memory", metrics ? ", metrics at " : "",
               metrics ? metrics->url().c_str() : "");

  std::optional<FrameForwarder> host_forward;
  if (!on_gpu) host_forward.emplace(*frames, *sink, reorder.frame_buffers);
  uint64_t sent = 0;
  const auto t0 = Clock::now();
  auto last_packet = t0, last_publish = t0;
  bool any = false;
  IdleBackoff idle;
  while (!stop_requested() && !(o.frames && sent >= o.frames)) {
    const auto now = Clock::now();
    if (o.duration > 0 && now - t0 >= std::chrono::duration<double>(o.duration)) break;
    if (any && o.idle_ms && now - last_packet >= std::chrono::milliseconds(o.idle_ms)) break;
    if (metrics && now - last_publish >= std::chrono::milliseconds(100)) {
      metrics->publish(sink->stats());
      last_publish = now;
    }
    RxBurst burst = queue->poll();
    if (burst.empty()) {
      if (gpu_frames) sent += gpu_frames->forward();  // frames closed by their timeout, copies done
      else host_forward->give_back();
      idle.wait();
      continue;
    }
    idle.reset();
    any = true;
    last_packet = now;
    if (gpu_frames) {
      gpu_frames->receive(std::move(burst));
      sent += gpu_frames->forward();
      continue;
    }
    frames->receive(burst, payload_clock_ns());
    burst.release();
    sent += host_forward->forward();
  }
  if (gpu_frames) {
    sent += gpu_frames->finish(o.drain_ms);
  } else {
    frames->flush();
    sent += host_forward->forward();
  }
  const bool drained = sink->drain(o.drain_ms);
  if (gpu_frames) gpu_frames->give_back();
  else host_forward->give_back();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  session->stop();
  IngestResult res;
  res.frames = sent;
  res.frames_complete = gpu_frames ? gpu_frames->complete() : host_forward->complete();
  res.frames_incomplete = gpu_frames ? gpu_frames->incomplete() : host_forward->incomplete();
  res.frame_stats = gpu_frames ? gpu_frames->frame_stats() : frames->stats();
  if (gpu_frames) res.gpu = gpu_frames->staging();
  res.queues = session->stats();
  res.sink = sink->stats();
  res.drained = drained;
  res.seconds = seconds;
  if (metrics) metrics->publish(res.sink);
  if (!print_ingest_result(res, o.json)) return kExitError;
  if (metrics) metrics->linger(o.metrics_linger, stderr);
  if (!sink_invariant_holds(res.sink)) return kExitUnaccounted;
  if (o.expect_no_loss && res.sink.total.acked != res.sink.total.fragments) return kExitLoss;
  return kExitOk;
}

}  // namespace

void add_ingest_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<IngestOptions>();
  auto* cmd = app.add_subcommand(
      "ingest", "Be a fleet's ingest node: receive packets into frames and send them to builders over UCX");
  cmd->add_option("config", o->config,
                  "YAML config: an rx.reorder entry with frames: host (or frames: gpu), and a fleet: block")
      ->required();
  cmd->add_option("-n,--frames", o->frames, "Stop after sending N frames (0 = no limit)");
  cmd->add_option("-d,--duration", o->duration, "Stop after S seconds (0 = no limit)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--idle-ms", o->idle_ms, "After the first packet, stop when nothing came for this long (0 = never)");
  cmd->add_option("--drain-ms", o->drain_ms, "At the end, wait this long for the builders' credits (default 5000)");
  cmd->add_option("--metrics", o->metrics, "Serve Prometheus metrics at HOST:PORT (GET /metrics)");
  cmd->add_option("--metrics-linger", o->metrics_linger, "Keep serving the final counters this many seconds")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--json", o->json, "Write the result as JSON to FILE ('-' = stdout)");
  cmd->add_option("--staging-buffers", o->staging_buffers,
                  "frames: gpu: pinned host buffers GPU frames are copied into before sending (0 = credits x "
                  "builders + max_open_frames)");
  cmd->add_flag("--expect-no-loss", o->expect_no_loss, "Exit 2 unless every fragment was acked by its builder");
  cmd->footer(
      "Exit status: 0 ok (also after Ctrl-C), 1 config or setup error, 2 --expect-no-loss failed, 3 the sink's "
      "counters do not add up.");
  cmd->callback([o, exit_code] { *exit_code = ingest(*o); });
}

}  // namespace netdaq::cli
