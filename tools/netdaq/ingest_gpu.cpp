#include "ingest_gpu.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "netdaq/session.h"

namespace netdaq::cli {

namespace {

// What can be in flight at once: every credit of every builder, and the frames the pipeline
// closes while those are out.
uint32_t default_staging(const fleet::SinkConfig& s, const ReorderConfig& r) {
  return uint32_t(std::max<uint64_t>(1, uint64_t{s.credits} * s.destinations.size() + r.max_open_frames));
}

// Presence bits of a frame of up to `bytes` bytes at one byte per unit at worst: reserved once.
size_t presence_words(const ReorderConfig& r, size_t frame_bytes) {
  const uint64_t units = std::max<uint64_t>({frame_bytes, r.frame_bytes, uint64_t{r.packets_per_frame}});
  return size_t(units / 64 + 2);
}

}  // namespace

uint64_t realtime_now_ns() noexcept {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

GpuFrameForwarder::GpuFrameForwarder(Session& session, std::string_view interface, const ReorderConfig& reorder,
                                     fleet::FrameSink& sink, uint32_t staging_buffers)
    : pipeline_(session, interface, reorder),
      staging_(staging_buffers ? staging_buffers : default_staging(sink.config(), reorder), pipeline_.frame_bytes(),
               reorder.gpu),
      sink_(sink),
      held_(staging_.buffers()),
      with_sink_(staging_.buffers(), 0) {
  const size_t words = presence_words(reorder, pipeline_.frame_bytes());
  for (Held& h : held_) h.presence.reserve(words);
}

GpuFrameForwarder::~GpuFrameForwarder() {
  staging_.synchronize();  // no copy may still read a frame buffer the pipeline frees
  for (Held& h : held_) h.frame.release();
}

void GpuFrameForwarder::receive(RxBurst&& burst) noexcept { pipeline_.submit(std::move(burst)); }

// Starts the copy of a finished device frame and keeps its metadata; the frame stays held
// until the copy is over. Every staging buffer busy: the frame is dropped (counted).
void GpuFrameForwarder::stage(gpu::Frame f) noexcept {
  const uint32_t b = staging_.stage(f.data(), f.size_bytes());
  if (b == gpu::FrameStaging::kNone) {
    return;  // dropped, counted by the staging (no_buffer, too_big, copy_failed); f goes back here
  }
  Held& h = held_[b];
  const gpu::FrameInfo& info = f.info();
  fleet::OutFrame& out = h.out;
  out = fleet::OutFrame{};
  out.stream = info.stream;
  out.frame = info.index;
  out.complete = f.complete();
  // Presence travels where a unit of the frame is `granule` bytes of it (no sample conversion
  // changed the size): bit g set when unit g arrived, the inverse of the pipeline's missing bits.
  h.presence.clear();
  if (info.bytes == info.bytes_expected && info.granule && info.expected) {
    const auto missing = f.missing();
    const size_t words = (size_t{info.expected} + 63) / 64;
    for (size_t w = 0; w < words; ++w) h.presence.push_back(~(w < missing.size() ? missing[w] : 0));
    if (info.expected % 64) h.presence.back() &= (uint64_t{1} << (info.expected % 64)) - 1;
    out.granule = info.granule;
    out.bytes_present = out.complete ? info.bytes : std::min<uint64_t>(info.bytes, info.bytes_received);
  } else {
    out.bytes_present = info.expected ? uint64_t(info.bytes) * info.received / info.expected : info.bytes;
  }
  out.token = b;
  h.frame = std::move(f);
}

// Frames whose copy is over: the device buffer back to the pipeline, the host copy to the sink.
uint64_t GpuFrameForwarder::send_ready() noexcept {
  uint64_t n = 0;
  uint32_t b = 0;
  bool copied = false;
  while (staging_.ready(b, copied)) {
    Held& h = held_[b];
    h.frame.release();
    if (!copied) {  // counted copy_failed by the staging
      staging_.release(b);
      continue;
    }
    fleet::OutFrame& out = h.out;
    out.bytes = staging_.bytes(b);
    out.presence = h.presence;
    out.first_ns = out.last_ns = realtime_now_ns();  // the frame was on the host now
    with_sink_[b] = 1;
    sink_.send(out);
    ++n;
    if (out.complete) ++complete_;
    else ++incomplete_;
  }
  return n;
}

uint64_t GpuFrameForwarder::forward() noexcept {
  give_back();
  while (gpu::Frame f = pipeline_.next_frame()) stage(std::move(f));
  const uint64_t n = send_ready();
  give_back();
  return n;
}

void GpuFrameForwarder::give_back() noexcept {
  sink_.progress();
  uint64_t token = 0;
  while (sink_.done(token))
    if (token < with_sink_.size() && with_sink_[token]) {
      with_sink_[token] = 0;
      staging_.release(uint32_t(token));
    }
}

uint64_t GpuFrameForwarder::finish(uint32_t timeout_ms) noexcept {
  pipeline_.flush();
  try {
    pipeline_.synchronize();
  } catch (const std::exception&) {
    // counted in the pipeline's gpu_errors; the frames it finished still go out
  }
  // The frames still in the pipeline go out one by one, each waiting (up to timeout_ms in all)
  // for a staging buffer the sink hands back, so the end of a run drops none that could go.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  uint64_t n = send_ready();
  for (;;) {
    give_back();
    while (staging_.busy() == staging_.buffers() && std::chrono::steady_clock::now() < deadline) {
      n += send_ready();
      give_back();
    }
    gpu::Frame f = pipeline_.next_frame();
    if (!f) break;
    stage(std::move(f));
    staging_.synchronize();
    n += send_ready();
  }
  staging_.synchronize();
  n += send_ready();
  give_back();
  return n;
}

HostFrameStats GpuFrameForwarder::frame_stats() const noexcept {
  const gpu::PipelineStats p = pipeline_.stats();
  HostFrameStats s;
  s.packets = p.packets_in;
  s.placed = p.packets_placed;
  s.duplicate = p.duplicate;
  s.late = p.late;
  s.no_buffer = p.no_buffer;
  s.malformed = p.malformed;
  s.no_stream = p.no_stream;
  s.control = p.control;
  s.frames_complete = p.frames_complete;
  s.frames_incomplete = p.frames_incomplete;
  s.frames_dropped = p.frames_dropped;
  s.bytes_missing = p.bytes_missing;
  s.last_malformed = pipeline_.last_malformed();
  return s;
}

IngestGpuStaging GpuFrameForwarder::staging() const noexcept {
  const gpu::StagingStats s = staging_.stats();
  IngestGpuStaging r;
  r.on = true;
  r.buffers = staging_.buffers();
  r.buffer_bytes = staging_.buffer_bytes();
  r.frames_staged = s.frames_staged;
  r.bytes_staged = s.bytes_staged;
  r.dropped_no_staging = s.no_buffer;
  r.too_big = s.too_big;
  r.copy_failed = s.copy_failed;
  return r;
}

}  // namespace netdaq::cli
