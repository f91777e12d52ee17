// The GPU data plane (ARCHITECTURE §5): GPU memory kinds, and FramePipeline, which takes the
// bursts of an rx queue and reorders their packets into contiguous frames in GPU memory.
// No CUDA header is needed to use it. In a build without CUDA every call reports
// "built without CUDA"; on a machine without a GPU they report why (docs/gpu.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "netdaq/burst.h"
#include "netdaq/config.h"

struct CUstream_st;

namespace netdaq {
class Session;
}

namespace netdaq::gpu {

using Stream = CUstream_st*;  // the same type as cudaStream_t
struct VideoPlanes;           // netdaq/video_unpack.h

// True when this build has the GPU data plane.
bool built_in() noexcept;
// GPUs the CUDA runtime sees (0 without a driver or a GPU, or without CUDA in the build).
int device_count() noexcept;
// Why GPU features cannot be used here ("" when at least one GPU is usable).
std::string unavailable_reason();

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  uint64_t memory_bytes = 0;
  bool dmabuf = false;        // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
  bool peermem = false;       // nvidia_peermem kernel module loaded
};
std::vector<DeviceInfo> devices();

// Counters of one pipeline. Every packet handed in ends up in exactly one of placed,
// duplicate, late, malformed or no_buffer.
struct PipelineStats {
  uint64_t packets_in = 0;
  uint64_t packets_placed = 0;
  uint64_t duplicate = 0;     // a packet whose slot was already filled
  uint64_t late = 0;          // its frame was already closed
  uint64_t malformed = 0;     // shorter than payload_offset + payload_size or the sequence field;
                              // span modes: the decoder refused it, or a span outside its frame
  uint64_t control = 0;       // span modes: valid packets that carry no frame bytes (VITA-49 context, SPEAD stop)
  uint64_t no_stream = 0;     // span modes: a stream beyond max_streams
  uint64_t no_buffer = 0;     // its frame found no free frame buffer (the app holds them all)
  uint64_t frames_complete = 0;
  uint64_t frames_incomplete = 0;  // closed by timeout, by newer frames, or by flush()
  uint64_t frames_skipped = 0;     // frames that got no packet at all (gap in the sequence)
  uint64_t frames_dropped = 0;     // frames whose packets all counted as no_buffer
  uint64_t packets_missing = 0;    // empty slots of incomplete frames (zero-filled; slot modes)
  uint64_t bytes_missing = 0;      // input bytes of incomplete frames that never arrived (span modes)
  uint64_t bytes_to_gpu = 0;       // input bytes moved to the GPU
  uint64_t jobs = 0;               // GPU jobs run
  uint64_t waits = 0;              // submit() waited for a GPU job to finish (GPU behind)
  uint64_t wait_ns = 0;            // ... for this long in all (CPU time spent on the GPU, not on packets)
  uint64_t gpu_errors = 0;         // jobs the GPU refused (a CUDA fault; synchronize() throws it)
};

class FramePipeline;
class XskFrameReceiver;

// Whoever hands out Frames takes their buffers back through this.
class FrameSource {
 public:
  virtual void release_frame(uint32_t buffer) noexcept = 0;

 protected:
  ~FrameSource() = default;
};

// An item a frame's packets carried by value (SPEAD immediate items other than 0x1-0x4).
struct FrameItem {
  uint64_t id = 0;
  uint64_t value = 0;
};

// One stream's counters (span modes; docs/gpu.md): a stream is a sensor on the queue.
struct StreamStats {
  uint64_t stream = 0;  // its key: stream id, stream field or item, or flow id
  uint64_t packets = 0, packets_placed = 0, duplicate = 0, late = 0, no_buffer = 0, malformed = 0;
  uint64_t frames_complete = 0, frames_incomplete = 0, frames_skipped = 0, frames_dropped = 0;
  uint64_t bytes_missing = 0;
};

// What a frame is, besides its bytes (docs/gpu.md, "Frame metadata").
struct FrameInfo {
  uint64_t index = 0;           // frame number: sequence / packets_per_frame, or the decoder's
  uint64_t stream = 0;          // span modes: the stream key (0 in slot modes)
  size_t bytes = 0;             // output bytes of the frame
  uint64_t bytes_expected = 0;  // input bytes the frame should hold
  uint64_t bytes_received = 0;  // ... and those that arrived
  uint32_t expected = 0;        // presence units (packets in slot modes, granules in span modes)
  uint32_t received = 0;
  uint32_t granule = 0;         // input bytes per presence unit (slot modes: payload_size)
  // Span modes: the sensor's time of the packet holding the frame's lowest byte offset seen
  // (VITA-49: of that packet's first sample, which lies in the frame before when the packet
  // straddles them; the frame's own first sample is index x samples_per_frame).
  bool has_timestamp = false;
  uint64_t timestamp = 0;       // integer part (VITA-49 TSI, a fields timestamp)
  uint64_t timestamp_frac = 0;  // fractional part (VITA-49 TSF)
};

// A finished frame in GPU memory: complete, or flushed with zeros where packets are missing.
// Move-only; the frame buffer goes back to the pipeline when the Frame is released.
class Frame {
 public:
  Frame() noexcept = default;
  Frame(Frame&& o) noexcept;
  Frame& operator=(Frame&& o) noexcept;
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  ~Frame();

  explicit operator bool() const noexcept { return owner_ != nullptr; }
  uint64_t index() const noexcept { return info_.index; }   // sequence / packets_per_frame, or the frame number
  void* data() const noexcept { return data_; }             // device pointer
  size_t size_bytes() const noexcept { return info_.bytes; }
  // Presence units: packets (slot modes), granules (span modes: granule() input bytes each).
  uint32_t packets_expected() const noexcept { return info_.expected; }
  uint32_t packets_received() const noexcept { return info_.received; }
  bool complete() const noexcept { return info_.received == info_.expected; }
  // Bit i (word i/64, bit i%64) set: unit i of the frame is missing (it holds zeros).
  std::span<const uint64_t> missing() const noexcept { return missing_; }
  uint64_t stream() const noexcept { return info_.stream; }
  const FrameInfo& info() const noexcept { return info_; }
  // SPEAD: the heap's immediate items (the last value of each id); empty otherwise.
  std::span<const FrameItem> items() const noexcept { return items_; }
  // Mode rtp_video with video.unpack set: the frame's planes (netdaq/video_unpack.h), already
  // unpacked when the frame is handed out; valid while the Frame is held. nullptr otherwise.
  const VideoPlanes* planes() const noexcept { return planes_; }
  void release() noexcept;

 private:
  friend class FramePipeline;
  friend class XskFrameReceiver;
  FrameSource* owner_ = nullptr;
  uint32_t buffer_ = 0;
  void* data_ = nullptr;
  FrameInfo info_;
  std::span<const uint64_t> missing_;
  std::span<const FrameItem> items_;
  const VideoPlanes* planes_ = nullptr;
};

class FramePipeline final : public FrameSource {
 public:
  // Checks that the queue's packet memory is readable by the GPU for cfg.staging and that
  // the offsets fit its buffers; allocates the frame buffers, staging and GPU executor.
  // Throws ConfigError / Error (no GPU, wrong index, memory kind the GPU cannot read).
  FramePipeline(Session& session, std::string_view interface, const ReorderConfig& cfg);
  // Without a session: the caller promises the packets' memory suits cfg.staging.
  explicit FramePipeline(const ReorderConfig& cfg);
  ~FramePipeline();  // waits for GPU work in flight, returns every held burst
  FramePipeline(const FramePipeline&) = delete;
  FramePipeline& operator=(const FramePipeline&) = delete;

  // Takes the burst; its buffers go back to their pool once the GPU has read them.
  // Never throws. Waits (counted in stats().waits) only when bursts_in_flight jobs are busy.
  void submit(RxBurst&& burst) noexcept;
  // The next finished frame whose GPU work is done, in frame order; empty when none.
  // Also closes frames that timed out.
  Frame next_frame() noexcept;
  // Closes every open frame now (end of run); they come out of next_frame().
  void flush() noexcept;
  // Waits for all GPU work submitted so far.
  void synchronize();

  PipelineStats stats() const noexcept;
  // Span modes: one entry per stream seen, in order of its first packet (empty in slot modes).
  std::vector<StreamStats> stream_stats() const;
  // The same without allocating (for publishing from the driving thread): fills the first
  // min(out.size(), streams) entries and returns how many streams there are.
  size_t stream_stats(std::span<StreamStats> out) const noexcept;
  const ReorderConfig& config() const noexcept;
  Stream stream() const noexcept;   // GPU work of this pipeline is ordered on this stream
  size_t frame_bytes() const noexcept;
  // Span modes: why the last malformed packet was (e.g. "SPEAD heap counter (item 0x1)
  // missing"); "" when none was. The first of each kind is also logged at warn level.
  const char* last_malformed() const noexcept;

  struct Impl;

 private:
  void release_frame(uint32_t buffer) noexcept override;
  std::unique_ptr<Impl> impl_;
};

}  // namespace netdaq::gpu
