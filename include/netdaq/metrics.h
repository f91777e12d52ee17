// Prometheus metrics of a Session (docs/metrics.md): the text exposition format of its queue,
// drop, engine, pool and flow counters and of GPU frame pipelines, and MetricsServer, which
// serves it over HTTP (GET /metrics) on a thread of its own.
// Metrics are read only when scraped, from stats snapshots (Session::stats(), flow_stats()):
// the data path neither locks nor allocates for them. No HTTP library header is needed.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "netdaq/fleet.h"
#include "netdaq/gpu.h"
#include "netdaq/stats.h"

namespace netdaq {

class Session;

// The stats of one GPU frame pipeline, with the labels of the rx queue that feeds it.
struct PipelineMetrics {
  std::string interface;
  std::string queue;  // the rx queue's name, e.g. "receiver/rx0"
  gpu::PipelineStats stats;
  std::vector<gpu::StreamStats> streams;  // span modes: per stream (netdaq_gpu_stream_*); empty: none
};

// Everything one scrape shows.
struct MetricsSnapshot {
  std::vector<QueueStats> queues;
  std::vector<FlowStats> flows;
  std::vector<PipelineMetrics> pipelines;
  std::vector<fleet::SinkStats> fleet_sinks;        // frames sent to other nodes (netdaq/fleet.h)
  std::vector<fleet::BuilderStats> fleet_builders;  // frames built from other nodes' fragments
};

// Session::stats() and Session::flow_stats() now (no pipelines).
MetricsSnapshot metrics_snapshot(const Session& session);

// The Prometheus text exposition format, version 0.0.4: "# HELP" and "# TYPE" lines, names
// netdaq_*, counters *_total, bytes *_bytes_total, label values escaped.
std::string prometheus_text(const MetricsSnapshot& snapshot);
std::string prometheus_text(const Session& session);  // prometheus_text(metrics_snapshot(session))

// The Content-Type of that text.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

// Hands a FramePipeline's stats from the thread that drives it to the metrics thread without
// a lock (FramePipeline::stats() must not be called while another thread submits): the driving
// thread calls publish(pipeline.stats()) after submit(), a scrape calls load(). Each field is
// read whole; fields of one load may be from two neighbouring publishes.
// Span modes: with a stream capacity, publish() also takes the pipeline's stream stats
// (FramePipeline::stream_stats(span), into a buffer sized once) and keeps the first `capacity`
// of them, the same way; load_streams() reads them. Streams only ever get added, in a fixed
// order, so a load sees each stream under its own key, with no stream published twice.
class PublishedPipelineStats {
 public:
  explicit PublishedPipelineStats(size_t stream_capacity = 0);  // allocates here, never in publish
  PublishedPipelineStats(const PublishedPipelineStats&) = delete;
  PublishedPipelineStats& operator=(const PublishedPipelineStats&) = delete;

  void publish(const gpu::PipelineStats& s) noexcept;  // the streams stay as they were
  // s, and streams[0, min(streams.size(), stream_capacity())).
  void publish(const gpu::PipelineStats& s, std::span<const gpu::StreamStats> streams) noexcept;
  gpu::PipelineStats load() const noexcept;
  std::vector<gpu::StreamStats> load_streams() const;  // at most stream_capacity() of them

  size_t stream_capacity() const noexcept { return stream_capacity_; }

  static constexpr size_t kFields = sizeof(gpu::PipelineStats) / sizeof(uint64_t);
  static constexpr size_t kStreamFields = sizeof(gpu::StreamStats) / sizeof(uint64_t);

 private:
  std::array<std::atomic<uint64_t>, kFields> v_{};
  size_t stream_capacity_ = 0;
  std::atomic<size_t> streams_{0};                     // entries of s_ published so far
  std::unique_ptr<std::atomic<uint64_t>[]> s_;         // stream_capacity_ x kStreamFields
};

// An HTTP server of the metrics: GET /metrics answers prometheus_text() of a fresh snapshot
// (GET / a pointer to it; anything else 404). It serves on its own thread from the
// constructor to stop() or the destructor.
class MetricsServer {
 public:
  using Collector = std::function<MetricsSnapshot()>;

  // address: "HOST:PORT" ("127.0.0.1:9464", "[::1]:9464", "localhost:9464"; ":PORT" or
  // "*:PORT": every IPv4 address). Port 0 binds a free port (port() says which).
  // Throws Error: invalid_config (not HOST:PORT, bad port), not_found (host does not resolve),
  // system (the address cannot be bound: in use, not on this host; the errno text says).
  // The session must outlive the server; collect runs on the server's thread at each scrape.
  MetricsServer(std::string_view address, const Session& session);  // metrics_snapshot(session)
  MetricsServer(std::string_view address, Collector collect);        // a snapshot of your own
  ~MetricsServer();  // stop()
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // A GPU pipeline's stats, added to every snapshot. stats() (and streams(), when given: the
  // span modes' per-stream stats) run on the server's thread at each scrape; a
  // PublishedPipelineStats must outlive the server (its streams come with it).
  void add_pipeline(std::string interface, std::string queue, std::function<gpu::PipelineStats()> stats,
                    std::function<std::vector<gpu::StreamStats>()> streams = {});
  void add_pipeline(std::string interface, std::string queue, const PublishedPipelineStats& published);

  const std::string& host() const noexcept;  // as given ("0.0.0.0" for ":PORT" and "*:PORT")
  uint16_t port() const noexcept;            // the bound port
  std::string url() const;                   // "http://HOST:PORT/metrics"
  uint64_t scrapes() const noexcept;         // GET /metrics answered so far
  void stop() noexcept;                      // closes the socket and joins the thread; idempotent

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace netdaq
