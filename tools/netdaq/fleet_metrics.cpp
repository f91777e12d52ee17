#include "fleet_metrics.h"

#include "metrics_linger.h"

namespace netdaq::cli {

FleetMetrics::FleetMetrics(std::string_view address, const Session* session) : session_(session) {
  server_ = std::make_unique<MetricsServer>(address, [this] { return collect(); });
}

FleetMetrics::~FleetMetrics() { server_.reset(); }

void FleetMetrics::publish(const fleet::SinkStats& s) {
  std::lock_guard lock(mu_);
  sink_ = s;
}

void FleetMetrics::publish(const fleet::BuilderStats& b) {
  std::lock_guard lock(mu_);
  builder_ = b;
}

MetricsSnapshot FleetMetrics::collect() {
  MetricsSnapshot s;
  if (session_) s = metrics_snapshot(*session_);
  std::lock_guard lock(mu_);
  if (sink_) s.fleet_sinks.push_back(*sink_);
  if (builder_) s.fleet_builders.push_back(*builder_);
  return s;
}

void FleetMetrics::linger(double seconds, std::FILE* out) const { linger_serving(url(), seconds, out); }

std::string FleetMetrics::url() const { return server_->url(); }

}  // namespace netdaq::cli
