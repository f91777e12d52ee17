#include "run_plan.h"

#include "cli.h"
#include "errors.h"
#include "run_block.h"
#include "signals.h"

namespace netdaq::cli {

namespace {

Config load_config(const RunOptions& o) {
  Config cfg = o.config.empty() ? Config::parse(default_config_text(), default_config_name()) : Config::load(o.config);
  if (o.duration) run_block(cfg).duration_s = *o.duration;
  if (o.packets) run_block(cfg).tx_packets = *o.packets;
  if (o.adjust_config) o.adjust_config(cfg);
  return cfg;
}

// The session, and the GPU data plane: a frame pipeline for each rx.reorder entry, fed by its
// queue's receiver (rx queue i -> traffic.rx_pipelines[i], null for none), or with launch:
// rings the receiver that owns the queue's rings (traffic.rx_rings[i]: a persistent kernel,
// or a CPU thread with frames: host).
void open_session(RunPlan& p, Config cfg) {
  p.session = std::make_unique<Session>(std::move(cfg));
  for (RxQueue* q : p.session->rx_queues()) {
    p.traffic.rx_pipelines.push_back(nullptr);
    p.traffic.rx_rings.push_back(nullptr);
    p.traffic.rx_frames.push_back(nullptr);
    const InterfaceConfig* iface = p.session->config().find_interface(q->interface());
    for (const auto& g : iface->rx.reorder) {
      if (g.queue != q->config().id) continue;
      p.traffic.rx_frames.back() = &g;
      if (g.launch == LaunchMode::rings) {
        const auto driver = g.frames == FrameTarget::host ? gpu::XskFrameReceiver::Driver::cpu
                                                          : gpu::XskFrameReceiver::Driver::gpu;
        p.rings.push_back(std::make_unique<gpu::XskFrameReceiver>(*p.session, iface->name, g, driver));
        p.traffic.rx_rings.back() = p.rings.back().get();
        continue;
      }
      p.pipelines.push_back(std::make_unique<gpu::FramePipeline>(*p.session, iface->name, g));
      p.traffic.rx_pipelines.back() = p.pipelines.back().get();
    }
  }
}

void set_traffic_options(RunPlan& p, const RunOptions& o) {
  const RunBlock& rc = run_block(p.session->config());
  TrafficOptions& t = p.traffic;
  t.payload_size = rc.tx_payload_size;
  t.expected_size = p.ntx ? rc.tx_payload_size : 0;
  t.tx_counts.assign(p.ntx, rc.tx_packets);
  // With a packet count the senders stop at the count; --duration still bounds them.
  t.duration_s = rc.tx_packets && !o.duration ? 0 : rc.duration_s;
  t.drain_ms = rc.drain_ms;
  t.stats_interval_ms = rc.stats_interval_ms;
  t.verify = !o.no_verify;
}

// The metrics server, and where each receiver publishes its GPU pipeline's stats for it.
void start_metrics(RunPlan& p, const RunOptions& o) {
  p.metrics = std::make_unique<RunMetrics>(o.metrics, *p.session, p.traffic.rx_frames);
  p.traffic.rx_published = p.metrics->published();
}

}  // namespace

std::optional<RunPlan> plan_run(const RunOptions& o) {
  RunPlan p;
  p.out = o.json == "-" ? stderr : stdout;
  const std::string name = o.config.empty() ? default_config_name() : o.config;
  Config cfg;
  if (!setup_step([&] { cfg = load_config(o); }, prefix_of(o) + name + ": ")) return std::nullopt;
  install_stop_signals();
  if (!setup_step([&] { open_session(p, std::move(cfg)); }, prefix_of(o))) return std::nullopt;
  p.ntx = p.session->tx_queues().size();
  p.nrx = p.session->rx_queues().size();
  set_traffic_options(p, o);
  if (!o.metrics.empty() && !setup_step([&] { start_metrics(p, o); }, prefix_of(o)))
    return std::nullopt;
  return p;
}

}  // namespace netdaq::cli
