// The metric families of a snapshot (docs/metrics.md lists them): one writer per source.
#pragma once

#include <span>

#include "metrics/text_writer.h"
#include "netdaq/metrics.h"

namespace netdaq::metrics {

// netdaq_{rx,tx}_* per queue (labels interface, queue), netdaq_queue_info.
void write_queue_metrics(TextWriter& w, std::span<const QueueStats> queues);
// netdaq_flow_* per configured flow, netdaq_unmatched_* per interface (engines that classify).
void write_flow_metrics(TextWriter& w, std::span<const FlowStats> flows);
// netdaq_gpu_* per GPU frame pipeline (labels interface, queue), netdaq_gpu_stream_* per stream
// of span-mode pipelines (and stream).
void write_pipeline_metrics(TextWriter& w, std::span<const PipelineMetrics> pipelines);
// netdaq_fleet_sink_* per destination of each FrameSink, netdaq_fleet_builder_* (per node) and
// netdaq_fleet_receiver_* of each EventBuilder.
void write_fleet_metrics(TextWriter& w, std::span<const fleet::SinkStats> sinks,
                         std::span<const fleet::BuilderStats> builders);

}  // namespace netdaq::metrics
