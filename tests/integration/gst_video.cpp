#include "gst_video.h"

#include <csignal>
#include <stdexcept>

namespace ndqtest {

bool have_gst_elements() {
  for (const char* e : {"videotestsrc", "rtpvrawpay", "rtpstreampay", "udpsink", "tee", "filesink"})
    if (run_command({"gst-inspect-1.0", "--exists", e}) != 0) return false;
  return true;
}

namespace {

uint32_t be(const Bytes& b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v = v << 8 | std::to_integer<uint32_t>(b[at + i]);
  return v;
}

uint64_t round_up_4(uint64_t v) { return (v + 3) / 4 * 4; }

}  // namespace

uint64_t GstVideoFormat::gst_stride(uint32_t width) const {
  if (gst == "UYVP") return round_up_4((uint64_t{width} * 2 * 5 + 3) / 4);
  if (gst == "UYVY") return round_up_4(uint64_t{width} * 2);
  if (gst == "RGB") return round_up_4(uint64_t{width} * 3);
  throw std::invalid_argument("gst_stride: unknown format " + gst);
}

GstVideoFormat gst_uyvp() { return {"UYVP", "YCbCr-4:2:2", 10, 5, 2}; }
GstVideoFormat gst_uyvy() { return {"UYVY", "YCbCr-4:2:2", 8, 4, 2}; }
GstVideoFormat gst_rgb() { return {"RGB", "RGB", 8, 3, 1}; }

RtpVideoPacket parse_rtp_video(const Bytes& b) {
  const auto fail = [](const std::string& why) { throw std::runtime_error("not an RFC 4175 packet: " + why); };
  if (b.size() < 12 + 2 + 6) fail("short");
  RtpVideoPacket p;
  p.bytes = b;
  const uint32_t b0 = be(b, 0, 1), b1 = be(b, 1, 1);
  if (b0 >> 6 != 2) fail("RTP version");
  const bool padding = (b0 & 0x20) != 0, extension = (b0 & 0x10) != 0;
  const size_t csrcs = b0 & 0x0f;
  p.marker = (b1 & 0x80) != 0;
  p.payload_type = static_cast<uint8_t>(b1 & 0x7f);
  p.seq = static_cast<uint16_t>(be(b, 2, 2));
  p.timestamp = be(b, 4, 4);
  p.ssrc = be(b, 8, 4);
  size_t at = 12 + 4 * csrcs;
  size_t end = b.size();
  if (padding) {
    const size_t pad = std::to_integer<size_t>(b.back());
    if (pad == 0 || pad > end) fail("padding");
    end -= pad;
  }
  if (extension) {
    if (at + 4 > end) fail("extension header");
    at += 4 + 4 * size_t{be(b, at + 2, 2)};
  }
  if (at + 2 > end) fail("extended sequence number");
  p.ext_seq = static_cast<uint16_t>(be(b, at, 2));
  at += 2;
  bool more = true;
  while (more) {
    if (at + 6 > end) fail("SRD header");
    RtpSegment s;
    s.length = be(b, at, 2);
    s.field = (be(b, at + 2, 1) & 0x80) != 0;
    s.row = be(b, at + 2, 2) & 0x7fff;
    more = (be(b, at + 4, 1) & 0x80) != 0;
    s.offset = be(b, at + 4, 2) & 0x7fff;
    p.segments.push_back(s);
    at += 6;
  }
  for (RtpSegment& s : p.segments) {
    s.at = at;
    at += s.length;
  }
  if (at > end) fail("segments beyond the packet");
  return p;
}

GstVideoSender::GstVideoSender(const GstVideoSend& o) : o_(o) {
  const std::string caps = "video/x-raw,format=" + o.format.gst + ",width=" + std::to_string(o.width) +
                           ",height=" + std::to_string(o.height) + ",framerate=" + std::to_string(o.fps) + "/1" +
                           (o.interlaced ? ",interlace-mode=interleaved" : "");
  // is-live: frames leave at the frame rate (udpsink syncs to their times), so that a
  // receiver reading in time never overflows; filesink and rtpstreampay keep what was sent.
  const std::vector<std::string> argv = {
      "gst-launch-1.0", "-q",
      "videotestsrc", "is-live=true", "num-buffers=" + std::to_string(o.frames), "pattern=" + o.pattern, "!",
      caps, "!", "tee", "name=raw", "!", "queue", "!", "filesink", "location=" + raw_.path, "raw.", "!", "queue", "!",
      "rtpvrawpay", "mtu=" + std::to_string(o.mtu), "pt=" + std::to_string(o.payload_type),
      "seqnum-offset=" + std::to_string(o.seqnum_offset), "timestamp-offset=" + std::to_string(o.timestamp_offset),
      "ssrc=" + std::to_string(o.ssrc), "!",
      "tee", "name=rtp", "!", "queue", "!", "udpsink", "host=" + o.host, "port=" + std::to_string(o.port), "rtp.", "!",
      "queue", "!", "rtpstreampay", "!", "filesink", "location=" + rtp_.path};
  started_ = std::chrono::steady_clock::now();
  proc_ = std::make_unique<PeerProcess>(o.ns, argv);
}

GstVideoSender::~GstVideoSender() {
  if (proc_ && status_ == -1) proc_->stop(SIGINT, std::chrono::milliseconds(2000));
}

bool GstVideoSender::running() { return status_ == -1 && (status_ = proc_->wait(std::chrono::milliseconds(0))) == -1; }

int GstVideoSender::finish() {
  if (status_ != -1) return status_;
  const auto left = o_.timeout - std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::steady_clock::now() - started_);
  status_ = proc_->wait(std::max(left, std::chrono::milliseconds(0)));
  if (status_ == -1) status_ = proc_->stop(SIGINT, std::chrono::milliseconds(2000));
  return status_;
}

std::string GstVideoSender::describe() const {
  std::string out = proc_->output();
  if (out.size() > 3000) out = "..." + out.substr(out.size() - 3000);
  return "gst: " + proc_->command() + " (exit " + std::to_string(status_) + ")\n" + out;
}

std::vector<Bytes> GstVideoSender::raw_frames() const {
  const Bytes all = read_file(raw_.path);
  const uint64_t stride = o_.format.gst_stride(o_.width), line = o_.format.line_bytes(o_.width);
  const uint64_t frame = stride * o_.height;
  if (all.size() % frame != 0)
    throw std::runtime_error(raw_.path + ": " + std::to_string(all.size()) + " bytes, not whole frames of " +
                             std::to_string(frame));
  std::vector<Bytes> out;
  for (uint64_t at = 0; at < all.size(); at += frame) {
    Bytes f;
    f.reserve(line * o_.height);
    for (uint32_t r = 0; r < o_.height; ++r) {
      const auto row = all.begin() + static_cast<ptrdiff_t>(at + r * stride);
      f.insert(f.end(), row, row + static_cast<ptrdiff_t>(line));  // the padding (stride - line) dropped
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<RtpVideoPacket> GstVideoSender::packets() const {
  const Bytes all = read_file(rtp_.path);
  std::vector<RtpVideoPacket> out;
  size_t at = 0;
  while (at < all.size()) {  // RFC 4571: 16-bit length, then the packet
    if (at + 2 > all.size()) throw std::runtime_error(rtp_.path + ": a length cut short");
    const size_t n = be(all, at, 2);
    if (at + 2 + n > all.size()) throw std::runtime_error(rtp_.path + ": a packet cut short");
    out.push_back(parse_rtp_video(Bytes(all.begin() + static_cast<ptrdiff_t>(at + 2),
                                        all.begin() + static_cast<ptrdiff_t>(at + 2 + n))));
    at += 2 + n;
  }
  return out;
}

bool ExpectedFrame::complete() const {
  for (bool m : line_missing)
    if (m) return false;
  return true;
}

std::vector<ExpectedFrame> expected_frames(const GstVideoFormat& f, uint32_t width, uint32_t height,
                                           const std::vector<RtpVideoPacket>& sent, const std::vector<bool>& arrived,
                                           const std::vector<Bytes>& raw) {
  const uint64_t line = f.line_bytes(width);
  std::vector<ExpectedFrame> out;
  std::vector<std::vector<bool>> covered;  // per frame, per byte
  for (size_t i = 0; i < sent.size(); ++i) {
    const RtpVideoPacket& p = sent[i];
    if (out.empty() || out.back().timestamp != p.timestamp) {  // a new timestamp: the next frame
      if (out.size() == raw.size())
        throw std::runtime_error("more timestamps than raw frames (" + std::to_string(raw.size()) + ")");
      ExpectedFrame e;
      e.timestamp = p.timestamp;
      e.bytes.assign(line * height, std::byte{0});
      out.push_back(std::move(e));
      covered.emplace_back(line * height, false);
    }
    const size_t k = out.size() - 1;
    ExpectedFrame& e = out.back();
    const bool got = arrived.empty() || arrived[i];
    ++e.packets;
    e.arrived += got ? 1 : 0;
    for (const RtpSegment& s : p.segments) {
      const std::string where = "packet " + std::to_string(i) + " (seq " + std::to_string(p.seq) + ") row " +
                                std::to_string(s.row) + " offset " + std::to_string(s.offset);
      if (s.field) throw std::runtime_error(where + ": field 1 in progressive video");
      if (s.offset % f.pgroup_pixels != 0 || s.length % f.pgroup_bytes != 0)
        throw std::runtime_error(where + ": not whole pixel groups");
      const uint64_t x = uint64_t{s.offset} / f.pgroup_pixels * f.pgroup_bytes;
      if (s.row >= height || x + s.length > line) throw std::runtime_error(where + ": beyond the line");
      const uint64_t dst = uint64_t{s.row} * line + x;
      for (uint32_t j = 0; j < s.length; ++j)
        if (p.bytes[s.at + j] != raw[k][dst + j])
          throw std::runtime_error(where + ": byte " + std::to_string(j) + " differs from GStreamer's raw frame");
      if (!got) continue;
      std::copy_n(raw[k].begin() + static_cast<ptrdiff_t>(dst), s.length, e.bytes.begin() + static_cast<ptrdiff_t>(dst));
      std::fill_n(covered[k].begin() + static_cast<ptrdiff_t>(dst), s.length, true);
    }
  }
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].line_missing.assign(height, false);
    for (uint32_t r = 0; r < height; ++r)
      for (uint64_t j = 0; j < line; ++j)
        if (!covered[k][r * line + j]) {
          out[k].line_missing[r] = true;
          ++out[k].bytes_missing;
        }
  }
  return out;
}

std::string differing_lines(const Bytes& a, const Bytes& b, uint64_t line_bytes, size_t max) {
  if (a.size() != b.size()) return "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size());
  std::string out;
  size_t n = 0;
  for (uint64_t at = 0; at < a.size(); at += line_bytes)
    if (!std::equal(a.begin() + static_cast<ptrdiff_t>(at), a.begin() + static_cast<ptrdiff_t>(at + line_bytes),
                    b.begin() + static_cast<ptrdiff_t>(at))) {
      if (n++ < max) out += (out.empty() ? "lines " : ", ") + std::to_string(at / line_bytes);
    }
  return n == 0 ? "none" : out + (n > max ? " ... (" + std::to_string(n) + " lines)" : "");
}

}  // namespace ndqtest
