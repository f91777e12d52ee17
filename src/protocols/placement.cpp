// The sizes of the placement model that follow from a reorder config (decoder.h).
#include "protocols/decoder.h"
#include "protocols/rtp_video_format.h"

namespace netdaq::protocols {

uint32_t granule_of(const ReorderConfig& cfg) noexcept {
  if (cfg.granule) return cfg.granule;
  switch (cfg.mode) {
    case ReorderMode::vita49: return cfg.vita49.sample_bytes ? cfg.vita49.sample_bytes : 1;
    // rtp_video: segments start and end on pixel groups (RFC 4175 section 4.3).
    case ReorderMode::rtp_video: {
      const uint32_t bytes = video::pgroup_of(cfg.video.sampling, cfg.video.depth).bytes;
      return bytes ? bytes : 1;
    }
    case ReorderMode::fields:
      if (cfg.fields.index.declared() && cfg.payload_size) return cfg.payload_size;
      return 8;
    // roce: WRITE FIRST / MIDDLE carry mtu bytes (a multiple of 256) from wherever the sensor
    // starts a message; 8 (as config_validate_roce.cpp assumes) keeps presence exact for writes
    // on 8-byte boundaries at one bit per 8 bytes; other offsets need rx.reorder.granule set to a
    // divisor of every write's offset.
    default: return 8;
  }
}

uint64_t frame_bytes_of(const ReorderConfig& cfg) noexcept {
  if (cfg.frame_bytes) return cfg.frame_bytes;
  if (cfg.mode == ReorderMode::vita49) return uint64_t{cfg.vita49.samples_per_frame} * cfg.vita49.sample_bytes;
  if (cfg.mode == ReorderMode::rtp_video) return video::frame_bytes(cfg.video);
  if (cfg.mode == ReorderMode::roce) {  // a slot holds one frame: the largest slot
    uint64_t largest = 0;
    for (const RoceQueuePair& qp : cfg.roce.queue_pairs) largest = qp.slot_size > largest ? qp.slot_size : largest;
    return largest;
  }
  return uint64_t{cfg.packets_per_frame} * cfg.payload_size;
}

uint64_t frame_timeout_ns_of(const ReorderConfig& cfg) noexcept {
  if (cfg.frame_timeout_us) return uint64_t{cfg.frame_timeout_us} * 1000;
  if (cfg.mode == ReorderMode::rtp_video && cfg.video.rate_num)
    return 2 * (1'000'000'000ull * cfg.video.rate_den + cfg.video.rate_num - 1) / cfg.video.rate_num;
  return uint64_t{kFrameTimeoutUs} * 1000;
}

}  // namespace netdaq::protocols
