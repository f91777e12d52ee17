// `netdaq run --metrics HOST:PORT`: a MetricsServer over the run's session and its GPU
// pipelines (docs/metrics.md). Receivers publish their pipeline's stats after each burst; once
// the run is over the server shows the final counters of the result (freeze), and may go on
// serving them for --metrics-linger seconds so that a scraper reads them.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "netdaq/netdaq.h"
#include "traffic.h"

namespace netdaq::cli {

class RunMetrics {
 public:
  // Starts serving (throws Error: a bad or taken address). rx_frames: rx queue i's rx.reorder
  // entry (a pipeline's, or launch: rings) or null.
  RunMetrics(std::string_view address, Session& session, const std::vector<const ReorderConfig*>& rx_frames);
  ~RunMetrics();

  // Per rx queue: where its receiver publishes its pipeline's stats (null: no pipeline).
  std::vector<PublishedPipelineStats*> published() const;
  // From now on the queue and flow counters are the result's final ones (taken after the
  // threads stopped), not the session's: the session may be stopped.
  void freeze(const TrafficResult& r);
  // Keeps serving for seconds (0: returns at once) or until Ctrl-C.
  void linger(double seconds, std::FILE* out) const;
  std::string url() const;

 private:
  MetricsSnapshot collect();

  Session& session_;
  std::vector<std::unique_ptr<PublishedPipelineStats>> published_;  // by rx queue
  std::mutex mu_;
  std::optional<MetricsSnapshot> final_;
  std::unique_ptr<MetricsServer> server_;  // last: stopped before the rest goes
};

}  // namespace netdaq::cli
