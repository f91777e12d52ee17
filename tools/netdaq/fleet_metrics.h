// `netdaq ingest|build --metrics HOST:PORT`: a MetricsServer showing the process's queues (an
// ingest's session) and its fleet counters. The loop publishes a copy of its sink's or
// builder's stats now and then (FrameSink/EventBuilder are not read from another thread);
// a scrape reads the last copy.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "netdaq/fleet.h"
#include "netdaq/metrics.h"
#include "netdaq/session.h"

namespace netdaq::cli {

class FleetMetrics {
 public:
  // Throws Error: a bad or taken address. session: may be null (a builder has none); it must
  // outlive this object.
  FleetMetrics(std::string_view address, const Session* session);
  ~FleetMetrics();

  void publish(const fleet::SinkStats& s);
  void publish(const fleet::BuilderStats& b);
  // Keeps serving the last copy for seconds (0: returns at once) or until Ctrl-C.
  void linger(double seconds, std::FILE* out) const;
  std::string url() const;

 private:
  MetricsSnapshot collect();

  const Session* session_;
  std::mutex mu_;
  std::optional<fleet::SinkStats> sink_;
  std::optional<fleet::BuilderStats> builder_;
  std::unique_ptr<MetricsServer> server_;  // last: stopped before the rest goes
};

}  // namespace netdaq::cli
