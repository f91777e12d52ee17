// Allowed values of configuration fields: one table shared by the YAML loader (type errors),
// the validator (range errors) and docs/config.md, so every message names the same limits.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace netdaq::detail {

// Inclusive integer range.
struct Range {
  int64_t min;
  uint64_t max;
  bool contains(int64_t v) const noexcept { return v >= min && (v < 0 || static_cast<uint64_t>(v) <= max); }
  bool contains(uint64_t v) const noexcept {
    return v <= max && (min <= 0 || v >= static_cast<uint64_t>(min));
  }
  // "must be an integer 1..1024"
  std::string describe() const { return "must be an integer " + std::to_string(min) + ".." + std::to_string(max); }
};

template <class T>
constexpr Range type_range() {
  return {static_cast<int64_t>(std::numeric_limits<T>::min()), static_cast<uint64_t>(std::numeric_limits<T>::max())};
}

namespace limits {
inline constexpr Range buf_size{64, 1u << 20};
inline constexpr Range num_bufs{1, 1u << 30};
inline constexpr Range gpu{-1, static_cast<uint64_t>(std::numeric_limits<int>::max())};
inline constexpr Range batch_size{1, 1024};
inline constexpr Range timeout_us{0, 10'000'000};
inline constexpr Range ring_depth{1, 65536};
inline constexpr Range cpu_core{-1, 1023};
inline constexpr Range vlan{0, 4095};
inline constexpr Range packets_per_frame{1, 1u << 20};
inline constexpr Range max_open_frames{1, 1024};
inline constexpr Range frame_buffers{1, 4096};
inline constexpr Range frame_timeout_us{0, 60'000'000};  // 0: auto
inline constexpr Range bursts_in_flight{1, 64};
inline constexpr Range payload_size{1, 1u << 20};
inline constexpr Range job_packets{0, 65536};
inline constexpr Range persistent_sms{1, 1024};
inline constexpr Range job_timeout_us{1, 1'000'000};
// Placement by the sensor's headers (modes fields, spead, vita49).
inline constexpr Range frame_bytes{1, uint64_t{1} << 36};     // 64 GiB: more than a GPU holds
inline constexpr Range granule{0, 1u << 20};                  // 0: the mode's default
inline constexpr Range max_streams{1, 1024};
inline constexpr Range field_shift{0, 63};
inline constexpr Range stream_item{0, 0x7FFFFF};              // SPEAD-64-40 item ids are 23 bits
inline constexpr Range samples_per_frame{1, 1u << 30};
inline constexpr Range sample_bytes{1, 64};
inline constexpr Range sample_rate{0, 1'000'000'000'000};     // 1 THz: beyond any ADC
// Mode roce (docs/roce-software.md): QPNs and PSNs are 24 bits; QPs 0 and 1 are the SMI and
// GSI queue pairs, never a sensor's. psn_window: at most half the PSN space, so behind and
// ahead stay told apart.
inline constexpr Range roce_qpn{2, 0xFFFFFF};
inline constexpr Range roce_psn{0, 0xFFFFFF};
inline constexpr Range roce_slots{1, 1u << 20};
inline constexpr Range roce_mtu{256, 4096};                   // one of kRoceMtus
inline constexpr Range roce_metadata_bytes{0, 65536};
inline constexpr Range roce_psn_window{1, 1u << 23};          // a power of two
// Mode rtp_video (docs/video.md): SRD headers carry a 15-bit row and a 15-bit pixel offset, so
// a line holds at most 32768 pixels and a frame (a field when interlaced) 32768 rows.
inline constexpr Range video_width{1, 32768};
inline constexpr Range video_height{1, 32768};
inline constexpr Range video_interlaced_height{2, 65536};     // both fields: 32768 rows each
inline constexpr Range video_frame_rows_height{2, 32768};     // interlaced, rows: frame (frame lines in 15 bits)
inline constexpr Range video_payload_type{0, 127};            // RTP's 7-bit PT
inline constexpr std::array<uint32_t, 4> kVideoDepths{8, 10, 12, 16};
}  // namespace limits

// Known names (engines: core/engine_descriptor.h; each engine's own: its limits.h).
inline constexpr std::array<std::string_view, 6> kLogLevels{"trace", "debug", "info", "warn", "error", "off"};
inline constexpr std::array<std::string_view, 5> kMemoryKindNames{"host", "huge", "pinned", "mapped", "device"};
inline constexpr std::array<std::string_view, 2> kPollModeNames{"direct", "worker"};
inline constexpr std::array<std::string_view, 7> kSampleFormatNames{"raw", "int4", "int8", "int16", "fp16", "bf16", "fp32"};
inline constexpr std::array<std::string_view, 2> kByteOrderNames{"little", "big"};
inline constexpr std::array<std::string_view, 8> kReorderModeNames{"sequence", "arrival",  "immediate", "fields",
                                                                   "spead",    "vita49",   "roce",      "rtp_video"};
// SDP sampling names (RFC 4175 section 6.1), in VideoSampling's order.
inline constexpr std::array<std::string_view, 3> kVideoSamplingNames{"YCbCr-4:2:2", "YCbCr-4:4:4", "RGB"};
// rx.reorder.video.unpack, in VideoUnpack's order.
inline constexpr std::array<std::string_view, 3> kVideoUnpackNames{"none", "uint16", "fp16"};
inline constexpr std::array<std::string_view, 2> kVideoRowsNames{"field", "frame"};  // VideoRows' order
inline constexpr std::array<uint32_t, 5> kRoceMtus{256, 512, 1024, 2048, 4096};  // the InfiniBand MTUs
inline constexpr std::array<std::string_view, 3> kStagingNames{"auto", "copy", "direct"};
inline constexpr std::array<std::string_view, 4> kLaunchModeNames{"per_burst", "graph", "persistent", "rings"};
// launch: rings (the GPU-driven receive loop's shared-memory tables): frames open at once and buffers.
inline constexpr uint32_t kRingsMaxOpenFrames = 16;
inline constexpr uint32_t kRingsMaxFrameBuffers = 256;
inline constexpr std::array<std::string_view, 2> kFrameTargetNames{"gpu", "host"};

}  // namespace netdaq::detail
