// Families of GPU frame pipelines (gpu::PipelineStats). Packets handed in end up under one
// result of netdaq_gpu_packets_total; frames closed under one result of netdaq_gpu_frames_total.
// Every result is written for every pipeline, span-mode ones (control, no_stream) in slot
// modes too (as 0), so a series never appears mid-run and sum by (queue) stays packets_in.
// Span modes add netdaq_gpu_stream_* per stream (label stream: its key in decimal), only for
// pipelines that have streams; a stream's packet results sum to its packets_in.
#include <string>

#include "metrics/families.h"

namespace netdaq::metrics {

namespace {

using gpu::PipelineStats;

struct Field {
  const char* name;
  const char* help;
  uint64_t PipelineStats::*field;
};

struct Result {
  const char* result;
  uint64_t PipelineStats::*field;
};

constexpr Result kPacketResults[] = {
    {"placed", &PipelineStats::packets_placed}, {"duplicate", &PipelineStats::duplicate},
    {"late", &PipelineStats::late},             {"malformed", &PipelineStats::malformed},
    {"no_buffer", &PipelineStats::no_buffer},   {"control", &PipelineStats::control},
    {"no_stream", &PipelineStats::no_stream},
};

constexpr Result kFrameResults[] = {
    {"complete", &PipelineStats::frames_complete},
    {"incomplete", &PipelineStats::frames_incomplete},
    {"skipped", &PipelineStats::frames_skipped},
    {"dropped", &PipelineStats::frames_dropped},
};

constexpr Field kCounters[] = {
    {"netdaq_gpu_packets_in_total", "Packets handed to the pipeline.", &PipelineStats::packets_in},
    {"netdaq_gpu_missing_packets_total", "Empty slots of incomplete frames (zero-filled).",
     &PipelineStats::packets_missing},
    {"netdaq_gpu_missing_bytes_total", "Input bytes of incomplete frames that never arrived (span modes; zero-filled).",
     &PipelineStats::bytes_missing},
    {"netdaq_gpu_transferred_bytes_total", "Input bytes moved to the GPU.", &PipelineStats::bytes_to_gpu},
    {"netdaq_gpu_jobs_total", "GPU jobs run.", &PipelineStats::jobs},
    {"netdaq_gpu_waits_total", "Times submit() waited for a GPU job to finish (GPU behind).", &PipelineStats::waits},
    {"netdaq_gpu_errors_total", "GPU jobs the GPU refused (a CUDA fault).", &PipelineStats::gpu_errors},
};

using gpu::StreamStats;

struct StreamResult {
  const char* result;
  uint64_t StreamStats::*field;
};

// The pipeline's results a stream has (decoder-malformed, control and no_stream packets have no stream).
constexpr StreamResult kStreamPacketResults[] = {
    {"placed", &StreamStats::packets_placed}, {"duplicate", &StreamStats::duplicate},
    {"late", &StreamStats::late},             {"malformed", &StreamStats::malformed},
    {"no_buffer", &StreamStats::no_buffer},
};

constexpr StreamResult kStreamFrameResults[] = {
    {"complete", &StreamStats::frames_complete},
    {"incomplete", &StreamStats::frames_incomplete},
    {"skipped", &StreamStats::frames_skipped},
    {"dropped", &StreamStats::frames_dropped},
};

void write_stream_results(TextWriter& w, std::span<const PipelineMetrics> ps, std::span<const StreamResult> results) {
  for (const auto& p : ps)
    for (const auto& st : p.streams) {
      const std::string key = std::to_string(st.stream);
      for (const auto& r : results)
        w.sample({{"interface", p.interface}, {"queue", p.queue}, {"stream", key}, {"result", r.result}}, st.*r.field);
    }
}

void write_stream_counter(TextWriter& w, std::span<const PipelineMetrics> ps, uint64_t StreamStats::*field) {
  for (const auto& p : ps)
    for (const auto& st : p.streams)
      w.sample({{"interface", p.interface}, {"queue", p.queue}, {"stream", std::to_string(st.stream)}}, st.*field);
}

void write_stream_metrics(TextWriter& w, std::span<const PipelineMetrics> pipelines) {
  bool any = false;
  for (const auto& p : pipelines) any = any || !p.streams.empty();
  if (!any) return;
  w.family("netdaq_gpu_stream_packets_total",
           "Packets of a stream (span modes), by what became of them (placed, duplicate, late, malformed, no_buffer).",
           MetricType::counter);
  write_stream_results(w, pipelines, kStreamPacketResults);
  w.family("netdaq_gpu_stream_frames_total",
           "Frames of a stream (span modes) closed, by result (complete, incomplete: zero-filled gaps, skipped: no "
           "packet, dropped: no buffer).",
           MetricType::counter);
  write_stream_results(w, pipelines, kStreamFrameResults);
  w.family("netdaq_gpu_stream_packets_in_total", "Packets of a stream (span modes) handed to the pipeline.",
           MetricType::counter);
  write_stream_counter(w, pipelines, &StreamStats::packets);
  w.family("netdaq_gpu_stream_missing_bytes_total",
           "Input bytes of a stream's incomplete frames that never arrived (span modes; zero-filled).",
           MetricType::counter);
  write_stream_counter(w, pipelines, &StreamStats::bytes_missing);
}

void write_results(TextWriter& w, std::span<const PipelineMetrics> ps, std::span<const Result> results) {
  for (const auto& p : ps)
    for (const auto& r : results)
      w.sample({{"interface", p.interface}, {"queue", p.queue}, {"result", r.result}}, p.stats.*r.field);
}

}  // namespace

void write_pipeline_metrics(TextWriter& w, std::span<const PipelineMetrics> pipelines) {
  if (pipelines.empty()) return;
  w.family("netdaq_gpu_packets_total",
           "Packets handed to the pipeline, by what became of them (placed, duplicate, late, malformed, no_buffer, "
           "control, no_stream).",
           MetricType::counter);
  write_results(w, pipelines, kPacketResults);
  w.family("netdaq_gpu_frames_total",
           "Frames closed, by result (complete, incomplete: zero-filled gaps, skipped: no packet, dropped: no buffer).",
           MetricType::counter);
  write_results(w, pipelines, kFrameResults);
  for (const auto& c : kCounters) {
    w.family(c.name, c.help, MetricType::counter);
    for (const auto& p : pipelines) w.sample({{"interface", p.interface}, {"queue", p.queue}}, p.stats.*c.field);
  }
  write_stream_metrics(w, pipelines);
}

}  // namespace netdaq::metrics
