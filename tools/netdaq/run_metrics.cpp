#include "run_metrics.h"

#include "metrics_linger.h"

#include <chrono>
#include <thread>

#include "signals.h"

namespace netdaq::cli {

RunMetrics::RunMetrics(std::string_view address, Session& session, const std::vector<const ReorderConfig*>& rx_frames)
    : session_(session) {
  const auto rxq = session.rx_queues();
  for (size_t i = 0; i < rxq.size(); ++i) {
    const ReorderConfig* frames = i < rx_frames.size() ? rx_frames[i] : nullptr;
    if (!frames) {
      published_.push_back(nullptr);
      continue;
    }
    // Span modes: room for every stream the pipeline can have (more count as no_stream).
    const ReorderConfig& rc = *frames;
    published_.push_back(std::make_unique<PublishedPipelineStats>(places_spans(rc.mode) ? rc.max_streams : 0));
  }
  server_ = std::make_unique<MetricsServer>(address, [this] { return collect(); });
  for (size_t i = 0; i < rxq.size(); ++i)
    if (published_[i]) server_->add_pipeline(rxq[i]->interface(), rxq[i]->name(), *published_[i]);
}

RunMetrics::~RunMetrics() { server_.reset(); }

std::vector<PublishedPipelineStats*> RunMetrics::published() const {
  std::vector<PublishedPipelineStats*> v;
  for (auto& p : published_) v.push_back(p.get());
  return v;
}

MetricsSnapshot RunMetrics::collect() {
  {
    std::lock_guard lock(mu_);
    if (final_) return *final_;
  }
  return metrics_snapshot(session_);
}

void RunMetrics::freeze(const TrafficResult& r) {
  MetricsSnapshot s;
  s.queues = r.stats;
  s.flows = r.flows;
  std::lock_guard lock(mu_);
  final_ = std::move(s);
}

void linger_serving(const std::string& url, double seconds, std::FILE* out) {
  if (seconds <= 0 || stop_requested()) return;
  std::fprintf(out, "metrics: serving the final counters at %s for %g s more (Ctrl-C stops)\n", url.c_str(), seconds);
  std::fflush(out);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end && !stop_requested())
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void RunMetrics::linger(double seconds, std::FILE* out) const { linger_serving(url(), seconds, out); }

std::string RunMetrics::url() const { return server_->url(); }

}  // namespace netdaq::cli
