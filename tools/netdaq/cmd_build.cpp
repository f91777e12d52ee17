// netdaq build CONFIG: a fleet's event builder (docs/fleet.md). Accepts the ingest nodes of
// the `fleet:` block over UCX and builds one frame from their `nodes` fragments (each at the
// offset its ingest gave), hands it out complete or, after timeout_ms, with the nodes that
// came; --check-payload checks every present byte against the netdaq payload format that
// `netdaq run` sends (each packet-sized chunk: its header's sequence is the one the frame
// number and the chunk's place name, and every pattern byte).
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "errors.h"
#include "fleet_block.h"
#include "fleet_metrics.h"
#include "fleet_report.h"
#include "idle_backoff.h"
#include "netdaq/netdaq.h"
#include "netdaq/payload.h"
#include "signals.h"

namespace netdaq::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct BuildOptions {
  std::string config;
  std::string metrics;
  double metrics_linger = 0;
  uint64_t frames = 0;
  double duration = 0;
  uint32_t idle_ms = 0;
  uint32_t check_payload = 0;     // bytes per packet chunk (0: no check)
  uint64_t packets_per_frame = 0; // packets of one ingest frame (sequence = frame x this + chunk)
  std::string json;  // --json FILE ('-': stdout)
  bool expect_complete = false;
};

bool all_zero(std::span<const std::byte> b) {
  for (std::byte x : b)
    if (x != std::byte{0}) return false;
  return true;
}

// Every packet-sized chunk of every present fragment: a zero chunk is a missing packet
// (counted), anything else must be the payload of sequence frame x N + its place.
void check_frame(const fleet::BuiltFrame& f, const BuildOptions& o, BuildResult& r) {
  const uint64_t p = o.check_payload;
  for (size_t n = 0; n < f.fragments.size() && n < 64; ++n) {
    if (!(f.nodes_present >> n & 1)) continue;
    const fleet::FrameMeta& m = f.fragments[n];
    ++r.fragments_checked;
    for (uint64_t at = 0; at + p <= m.bytes; at += p) {
      const auto chunk = f.bytes.subspan(m.offset + at, p);
      ++r.chunks_checked;
      if (!m.complete && all_zero(chunk)) {
        ++r.chunks_missing;
        continue;
      }
      PayloadHeader h;
      const PayloadStatus st = verify_payload(chunk, &h);
      const uint64_t want = f.frame * o.packets_per_frame + (m.frame_offset + at) / p;
      if (st != PayloadStatus::ok || h.sequence != want) {
        if (r.check_errors++ == 0)
          r.first_error = "frame " + std::to_string(f.frame) + " node " + std::to_string(n) + " byte " +
                          std::to_string(at) + ": " + to_string(st) + ", sequence " + std::to_string(h.sequence) +
                          " where " + std::to_string(want) + " belongs";
      }
    }
  }
}

void take(fleet::EventBuilder& b, const BuildOptions& o, BuildResult& r) {
  fleet::BuiltFrame f;
  while (b.pop(f)) {
    ++r.frames;
    ++(f.complete ? r.complete : r.incomplete);
    if (o.check_payload) check_frame(f, o, r);
    b.release(f);
  }
}

int build(const BuildOptions& o) {
  const std::string err = "netdaq build: ";
  if (o.check_payload && (o.check_payload < kPayloadHeaderSize || !o.packets_per_frame)) {
    std::fprintf(stderr, "%s--check-payload needs a size of at least %zu and --packets-per-frame\n", err.c_str(),
                 kPayloadHeaderSize);
    return kExitError;
  }
  Config cfg;
  if (!setup_step([&] { cfg = Config::load(o.config); }, err + o.config + ": ")) return kExitError;
  fleet::BuilderConfig bc;
  try {
    bc = builder_config(fleet_block(cfg));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s%s: fleet: %s\n", err.c_str(), o.config.c_str(), e.what());
    return kExitError;
  }
  install_stop_signals();
  std::unique_ptr<fleet::EventBuilder> builder;
  std::unique_ptr<FleetMetrics> metrics;
  if (!setup_step(
          [&] {
            builder = std::make_unique<fleet::EventBuilder>(bc);
            if (!o.metrics.empty()) metrics = std::make_unique<FleetMetrics>(o.metrics, nullptr);
          },
          err))
    return kExitError;
  std::fprintf(stderr, "netdaq build: %u node(s), listening on %s port %u, %s%s%s\n", bc.nodes,
               bc.receiver.listen.host.c_str(), unsigned(builder->port()), fleet::to_string(bc.receiver.transport),
               metrics ? ", metrics at " : "", metrics ? metrics->url().c_str() : "");
  std::fflush(stderr);

  BuildResult r;
  const auto t0 = Clock::now();
  auto last_frame = t0, last_publish = t0;
  IdleBackoff idle;
  while (!stop_requested() && !(o.frames && r.frames >= o.frames)) {
    const auto now = Clock::now();
    if (o.duration > 0 && now - t0 >= std::chrono::duration<double>(o.duration)) break;
    if (r.frames && o.idle_ms && now - last_frame >= std::chrono::milliseconds(o.idle_ms)) break;
    if (metrics && now - last_publish >= std::chrono::milliseconds(100)) {
      metrics->publish(builder->stats());
      last_publish = now;
    }
    builder->progress();
    const uint64_t before = r.frames;
    take(*builder, o, r);
    if (r.frames == before) {
      idle.wait();
      continue;
    }
    idle.reset();
    last_frame = now;
  }
  builder->flush();
  take(*builder, o, r);
  builder->progress();  // the last credits go out
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.stats = builder->stats();
  if (metrics) metrics->publish(r.stats);
  if (!print_build_result(r, o.json)) return kExitError;
  if (metrics) metrics->linger(o.metrics_linger, stderr);
  if (r.check_errors) return kExitUnaccounted;
  if (o.expect_complete && r.incomplete) return kExitLoss;
  return kExitOk;
}

}  // namespace

void add_build_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<BuildOptions>();
  auto* cmd = app.add_subcommand("build", "Be a fleet's event builder: build frames from ingest nodes' fragments");
  cmd->add_option("config", o->config, "YAML config with a fleet: block (listen, nodes, buffers, max_bytes)")
      ->required();
  cmd->add_option("-n,--frames", o->frames, "Stop after N built frames (0 = no limit)");
  cmd->add_option("-d,--duration", o->duration, "Stop after S seconds (0 = no limit)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--idle-ms", o->idle_ms, "After the first frame, stop when none came for this long (0 = never)");
  cmd->add_option("--check-payload", o->check_payload,
                  "Check each fragment as packets of this many bytes in the netdaq payload format");
  cmd->add_option("--packets-per-frame", o->packets_per_frame, "Packets of one ingest frame (for --check-payload)");
  cmd->add_option("--metrics", o->metrics, "Serve Prometheus metrics at HOST:PORT (GET /metrics)");
  cmd->add_option("--metrics-linger", o->metrics_linger, "Keep serving the final counters this many seconds")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--json", o->json, "Write the result as JSON to FILE ('-' = stdout)");
  cmd->add_flag("--expect-complete", o->expect_complete, "Exit 2 if any built frame was incomplete");
  cmd->footer("Exit status: 0 ok (also after Ctrl-C/SIGTERM), 1 config or setup error, 2 --expect-complete failed, "
              "3 wrong bytes.");
  cmd->callback([o, exit_code] { *exit_code = build(*o); });
}

}  // namespace netdaq::cli
