#include "sensors/video_sender.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "netdaq/status.h"
#include "protocols/rtp_video_format.h"
#include "sensors/fill_burst.h"

namespace netdaq::sensors {

namespace video = protocols::video;

namespace {

constexpr uint32_t kMaxSegments = 3;  // SRD headers one packet carries at most (issue 33)
constexpr uint32_t kMaxPayloadSize = 9000;  // a jumbo frame's worth; SRD lengths are 16 bits

__extension__ typedef unsigned __int128 U128;  // k x 1e9 x den exceeds 64 bits after days

uint64_t mul_div(uint64_t a, uint64_t b, uint64_t d) noexcept {
  return static_cast<uint64_t>(static_cast<U128>(a) * b / d);
}

void put16(std::byte* p, uint32_t v) noexcept {
  p[0] = std::byte((v >> 8) & 0xff);
  p[1] = std::byte(v & 0xff);
}
void put32(std::byte* p, uint32_t v) noexcept {
  put16(p, v >> 16);
  put16(p + 2, v & 0xffff);
}

// Packs components of `depth` bits MSB first (RFC 4175's pgroups are big-endian bit strings).
class BitWriter {
 public:
  explicit BitWriter(std::byte* out) noexcept : out_(out) {}
  void put(uint32_t v, uint32_t bits) noexcept {
    acc_ = acc_ << bits | (v & ((1u << bits) - 1));
    n_ += bits;
    while (n_ >= 8) {
      n_ -= 8;
      *out_++ = std::byte((acc_ >> n_) & 0xff);
    }
  }

 private:
  std::byte* out_;
  uint64_t acc_ = 0;
  uint32_t n_ = 0;
};

struct Colour {
  uint8_t c[3];  // Y Cb Cr (BT.709, 8-bit, narrow range) or R G B
};

// 75% colour bars: white, yellow, cyan, green, magenta, red, blue, black.
constexpr Colour kBarsYcc[8] = {{{180, 128, 128}}, {{168, 44, 136}}, {{145, 147, 44}}, {{133, 63, 52}},
                                {{63, 193, 204}},  {{51, 109, 212}}, {{28, 212, 120}}, {{16, 128, 128}}};
constexpr Colour kBarsRgb[8] = {{{191, 191, 191}}, {{191, 191, 0}}, {{0, 191, 191}}, {{0, 191, 0}},
                                {{191, 0, 191}},   {{191, 0, 0}},   {{0, 0, 191}},   {{0, 0, 0}}};
constexpr Colour kBoxYcc = {{235, 128, 128}}, kBoxRgb = {{255, 255, 255}};

}  // namespace

uint64_t St2110Timing::frame_start_ns(uint64_t k) const noexcept { return mul_div(k, period_num, period_den); }

uint64_t St2110Timing::departure_ns(uint64_t k, uint32_t packet) const noexcept {
  return frame_start_ns(k) + static_cast<uint64_t>(std::llround(tro_ns + (double(packet) - vrx_start) * t_drain_ns));
}

double St2110Timing::cmax() const noexcept {
  const double t = t_frame_ns / 1e9;
  return t > 0 ? std::max(4.0, packets / (43200.0 * r_active * t)) : 4.0;
}

St2110Timing st2110_narrow_timing(const VideoOptions& v, uint32_t packets_per_frame) {
  St2110Timing t;
  if (v.rate_num == 0 || v.rate_den == 0) return t;
  const uint32_t fields = v.interlaced ? 2 : 1;
  t.period_num = uint64_t{1'000'000'000} * v.rate_den;
  t.period_den = uint64_t{v.rate_num} * fields;
  t.t_frame_ns = double(t.period_num) / double(t.period_den);
  t.packets = packets_per_frame;
  // ST 2110-21 8.1 (R_ACTIVE) and 8.2 (TRO_DEFAULT), as lines of the format's total lines.
  t.r_active = 1080.0 / 1125.0;
  double tro_lines = 0;
  if (!v.interlaced) {
    tro_lines = v.height >= 1080 ? 43.0 / 1125.0 : 28.0 / 750.0;
  } else if (v.height == 480 || v.height == 486) {
    t.r_active = 487.0 / 525.0;
    tro_lines = 2 * 20.0 / 525.0;
  } else if (v.height == 576) {
    t.r_active = 576.0 / 625.0;
    tro_lines = 2 * 26.0 / 625.0;
  } else {
    tro_lines = 2 * 22.0 / 1125.0;
  }
  t.tro_ns = tro_lines * t.t_frame_ns;
  t.t_drain_ns = packets_per_frame ? t.t_frame_ns * t.r_active / packets_per_frame : 0;
  return t;
}

void write_video_test_pattern(const VideoOptions& v, uint64_t frame, std::span<std::byte> out) noexcept {
  const video::Pgroup g = video::pgroup_of(v.sampling, v.depth);
  const uint64_t lb = video::line_bytes(v);
  if (lb == 0 || out.size() < lb * v.height) return;
  const bool ycc = v.sampling != VideoSampling::rgb;
  const Colour* bars = ycc ? kBarsYcc : kBarsRgb;
  const Colour box = ycc ? kBoxYcc : kBoxRgb;
  const uint32_t shift = v.depth - 8;
  const uint32_t box_w = std::max<uint32_t>(g.pixels, v.width / 8 / g.pixels * g.pixels);
  const uint32_t travel = v.width > box_w ? v.width - box_w : 1;
  const uint32_t box_x = static_cast<uint32_t>((frame * 2 * g.pixels) % travel) / g.pixels * g.pixels;
  const uint32_t y0 = v.height / 3, y1 = v.height * 2 / 3;
  auto colour_at = [&](uint32_t x, uint32_t y) -> const Colour& {
    if (y >= y0 && y < y1 && x >= box_x && x < box_x + box_w) return box;
    return bars[std::min<uint32_t>(7, uint64_t{x} * 8 / v.width)];
  };
  for (uint32_t y = 0; y < v.height; ++y) {
    BitWriter w(out.data() + lb * y);
    for (uint32_t x = 0; x < v.width; x += g.pixels) {
      if (v.sampling == VideoSampling::ycbcr_422) {  // Cb Y0 Cr Y1; chroma of the first pixel
        const Colour& a = colour_at(x, y);
        const Colour& b = colour_at(x + 1, y);
        w.put(uint32_t{a.c[1]} << shift, v.depth);
        w.put(uint32_t{a.c[0]} << shift, v.depth);
        w.put(uint32_t{a.c[2]} << shift, v.depth);
        w.put(uint32_t{b.c[0]} << shift, v.depth);
      } else {
        for (uint32_t p = 0; p < g.pixels; ++p) {
          const Colour& c = colour_at(x + p, y);
          if (ycc) {  // Cb Y Cr
            w.put(uint32_t{c.c[1]} << shift, v.depth);
            w.put(uint32_t{c.c[0]} << shift, v.depth);
            w.put(uint32_t{c.c[2]} << shift, v.depth);
          } else {
            for (int k = 0; k < 3; ++k) w.put(uint32_t{c.c[k]} << shift, v.depth);
          }
        }
      }
    }
  }
}

VideoSender::VideoSender(const VideoSenderConfig& c) : c_(c) {
  auto fail = [](const std::string& m) { throw Error(Errc::invalid_config, "video sender: " + m); };
  const VideoOptions& v = c.video;
  const video::Pgroup g = video::pgroup_of(v.sampling, v.depth);
  if (g.bytes == 0)
    fail("depth = " + std::to_string(v.depth) + ": must be 8, 10, 12 or 16 (sampling " + to_string(v.sampling) + ")");
  if (v.width == 0 || v.width % g.pixels != 0 || v.width > video::kMaxOffset + 1)
    fail("width = " + std::to_string(v.width) + ": must be a multiple of " + std::to_string(g.pixels) +
         " pixels (one pgroup of " + to_string(v.sampling) + " at depth " + std::to_string(v.depth) + "), 1.." +
         std::to_string(video::kMaxOffset + 1));
  const uint32_t fields = v.interlaced ? 2 : 1;
  if (v.height == 0 || v.height % fields != 0 || v.height / fields > video::kMaxRow + 1)
    fail("height = " + std::to_string(v.height) + ": must be 1.." + std::to_string(video::kMaxRow + 1) +
         " lines per field" + (v.interlaced ? " and even (interlaced: two fields)" : ""));
  if (video::frame_rows(v) && v.height > video::kMaxRow + 1)
    fail("height = " + std::to_string(v.height) + ": must be 2.." + std::to_string(video::kMaxRow + 1) +
         " with rows: frame (SRD rows number the frame's lines in 15 bits)");
  if (v.rate_num == 0 || v.rate_den == 0)
    fail("rate = " + std::to_string(v.rate_num) + "/" + std::to_string(v.rate_den) +
         ": must be a frame rate like 60 or 60000/1001");
  if (v.payload_type >= 0 && (v.payload_type < 96 || v.payload_type > 127))
    fail("payload_type = " + std::to_string(v.payload_type) + ": must be a dynamic RTP payload type 96..127");
  pt_ = v.payload_type >= 0 ? static_cast<uint32_t>(v.payload_type) : 96;
  if (c.payload_size < g.bytes || c.payload_size > kMaxPayloadSize)
    fail("payload_size = " + std::to_string(c.payload_size) + ": must be " + std::to_string(g.bytes) + ".." +
         std::to_string(kMaxPayloadSize) + " pixel bytes per packet");
  pgroup_bytes_ = g.bytes;
  pgroup_pixels_ = g.pixels;
  line_bytes_ = video::line_bytes(v);
  ticks_num_ = uint64_t{video::kRtpClockHz} * v.rate_den;
  ticks_den_ = uint64_t{v.rate_num} * fields;

  // One field's packets: fill each to cap bytes of whole pgroups, up to 3 segments.
  const uint32_t cap = c.payload_size / g.bytes * g.bytes;
  const uint32_t rows = v.height / fields;
  uint32_t row = 0;
  uint64_t off = 0;  // bytes into the row
  while (row < rows) {
    PacketPlan p;
    uint32_t used = 0;
    while (p.segments < kMaxSegments && row < rows && used < cap) {
      const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(line_bytes_ - off, cap - used));
      p.seg[p.segments++] = {static_cast<uint16_t>(row), static_cast<uint16_t>(off / g.bytes * g.pixels),
                             static_cast<uint16_t>(len)};
      used += len;
      off += len;
      if (off == line_bytes_) {
        ++row;
        off = 0;
      }
    }
    p.bytes = static_cast<uint16_t>(used);
    max_packet_ = std::max(max_packet_, video::kRtpHeaderBytes + video::kExtSeqBytes + video::kSrdBytes * p.segments + used);
    plan_.push_back(p);
  }
  seq_ = c.first_sequence;
}

VideoSender::~VideoSender() = default;

void VideoSender::set_frames(std::span<const std::byte> frames) {
  const uint64_t fb = frame_bytes();
  if (frames.empty() || frames.size() % fb != 0)
    throw Error(Errc::invalid_config, "video sender: " + std::to_string(frames.size()) +
                                          " bytes of frames: must be a whole number (>= 1) of frames of " +
                                          std::to_string(fb) + " bytes (" + std::to_string(line_bytes_) + " x " +
                                          std::to_string(c_.video.height) + ")");
  frames_ = frames;
  frame_count_ = frames.size() / fb;
}

uint32_t VideoSender::timestamp_of(uint64_t k) const noexcept {
  // k x 90 kHz x den / (num x fields), from the start: 59.94 alternates 1501 and 1502 ticks.
  return c_.first_timestamp + static_cast<uint32_t>(mul_div(c_.epoch_frame + k, ticks_num_, ticks_den_));
}

size_t VideoSender::fill(TxBurst& burst) noexcept { return fill_burst(*this, burst); }

uint32_t VideoSender::next_packet(std::span<std::byte> out) noexcept {
  if (frame_count_ == 0) return 0;
  const PacketPlan& pp = plan_[packet_];
  const uint32_t head = video::kRtpHeaderBytes + video::kExtSeqBytes + video::kSrdBytes * pp.segments;
  const uint32_t len = head + pp.bytes;
  if (out.size() < len) return 0;
  const bool last = packet_ + 1 == plan_.size();
  std::byte* b = out.data();
  b[0] = std::byte(0x80);  // V=2, no padding, extension or CSRCs
  b[1] = std::byte((last ? 0x80 : 0) | pt_);
  put16(b + 2, seq_ & 0xffff);
  put32(b + 4, timestamp_of(field_index_));
  put32(b + 8, c_.ssrc);
  put16(b + 12, seq_ >> 16);
  const std::byte* frame = frames_.data() + (frame_ % frame_count_) * frame_bytes();
  std::byte* srd = b + video::kRtpHeaderBytes + video::kExtSeqBytes;
  std::byte* data = b + head;
  const bool f = field_ == 1;
  for (uint32_t i = 0; i < pp.segments; ++i) {
    const Segment& s = pp.seg[i];
    // s.row counts lines within the field; on the wire as video.rows says (frame: 2 row + F).
    const auto row = static_cast<uint16_t>(video::srd_row(c_.video, s.row, f));
    video::write_srd(srd + video::kSrdBytes * i, {s.length, f, row, i + 1 < pp.segments, s.offset});
    const uint64_t line = video::frame_line(c_.video, row, f);
    std::memcpy(data, frame + line * line_bytes_ + uint64_t{s.offset} / pgroup_pixels_ * pgroup_bytes_, s.length);
    data += s.length;
  }
  ++packets_;
  ++seq_;
  if (!last) {
    ++packet_;
    return len;
  }
  packet_ = 0;
  ++field_index_;
  if (++field_ == fields()) {
    field_ = 0;
    ++frame_;
  }
  return len;
}

}  // namespace netdaq::sensors
