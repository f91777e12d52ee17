// prometheus_text: the snapshot of a session, and the text of every family.
#include "metrics/families.h"
#include "netdaq/session.h"

namespace netdaq {

MetricsSnapshot metrics_snapshot(const Session& session) {
  MetricsSnapshot s;
  s.queues = session.stats();
  s.flows = session.flow_stats();
  return s;
}

std::string prometheus_text(const MetricsSnapshot& snapshot) {
  metrics::TextWriter w;
  w.family("netdaq_build_info", "The netdaq library serving these metrics (value 1).", metrics::MetricType::gauge);
  w.sample({{"version", version()}}, uint64_t{1});
  metrics::write_queue_metrics(w, snapshot.queues);
  metrics::write_flow_metrics(w, snapshot.flows);
  metrics::write_pipeline_metrics(w, snapshot.pipelines);
  metrics::write_fleet_metrics(w, snapshot.fleet_sinks, snapshot.fleet_builders);
  return w.take();
}

std::string prometheus_text(const Session& session) { return prometheus_text(metrics_snapshot(session)); }

}  // namespace netdaq
