// The unpack's rules on the host: formats and planes it takes (video_unpack_check) and the
// CPU reference, written independently of the kernel (a bit reader, one sample at a time).
#include "gpu/host/video_unpack_reference.h"

#include <cstring>

#include "gpu/host/sample_reference.h"
#include "protocols/rtp_video_format.h"

namespace netdaq::gpu {
namespace {

const char* plane_name(const VideoOptions& v, int p) {
  static const char* const ycc[] = {"Y", "Cb", "Cr"};
  static const char* const rgb[] = {"R", "G", "B"};
  return v.sampling == VideoSampling::rgb ? rgb[p] : ycc[p];
}

// Big-endian bit reader: bits [bit, bit + n) of the byte string, the first bit the MSB of byte 0.
uint32_t read_bits(const std::byte* p, uint64_t bit, uint32_t n) {
  uint32_t v = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t b = bit + i;
    v = (v << 1) | ((std::to_integer<uint32_t>(p[b / 8]) >> (7 - b % 8)) & 1u);
  }
  return v;
}

}  // namespace

uint32_t plane_width(const VideoOptions& v, int plane) noexcept {
  if (plane < 0 || plane > 2) return 0;
  return v.sampling == VideoSampling::ycbcr_422 && plane > 0 ? v.width / 2 : v.width;
}

bool unpack_format(const VideoOptions& v, UnpackFormat& f) noexcept {
  if (v.sampling == VideoSampling::ycbcr_422 && v.depth == 10) f = UnpackFormat::ycbcr422_10;
  else if (v.sampling == VideoSampling::ycbcr_422 && v.depth == 8) f = UnpackFormat::ycbcr422_8;
  else if (v.sampling == VideoSampling::rgb && v.depth == 8) f = UnpackFormat::rgb_8;
  else return false;
  return true;
}

bool unpack_acceptable(const VideoOptions& v, const VideoPlanes& out, std::string* why) {
  const auto fail = [&](const std::string& s) {
    if (why) *why = "video unpack: " + s;
    return false;
  };
  UnpackFormat f;
  if (!unpack_format(v, f))
    return why ? fail(std::string(to_string(v.sampling)) + " " + std::to_string(v.depth) +
                      "-bit is not supported (YCbCr-4:2:2 8 or 10 bit, RGB 8 bit)")
               : false;
  if (v.width == 0 || v.height == 0 || protocols::video::line_bytes(v) == 0)
    return why ? fail("width " + std::to_string(v.width) + " x height " + std::to_string(v.height) +
                      " is not a frame of whole pixel groups")
               : false;
  // Pixel groups are counted in 32 bits on the GPU (2^31: far beyond 7680 x 4320).
  if (uint64_t{v.width} * v.height >= (uint64_t{1} << 31))
    return why ? fail("frame of " + std::to_string(uint64_t{v.width} * v.height) + " pixels is too large (< 2^31)")
               : false;
  for (int p = 0; p < 3; ++p) {
    const uint64_t line = uint64_t{plane_width(v, p)} * 2;
    const auto addr = reinterpret_cast<uintptr_t>(out.data[p]);
    if (!out.data[p]) return why ? fail(std::string("plane ") + plane_name(v, p) + " is null") : false;
    if (addr % 2 != 0 || out.pitch[p] % 2 != 0)
      return why ? fail(std::string("plane ") + plane_name(v, p) + ": address and pitch must be 2-byte aligned (pitch " +
                        std::to_string(out.pitch[p]) + ")")
                 : false;
    if (out.pitch[p] < line)
      return why ? fail(std::string("plane ") + plane_name(v, p) + ": pitch " + std::to_string(out.pitch[p]) +
                        " is shorter than its line (" + std::to_string(line) + " bytes)")
                 : false;
  }
  return true;
}

std::string video_unpack_check(const VideoOptions& video, const VideoPlanes& out) {
  std::string why;
  return unpack_acceptable(video, out, &why) ? std::string() : why;
}

float unpack_fp16_scale(uint32_t depth) noexcept { return 1.0f / static_cast<float>((1u << depth) - 1); }

void unpack_reference(const VideoOptions& v, const std::byte* frame, const VideoPlanes& out) {
  const protocols::video::Pgroup g = protocols::video::pgroup_of(v.sampling, v.depth);
  const uint64_t line = protocols::video::line_bytes(v);
  const float scale = unpack_fp16_scale(v.depth);
  const auto put = [&](int plane, uint32_t row, uint32_t x, uint32_t value) {
    const uint16_t bits = out.type == PlaneType::fp16 ? float_to_half_bits(static_cast<float>(value) * scale)
                                                      : static_cast<uint16_t>(value);
    std::memcpy(static_cast<std::byte*>(out.data[plane]) + uint64_t{row} * out.pitch[plane] + uint64_t{x} * 2, &bits, 2);
  };
  for (uint32_t row = 0; row < v.height; ++row) {
    for (uint32_t pg = 0; pg < v.width / g.pixels; ++pg) {
      const std::byte* p = frame + row * line + uint64_t{pg} * g.bytes;
      const auto c = [&](uint32_t k) { return read_bits(p, uint64_t{k} * v.depth, v.depth); };
      if (v.sampling == VideoSampling::ycbcr_422) {  // Cb Y0 Cr Y1
        put(1, row, pg, c(0));
        put(0, row, 2 * pg, c(1));
        put(2, row, pg, c(2));
        put(0, row, 2 * pg + 1, c(3));
      } else {  // R G B
        for (int k = 0; k < 3; ++k) put(k, row, pg, c(k));
      }
    }
  }
}

}  // namespace netdaq::gpu
