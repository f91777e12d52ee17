// rx.reorder mode rtp_video: the stream's SDP format parameters (RFC 4175 section 6.1,
// SMPTE ST 2110-20 section 7) as the decoder and the frame layout need them.
#include "core/config_validate_video.h"

#include <algorithm>

#include "gpu/host/video_unpack_reference.h"
#include "netdaq/video.h"
#include "protocols/rtp_video_format.h"

namespace netdaq::detail {
namespace {

bool written(const Checker& c, const std::string& key) { return c.config().locations.count(key) > 0; }

std::string depths_of(VideoSampling s) {
  std::string out;
  for (uint32_t d : limits::kVideoDepths)
    if (protocols::video::pgroup_of(s, d).bytes) out += (out.empty() ? "" : ", ") + std::to_string(d);
  return out;
}

}  // namespace

bool video_set(const Checker& c, const ReorderConfig& g, const std::string& path) {
  const VideoOptions d;
  const VideoOptions& v = g.video;
  return written(c, path + ".video") || v.width != d.width || v.height != d.height || v.sampling != d.sampling ||
         v.depth != d.depth || v.interlaced != d.interlaced || v.rows != d.rows || v.rate_num != d.rate_num || v.rate_den != d.rate_den ||
         v.payload_type != d.payload_type || v.unpack != d.unpack;
}

void check_video(Checker& c, const ReorderConfig& g, const std::string& path) {
  const std::string p = path + ".video";
  const VideoOptions& v = g.video;
  const std::string sampling = to_string(v.sampling);
  const protocols::video::Pgroup pg = protocols::video::pgroup_of(v.sampling, v.depth);
  if (!pg.bytes)
    c.error(p + ".depth", std::to_string(v.depth),
            "must be one of: " + depths_of(v.sampling) + " (bits per component of " + sampling + ")");
  if (v.width == 0) c.error(p + ".width", "0", "is required in mode rtp_video: pixels per line (SDP width)");
  else c.range(p + ".width", v.width, limits::video_width);
  if (pg.bytes && v.width % pg.pixels)
    c.error(p + ".width", std::to_string(v.width),
            "must be a multiple of " + std::to_string(pg.pixels) + " pixels: " + sampling + " " +
                std::to_string(v.depth) + "-bit packs " + std::to_string(pg.pixels) + " pixels in a " +
                std::to_string(pg.bytes) + "-byte pixel group (RFC 4175 section 4.3)");
  if (v.height == 0) {
    c.error(p + ".height", "0", "is required in mode rtp_video: lines per frame (SDP height; both fields when interlaced)");
  } else if (v.interlaced) {
    // rows: frame numbers the frame's lines in the SRD's 15 bits; rows: field each field's.
    c.range(p + ".height", v.height,
            v.rows == VideoRows::frame ? limits::video_frame_rows_height : limits::video_interlaced_height);
    if (v.height % 2)
      c.error(p + ".height", std::to_string(v.height),
              "must be even when interlaced: a frame is two fields of height / 2 lines");
  } else {
    c.range(p + ".height", v.height, limits::video_height);
  }
  if (v.rows != VideoRows::field && !v.interlaced)
    c.error(p + ".rows", to_string(v.rows),
            "is read only when interlaced: true (progressive rows are the frame's lines); leave it out or write field");
  if (v.rate_num == 0)
    c.error(p + ".exactframerate", "", "is required in mode rtp_video: frames per second as SDP writes it, 50 or 60000/1001");
  else if (v.rate_den == 0)
    c.error(p + ".exactframerate", exactframerate_text(v), "must have a denominator of at least 1 (N/D)");
  else if (protocols::video::ticks_per_frame(v) < 2)
    c.error(p + ".exactframerate", exactframerate_text(v),
            "must be at most 45000 frames per second: a frame must last at least 2 ticks of the 90 kHz RTP clock");
  if (v.payload_type != -1) c.range(p + ".payload_type", v.payload_type, limits::video_payload_type);
  // A frame takes a whole period to arrive from an ST 2110-21 sender: a shorter timeout cuts
  // every frame of a paced stream.
  if (g.frame_timeout_us && v.rate_num && v.rate_den) {
    const uint64_t period_us = (1'000'000ull * v.rate_den + v.rate_num - 1) / v.rate_num;
    if (g.frame_timeout_us < period_us)
      c.error(path + ".frame_timeout_us", std::to_string(g.frame_timeout_us),
              "must be at least one frame period (" + std::to_string(period_us) + " us at " + exactframerate_text(v) +
                  "): a paced sender spreads a frame over its whole period; leave it out for two periods");
  }

  // The pipeline unpacks into planes in GPU memory, with the kernel's formats only.
  if (v.unpack != VideoUnpack::none) {
    gpu::UnpackFormat f;
    if (g.frames != FrameTarget::gpu)
      c.error(p + ".unpack", to_string(v.unpack),
              "needs frames: gpu (the GPU frame pipeline unpacks each frame into planes); with frames: " +
                  std::string(to_string(g.frames)) + " use none");
    else if (pg.bytes && !gpu::unpack_format(v, f))
      c.error(p + ".unpack", to_string(v.unpack),
              "is for YCbCr-4:2:2 8 or 10 bit and RGB 8 bit only (this stream is " + sampling + " " +
                  std::to_string(v.depth) + "-bit); use none");
  }
  // Frames are pixel groups: no sample conversion (the GPU unpack turns pgroups into planes).
  if (g.input != SampleFormat::raw)
    c.error(path + ".input", to_string(g.input),
            "must be raw in mode rtp_video: frames hold the stream's pixel groups as they arrive");
  // Presence is kept per granule; a segment starts and ends on a pixel group, so a granule
  // must divide the pgroup's bytes.
  if (g.granule && pg.bytes && pg.bytes % g.granule)
    c.error(path + ".granule", std::to_string(g.granule),
            "must divide the pixel group's " + std::to_string(pg.bytes) + " bytes (" + sampling + " " +
                std::to_string(v.depth) + "-bit): segments start and end on pixel groups; leave it out to use " +
                std::to_string(pg.bytes));
}

}  // namespace netdaq::detail
