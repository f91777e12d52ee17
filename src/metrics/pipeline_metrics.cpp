// Families of GPU frame pipelines (gpu::PipelineStats). Packets handed in end up under one
// result of netdaq_gpu_packets_total; frames closed under one result of netdaq_gpu_frames_total.
// Every result is written for every pipeline, span-mode ones (control, no_stream) in slot
// modes too (as 0), so a series never appears mid-run and sum by (queue) stays packets_in.
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
}

}  // namespace netdaq::metrics
