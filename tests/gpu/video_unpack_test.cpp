// The video unpack kernel (RFC 4175 pgroups -> planar uint16 / fp16) on the GPU against the CPU
// reference, bit for bit: YCbCr-4:2:2 10 and 8 bit and RGB 8 bit; random frames and frames
// packed here from known planes (so the reference itself is checked); widths of one pgroup,
// widths that are not a multiple of a thread's 8 pixels, 1920x1080 and 3840x2160; tight,
// padded and vector-unfriendly pitches; frames 16-byte aligned and not; every kernel variant.
// Plane bytes outside the samples (pitch padding) must stay as they were.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "device_array.h"
#include "gpu/host/sample_reference.h"
#include "gpu/host/video_unpack_reference.h"
#include "gpu/video_unpack.h"
#include "gpu_test_util.h"
#include "netdaq/video_unpack.h"
#include "protocols/rtp_video_format.h"

namespace netdaq::gpu::test {
namespace {

using ndqtest::DeviceArray;

constexpr std::byte kSentinel{0xA5};

enum class Content : uint8_t { random, planes };

struct Case {
  VideoSampling sampling;
  uint8_t depth;
  uint32_t width, height;
  PlaneType type;
  uint32_t pad;        // bytes added to every plane's pitch: 0, 64 (aligned) or 2 (not 8-aligned)
  uint32_t in_offset;  // the frame starts this many bytes past a 256-byte boundary
  Content content;
};

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  const Case& c = i.param;
  return std::string(c.sampling == VideoSampling::rgb ? "rgb" : "ycbcr422") + std::to_string(c.depth) + "_" +
         std::to_string(c.width) + "x" + std::to_string(c.height) + "_" + (c.type == PlaneType::fp16 ? "fp16" : "u16") +
         "_pad" + std::to_string(c.pad) + "_off" + std::to_string(c.in_offset) +
         (c.content == Content::random ? "_random" : "_planes");
}

// What gtest (and ctest's test list) prints for a case: its name, not its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << case_name(::testing::TestParamInfo<Case>(c, 0));
}

VideoOptions options(const Case& c) {
  VideoOptions v;
  v.width = c.width;
  v.height = c.height;
  v.sampling = c.sampling;
  v.depth = c.depth;
  v.rate_num = 60;
  return v;
}

// Big-endian bit writer: the inverse of RFC 4175's packing, for frames made from known planes.
void write_bits(std::vector<std::byte>& f, uint64_t bit, uint32_t n, uint32_t value) {
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t b = bit + i;
    const uint32_t v = (value >> (n - 1 - i)) & 1u;
    f[b / 8] = (f[b / 8] & std::byte(~(0x80u >> (b % 8)))) | std::byte(v << (7 - b % 8));
  }
}

// Plane p's sample at (x, row) in the "planes" content: distinct per plane, covering every value.
uint32_t known_sample(int p, uint32_t x, uint32_t row, uint32_t depth) {
  return (x * (3 + 4 * p) + row * (5 + p) + 17 * p) & ((1u << depth) - 1);
}

// The frame for a case: random bytes, or packed from known_sample (wire order per pgroup:
// Cb Y0 Cr Y1, or R G B).
std::vector<std::byte> make_frame(const Case& c, const VideoOptions& v, unsigned seed) {
  const uint64_t line = protocols::video::line_bytes(v);
  std::vector<std::byte> f(line * v.height);
  if (c.content == Content::random) {
    std::mt19937_64 rng(seed);
    for (auto& b : f) b = std::byte(rng() & 0xFF);
    return f;
  }
  const protocols::video::Pgroup g = protocols::video::pgroup_of(v.sampling, v.depth);
  for (uint32_t row = 0; row < v.height; ++row)
    for (uint32_t pg = 0; pg < v.width / g.pixels; ++pg) {
      const uint64_t bit = (row * line + uint64_t{pg} * g.bytes) * 8;
      const auto put = [&](int k, uint32_t value) { write_bits(f, bit + static_cast<uint64_t>(k) * v.depth, v.depth, value); };
      if (v.sampling == VideoSampling::ycbcr_422) {
        put(0, known_sample(1, pg, row, v.depth));
        put(1, known_sample(0, 2 * pg, row, v.depth));
        put(2, known_sample(2, pg, row, v.depth));
        put(3, known_sample(0, 2 * pg + 1, row, v.depth));
      } else {
        for (int k = 0; k < 3; ++k) put(k, known_sample(k, pg, row, v.depth));
      }
    }
  return f;
}

struct HostPlanes {
  std::vector<std::byte> bytes[3];
  VideoPlanes planes;
  HostPlanes(const VideoOptions& v, PlaneType type, uint32_t pad) {
    planes.type = type;
    for (int p = 0; p < 3; ++p) {
      planes.pitch[p] = uint64_t{plane_width(v, p)} * 2 + pad;
      bytes[p].assign(planes.pitch[p] * v.height, kSentinel);
      planes.data[p] = bytes[p].data();
    }
  }
};

uint16_t at(const HostPlanes& h, int p, uint32_t x, uint32_t row) {
  uint16_t s;
  std::memcpy(&s, h.bytes[p].data() + row * h.planes.pitch[p] + uint64_t{x} * 2, 2);
  return s;
}

// The first difference between two sets of planes, as a failure message.
::testing::AssertionResult same_planes(const VideoOptions& v, const HostPlanes& got, const HostPlanes& want) {
  for (int p = 0; p < 3; ++p) {
    if (got.bytes[p] == want.bytes[p]) continue;
    size_t i = 0;
    while (got.bytes[p][i] == want.bytes[p][i]) ++i;
    const uint64_t row = i / want.planes.pitch[p], col = i % want.planes.pitch[p];
    return ::testing::AssertionFailure()
           << "plane " << p << " differs at line " << row << ", byte " << col << " (sample " << col / 2 << " of "
           << plane_width(v, p) << "): got 0x" << std::hex << int(got.bytes[p][i]) << ", want 0x" << int(want.bytes[p][i]);
  }
  return ::testing::AssertionSuccess();
}

class st2110_video_unpack : public ::testing::TestWithParam<Case> {};

TEST_P(st2110_video_unpack, matches_cpu_reference) {
  const Case& c = GetParam();
  const VideoOptions v = options(c);
  ASSERT_EQ(video_unpack_check(v, HostPlanes(v, c.type, c.pad).planes), "");
  const std::vector<std::byte> frame = make_frame(c, v, c.width * 31 + c.height);

  HostPlanes want(v, c.type, c.pad);
  unpack_reference(v, frame.data(), want.planes);
  if (c.content == Content::planes) {  // the reference against the planes the frame was packed from
    const float scale = unpack_fp16_scale(v.depth);
    for (int p = 0; p < 3; ++p)
      for (uint32_t row = 0; row < v.height; ++row)
        for (uint32_t x = 0; x < plane_width(v, p); ++x) {
          const uint32_t s = known_sample(p, x, row, v.depth);
          const uint16_t expect = c.type == PlaneType::fp16 ? float_to_half_bits(float(s) * scale) : uint16_t(s);
          ASSERT_EQ(at(want, p, x, row), expect) << "reference: plane " << p << " line " << row << " sample " << x;
        }
  }
  NDQ_REQUIRE_GPU();  // the reference above is checked everywhere; the kernel needs a GPU

  DeviceArray<std::byte> in(frame.size() + 256);
  ASSERT_NE(in.p, nullptr);
  std::byte* dev_frame = in.p + c.in_offset;
  CUDA_OK(cudaMemcpy(dev_frame, frame.data(), frame.size(), cudaMemcpyHostToDevice));
  DeviceArray<std::byte> planes[3] = {DeviceArray<std::byte>(want.bytes[0].size()), DeviceArray<std::byte>(want.bytes[1].size()),
                                      DeviceArray<std::byte>(want.bytes[2].size())};
  VideoPlanes dev;
  dev.type = c.type;
  for (int p = 0; p < 3; ++p) {
    ASSERT_NE(planes[p].p, nullptr);
    dev.data[p] = planes[p].p;
    dev.pitch[p] = want.planes.pitch[p];
  }
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  UnpackJob job;
  std::string why;
  ASSERT_TRUE(make_unpack_job(v, dev_frame, dev, job, &why)) << why;
  // -1: the public entry point (its default variant); then every variant the bench compares.
  for (int variant : {-1, 0, 1, 2, 4}) {
    for (int p = 0; p < 3; ++p) CUDA_OK(cudaMemsetAsync(planes[p].p, int(kSentinel), want.bytes[p].size(), stream));
    if (variant < 0) unpack_video(v, dev_frame, dev, stream);
    else CUDA_OK(launch_unpack(job, stream, static_cast<uint32_t>(variant)));
    CUDA_OK(cudaStreamSynchronize(stream));
    HostPlanes got(v, c.type, c.pad);
    for (int p = 0; p < 3; ++p)
      CUDA_OK(cudaMemcpy(got.bytes[p].data(), planes[p].p, got.bytes[p].size(), cudaMemcpyDeviceToHost));
    EXPECT_TRUE(same_planes(v, got, want)) << "variant " << variant << " (vector stores " << job.vector_out
                                           << ", aligned frame " << job.aligned_in << ")";
  }
  CUDA_OK(cudaStreamDestroy(stream));
}

std::vector<Case> cases() {
  std::vector<Case> out;
  struct Fmt {
    VideoSampling s;
    uint8_t depth;
  };
  struct Size {
    uint32_t w, h;
  };
  // 2: one pgroup; 6, 722, 1926: not a multiple of 8 pixels (units straddle lines);
  // 1928: a multiple of 8 but not of a block's tile; 1920x1080, 3840x2160: the formats measured.
  const Size small[] = {{2, 1}, {2, 7}, {6, 5}, {722, 17}, {1926, 9}, {1928, 11}};
  for (const Fmt f : {Fmt{VideoSampling::ycbcr_422, 10}, Fmt{VideoSampling::ycbcr_422, 8}, Fmt{VideoSampling::rgb, 8}})
    for (const PlaneType t : {PlaneType::uint16, PlaneType::fp16}) {
      for (const Size s : small)
        for (const Content content : {Content::random, Content::planes})
          out.push_back({f.s, f.depth, s.w, s.h, t, 0, 0, content});
      out.push_back({f.s, f.depth, 1920, 1080, t, 0, 0, Content::random});
      out.push_back({f.s, f.depth, 1920, 1080, t, 64, 0, Content::planes});
      out.push_back({f.s, f.depth, 1928, 31, t, 2, 0, Content::random});   // pitches not 8-aligned
      out.push_back({f.s, f.depth, 1920, 33, t, 0, 1, Content::random});   // frame at an odd address
      out.push_back({f.s, f.depth, 1920, 33, t, 64, 4, Content::planes});  // 4-byte aligned frame
    }
  for (const PlaneType t : {PlaneType::uint16, PlaneType::fp16}) {
    out.push_back({VideoSampling::ycbcr_422, 10, 3840, 2160, t, 0, 0, Content::random});
    out.push_back({VideoSampling::ycbcr_422, 10, 3840, 2160, t, 128, 0, Content::planes});
  }
  out.push_back({VideoSampling::ycbcr_422, 8, 3840, 2160, PlaneType::uint16, 0, 0, Content::random});
  return out;
}

INSTANTIATE_TEST_SUITE_P(frames, st2110_video_unpack, ::testing::ValuesIn(cases()), case_name);

// Several frames in one launch (UnpackJob's frame strides, gridDim.y), each frame its own
// planes: every variant, lines that units straddle (722) and not (1920).
TEST(st2110_video_unpack_cases, frames_in_one_launch) {
  NDQ_REQUIRE_GPU();
  constexpr uint32_t kFrames = 3;
  for (const uint32_t width : {722u, 1920u})
    for (const PlaneType type : {PlaneType::uint16, PlaneType::fp16}) {
      const Case c{VideoSampling::ycbcr_422, 10, width, 35, type, 0, 0, Content::random};
      const VideoOptions v = options(c);
      const uint64_t in_stride = (protocols::video::frame_bytes(v) + 255) / 256 * 256;
      HostPlanes want[kFrames] = {HostPlanes(v, type, 0), HostPlanes(v, type, 0), HostPlanes(v, type, 0)};
      const uint64_t out_stride = (want[0].bytes[0].size() + want[0].bytes[1].size() + want[0].bytes[2].size() + 255) / 256 * 256;
      DeviceArray<std::byte> in(in_stride * kFrames), out(out_stride * kFrames);
      ASSERT_TRUE(in.p && out.p);
      for (uint32_t f = 0; f < kFrames; ++f) {
        const std::vector<std::byte> frame = make_frame(c, v, 1000 + f);
        CUDA_OK(cudaMemcpy(in.p + f * in_stride, frame.data(), frame.size(), cudaMemcpyHostToDevice));
        unpack_reference(v, frame.data(), want[f].planes);
      }
      VideoPlanes dev;  // frame 0's planes: Y, Cb, Cr one after another
      dev.type = type;
      std::byte* at = out.p;
      for (int p = 0; p < 3; ++p) {
        dev.data[p] = at;
        dev.pitch[p] = want[0].planes.pitch[p];
        at += want[0].bytes[p].size();
      }
      UnpackJob job;
      ASSERT_TRUE(make_unpack_job(v, in.p, dev, job, nullptr));
      job.in_frame_stride = in_stride;
      job.out_frame_stride = out_stride;
      for (const uint32_t variant : {kUnpackAuto, 0u, 1u, 2u, 4u}) {
        CUDA_OK(cudaMemset(out.p, int(kSentinel), out_stride * kFrames));
        CUDA_OK(launch_unpack(job, nullptr, variant, kFrames));
        CUDA_OK(cudaDeviceSynchronize());
        for (uint32_t f = 0; f < kFrames; ++f) {
          HostPlanes got(v, type, 0);
          for (int p = 0; p < 3; ++p)
            CUDA_OK(cudaMemcpy(got.bytes[p].data(), static_cast<std::byte*>(dev.data[p]) + f * out_stride,
                               got.bytes[p].size(), cudaMemcpyDeviceToHost));
          EXPECT_TRUE(same_planes(v, got, want[f])) << "width " << width << ", variant " << variant << ", frame " << f;
        }
      }
    }
}

// One pgroup worked by hand (RFC 4175 section 4.3's bit order): Cb=1 Y0=2 Cr=3 Y1=4 in 10 bits
// is 0000000001 0000000010 0000000011 0000000100 = 00 40 20 0C 04; and the largest values.
TEST(st2110_video_unpack_cases, hand_packed_pgroups) {
  NDQ_REQUIRE_GPU();
  VideoOptions v;
  v.width = 4;
  v.height = 1;
  v.depth = 10;
  const std::vector<std::byte> frame = {std::byte{0x00}, std::byte{0x40}, std::byte{0x20}, std::byte{0x0C}, std::byte{0x04},
                                        std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF}, std::byte{0xFF}};
  DeviceArray<std::byte> in(frame.size()), y(8), cb(4), cr(4);
  CUDA_OK(cudaMemcpy(in.p, frame.data(), frame.size(), cudaMemcpyHostToDevice));
  for (const PlaneType t : {PlaneType::uint16, PlaneType::fp16}) {
    VideoPlanes out{{y.p, cb.p, cr.p}, {8, 4, 4}, t};
    unpack_video(v, in.p, out, nullptr);
    CUDA_OK(cudaDeviceSynchronize());
    uint16_t gy[4], gcb[2], gcr[2];
    CUDA_OK(cudaMemcpy(gy, y.p, 8, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(gcb, cb.p, 4, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(gcr, cr.p, 4, cudaMemcpyDeviceToHost));
    const auto h = [&](uint32_t s) {
      return t == PlaneType::fp16 ? __half_as_ushort(__float2half_rn(float(s) * (1.0f / 1023.0f))) : uint16_t(s);
    };
    EXPECT_EQ(gy[0], h(2));
    EXPECT_EQ(gy[1], h(4));
    EXPECT_EQ(gy[2], h(1023));
    EXPECT_EQ(gy[3], h(1023));
    EXPECT_EQ(gcb[0], h(1));
    EXPECT_EQ(gcr[0], h(3));
    EXPECT_EQ(gcb[1], h(1023));
    EXPECT_EQ(gcr[1], h(1023));
  }
  // fp16 of the largest value is exactly 1.0, of 0 is 0.
  EXPECT_EQ(float_to_half_bits(1023.0f * unpack_fp16_scale(10)), 0x3C00);
  EXPECT_EQ(float_to_half_bits(255.0f * unpack_fp16_scale(8)), 0x3C00);
}

// The reference's fp16 rounding is the GPU's: float_to_half_bits (integer arithmetic) equals
// CUDA's __float2half_rn for every 10- and 8-bit sample.
TEST(st2110_video_unpack_cases, fp16_rule_matches_cuda_rounding) {
  for (uint32_t depth : {8u, 10u}) {
    const float scale = unpack_fp16_scale(depth);
    EXPECT_EQ(scale, 1.0f / float((1u << depth) - 1));
    uint16_t last = 0;
    for (uint32_t s = 0; s < (1u << depth); ++s) {
      const uint16_t bits = float_to_half_bits(float(s) * scale);
      ASSERT_EQ(bits, __half_as_ushort(__float2half_rn(float(s) * scale))) << "depth " << depth << " sample " << s;
      ASSERT_TRUE(s == 0 || bits >= last) << "not monotonic at " << s;
      last = bits;
    }
  }
}

// What unpack_video refuses, and says why (no GPU needed: it refuses before any launch).
TEST(st2110_video_unpack_cases, refuses_what_it_cannot_unpack) {
  VideoOptions v;
  v.width = 1920;
  v.height = 1080;
  v.depth = 10;
  alignas(16) static std::byte plane[16];
  VideoPlanes ok{{plane, plane, plane}, {3840, 1920, 1920}, PlaneType::uint16};
  EXPECT_EQ(video_unpack_check(v, ok), "");
  EXPECT_EQ(plane_width(v, 0), 1920u);
  EXPECT_EQ(plane_width(v, 1), 960u);
  const auto refused = [&](VideoOptions vv, VideoPlanes pp, const std::string& says) {
    const std::string why = video_unpack_check(vv, pp);
    EXPECT_NE(why.find(says), std::string::npos) << "'" << why << "' should say '" << says << "'";
    try {
      unpack_video(vv, plane, pp, nullptr);
      ADD_FAILURE() << "unpack_video took it: " << says;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::unsupported);
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  VideoOptions w444 = v;
  w444.sampling = VideoSampling::ycbcr_444;
  refused(w444, ok, "YCbCr-4:4:4 10-bit is not supported");
  VideoOptions d12 = v;
  d12.depth = 12;
  refused(d12, ok, "12-bit is not supported");
  VideoOptions odd = v;
  odd.width = 1921;
  refused(odd, ok, "not a frame of whole pixel groups");
  VideoPlanes short_pitch = ok;
  short_pitch.pitch[1] = 1918;
  refused(v, short_pitch, "plane Cb: pitch 1918 is shorter than its line (1920 bytes)");
  VideoPlanes null_plane = ok;
  null_plane.data[2] = nullptr;
  refused(v, null_plane, "plane Cr is null");
  VideoPlanes odd_addr = ok;
  odd_addr.data[0] = plane + 1;
  refused(v, odd_addr, "plane Y: address and pitch must be 2-byte aligned");
  VideoOptions rgb = v;
  rgb.sampling = VideoSampling::rgb;
  rgb.depth = 8;
  VideoPlanes rgb_short = ok;  // G is full width in RGB
  refused(rgb, rgb_short, "plane G: pitch 1920 is shorter than its line (3840 bytes)");
}

}  // namespace
}  // namespace netdaq::gpu::test
