// The video unpack kernel (RFC 4175 pgroups -> planar 16-bit, include/netdaq/video_unpack.h)
// against the copy the hardware does best: cudaMemcpy device-to-device of the same bytes, in
// the same run, both counted as bytes read + written per second. Target >= 0.8x for
// YCbCr-4:2:2 10-bit (issue 33), 1080p and 2160p, uint16 and fp16 planes.
//
// Each round unpacks a ring of frames (each with its own planes, together --ring-mib, well
// beyond L2) back to back on one stream, as frames arriving one after another would be; the
// anchor copies the same ring, (in + out) / 2 bytes per frame, one cudaMemcpyAsync per frame.
// Median of --reps rounds. Every variant's output is first compared with the CPU reference.
// A second anchor, "peak": the whole ring's bytes in one cudaMemcpyAsync (no per-frame launch
// or ramp), the copy engine's best; shown, no target.
// Rows "variant ..." compare the kernel's ways of loading (shared-memory tiles of 1, 2 or 4
// units per thread, or direct loads); the default row goes through unpack_video().
//
//   netdaq_video_unpack [--reps N] [--ring-mib N] [--gpu I] [--json PATH]
// Exit status: 0, 1 when a target is missed (MISSED in the table), 2 on a CUDA error, 3 when
// the GPU's planes differ from the CPU reference.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gpu/host/video_unpack_reference.h"
#include "gpu/video_unpack.h"
#include "netdaq/video_unpack.h"
#include "protocols/rtp_video_format.h"

namespace {

using namespace netdaq;
using namespace netdaq::gpu;

constexpr int kWarmup = 3;

#define CK(call)                                                                                     \
  do {                                                                                               \
    const cudaError_t err_ = (call);                                                                 \
    if (err_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(2);                                                                                  \
    }                                                                                                \
  } while (0)

struct Options {
  int reps = 20, gpu = 0;
  uint64_t ring_mib = 512;
  std::string json;
};

struct Row {
  std::string format, planes, name;
  uint32_t width = 0, height = 0, frames = 0;
  double frame_mib = 0;  // bytes read + written per frame
  double us_per_frame = 0, gbps = 0, anchor_gbps = 0, peak_gbps = 0, target = 0;
  double ratio() const { return anchor_gbps > 0 ? gbps / anchor_gbps : 0; }
  double ratio_peak() const { return peak_gbps > 0 ? gbps / peak_gbps : 0; }
};

struct DevBuf {
  std::byte* p = nullptr;
  explicit DevBuf(uint64_t n) { CK(cudaMalloc(reinterpret_cast<void**>(&p), std::max<uint64_t>(n, 1))); }
  ~DevBuf() { cudaFree(p); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

// Median milliseconds of one round (fn enqueues it on stream), after warm-up.
double median_ms(const Options& o, cudaStream_t stream, const std::function<void()>& fn) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = 0; r < kWarmup + o.reps; ++r) {
    CK(cudaEventRecord(a, stream));
    fn();
    CK(cudaEventRecord(b, stream));
    CK(cudaEventSynchronize(b));
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    if (r >= kWarmup) ms.push_back(t);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

// The planes of frame i of the ring: Y, Cb, Cr one after another, tight pitches.
VideoPlanes planes_at(const VideoOptions& v, std::byte* base, PlaneType type) {
  VideoPlanes p;
  p.type = type;
  std::byte* at = base;
  for (int k = 0; k < 3; ++k) {
    p.pitch[k] = uint64_t{plane_width(v, k)} * 2;
    p.data[k] = at;
    at += p.pitch[k] * v.height;
  }
  return p;
}

// A frame's planes against the CPU reference; exits 3 on a difference.
void check_planes(const char* what, const VideoPlanes& dev, const std::vector<std::byte>& want) {
  std::vector<std::byte> got(want.size());
  CK(cudaMemcpy(got.data(), dev.data[0], got.size(), cudaMemcpyDeviceToHost));
  if (got != want) {
    const auto mm = std::mismatch(got.begin(), got.end(), want.begin());
    std::fprintf(stderr, "%s: planes differ from the CPU reference at byte %zu\n", what,
                 static_cast<size_t>(mm.first - got.begin()));
    std::exit(3);
  }
}

void bench_format(const Options& o, cudaStream_t stream, const VideoOptions& v, const char* format,
                  std::vector<Row>& rows) {
  const uint64_t in_bytes = protocols::video::frame_bytes(v);
  const uint64_t out_bytes = (uint64_t{plane_width(v, 0)} + plane_width(v, 1) + plane_width(v, 2)) * 2 * v.height;
  const uint64_t moved = in_bytes + out_bytes;
  const uint32_t frames = static_cast<uint32_t>(std::max<uint64_t>(2, ((o.ring_mib << 20) + moved - 1) / moved));
  const uint64_t in_stride = (in_bytes + 255) / 256 * 256, out_stride = (out_bytes + 255) / 256 * 256;
  DevBuf in(in_stride * frames), out(out_stride * frames);
  std::vector<std::byte> frame(in_bytes);
  std::mt19937_64 rng(v.width + v.depth);
  for (uint32_t f = 0; f < frames; ++f) {
    for (auto& b : frame) b = std::byte(rng() & 0xFF);
    CK(cudaMemcpy(in.p + f * in_stride, frame.data(), in_bytes, cudaMemcpyHostToDevice));
  }
  // The first and the last frame of the ring, for the reference.
  std::vector<std::byte> last(in_bytes);
  CK(cudaMemcpy(frame.data(), in.p, in_bytes, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(last.data(), in.p + (frames - 1) * in_stride, in_bytes, cudaMemcpyDeviceToHost));

  // The anchor: the same ring copied, (in + out) / 2 bytes per frame, one copy per frame.
  const uint64_t half = moved / 2, copy_stride = (half + 255) / 256 * 256;
  double t_copy = 0, t_peak = 0;
  {
    DevBuf a(copy_stride * frames), b(copy_stride * frames);
    t_copy = median_ms(o, stream, [&] {
      for (uint32_t f = 0; f < frames; ++f)
        CK(cudaMemcpyAsync(b.p + f * copy_stride, a.p + f * copy_stride, half, cudaMemcpyDeviceToDevice, stream));
    });
    t_peak = median_ms(o, stream, [&] { CK(cudaMemcpyAsync(b.p, a.p, half * frames, cudaMemcpyDeviceToDevice, stream)); });
  }
  const double anchor = gbps(2.0 * double(half) * frames, t_copy), peak = gbps(2.0 * double(half) * frames, t_peak);

  for (const PlaneType type : {PlaneType::uint16, PlaneType::fp16}) {
    const char* planes = type == PlaneType::fp16 ? "fp16" : "uint16";
    std::vector<std::byte> want(out_bytes), want_last(out_bytes);
    unpack_reference(v, frame.data(), planes_at(v, want.data(), type));
    unpack_reference(v, last.data(), planes_at(v, want_last.data(), type));
    struct Variant {
      const char* name;
      int units;  // -1: unpack_video (the default); -2: the whole ring in one launch (auto)
    };
    for (const Variant var : {Variant{"unpack_video (default)", -1}, Variant{"variant: direct loads", 0},
                              Variant{"variant: 1 unit/thread tile", 1}, Variant{"variant: 2 units/thread tile", 2},
                              Variant{"variant: 4 units/thread tile", 4}, Variant{"batch: ring in one launch", -2}}) {
      std::vector<UnpackJob> jobs(frames);
      for (uint32_t f = 0; f < frames; ++f) {
        std::string why;
        if (!make_unpack_job(v, in.p + f * in_stride, planes_at(v, out.p + f * out_stride, type), jobs[f], &why)) {
          std::fprintf(stderr, "%s\n", why.c_str());
          std::exit(1);
        }
      }
      UnpackJob batch = jobs[0];
      batch.in_frame_stride = in_stride;
      batch.out_frame_stride = out_stride;
      const auto round = [&] {
        if (var.units == -2) {
          CK(launch_unpack(batch, stream, kUnpackAuto, frames));
          return;
        }
        for (uint32_t f = 0; f < frames; ++f) {
          if (var.units < 0) unpack_video(v, in.p + f * in_stride, planes_at(v, out.p + f * out_stride, type), stream);
          else CK(launch_unpack(jobs[f], stream, static_cast<uint32_t>(var.units)));
        }
      };
      CK(cudaMemsetAsync(out.p, 0xA5, out_stride * frames, stream));
      round();
      CK(cudaStreamSynchronize(stream));
      const std::string what = std::string(format) + " " + std::to_string(v.width) + "x" + std::to_string(v.height) +
                               " " + planes + " " + var.name;
      check_planes(what.c_str(), planes_at(v, out.p, type), want);
      check_planes((what + ", last frame").c_str(), planes_at(v, out.p + (frames - 1) * out_stride, type), want_last);
      const double t = median_ms(o, stream, round);
      Row r;
      r.format = format;
      r.planes = planes;
      r.name = var.name;
      r.width = v.width;
      r.height = v.height;
      r.frames = frames;
      r.frame_mib = double(moved) / (1 << 20);
      r.us_per_frame = t * 1e3 / frames;
      r.gbps = gbps(double(moved) * frames, t);
      r.anchor_gbps = anchor;
      r.peak_gbps = peak;
      r.target = var.units == -1 && v.depth == 10 ? 0.8 : 0;
      rows.push_back(r);
    }
  }
}

void print(const std::vector<Row>& rows) {
  std::printf("%-12s %-10s %-7s %-30s %6s %9s %8s %11s %9s %6s %9s %7s %s\n", "format", "size", "planes", "kernel",
              "frames", "MiB/frame", "us/frame", "unpack GB/s", "D2D GB/s", "ratio", "peak GB/s", "vs peak", "target");
  for (const Row& r : rows) {
    char target[32] = "-";
    if (r.target > 0) std::snprintf(target, sizeof target, ">= %.1f %s", r.target, r.ratio() >= r.target ? "ok" : "MISSED");
    const std::string size = std::to_string(r.width) + "x" + std::to_string(r.height);
    std::printf("%-12s %-10s %-7s %-30s %6u %9.1f %8.2f %11.1f %9.1f %6.2f %9.1f %7.2f %s\n", r.format.c_str(),
                size.c_str(), r.planes.c_str(), r.name.c_str(), r.frames, r.frame_mib, r.us_per_frame, r.gbps, r.anchor_gbps,
                r.ratio(), r.peak_gbps, r.ratio_peak(), target);
  }
}

void write_json(const std::string& path, const std::string& device, const std::vector<Row>& rows) {
  FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::fprintf(f, "{\n  \"bench\": \"video_unpack\",\n  \"device\": \"%s\",\n  \"results\": [\n", device.c_str());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::fprintf(f,
                 "    {\"format\": \"%s\", \"width\": %u, \"height\": %u, \"planes\": \"%s\", \"kernel\": \"%s\", "
                 "\"frames\": %u, \"frame_mib\": %.2f, \"us_per_frame\": %.3f, \"gbps\": %.2f, \"anchor_gbps\": %.2f, "
                 "\"ratio\": %.3f, \"peak_gbps\": %.2f, \"ratio_vs_peak\": %.3f, \"target\": %.1f, \"ok\": %s}%s\n",
                 r.format.c_str(), r.width, r.height, r.planes.c_str(), r.name.c_str(), r.frames, r.frame_mib,
                 r.us_per_frame, r.gbps, r.anchor_gbps, r.ratio(), r.peak_gbps, r.ratio_peak(), r.target,
                 r.target == 0 || r.ratio() >= r.target ? "true" : "false", i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  if (f != stdout) std::fclose(f);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--json" && has) o.json = argv[++i];
    else if (a == "--reps" && has) o.reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--ring-mib" && has) o.ring_mib = std::max<uint64_t>(1, std::strtoull(argv[++i], nullptr, 10));
    else if (a == "--gpu" && has) o.gpu = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--reps N] [--ring-mib N] [--gpu I] [--json PATH]\n", argv[0]);
      std::exit(a == "--help" ? 0 : 1);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= o.gpu) {
    std::fprintf(stderr, "video_unpack: no usable GPU %d\n", o.gpu);
    return 2;
  }
  CK(cudaSetDevice(o.gpu));
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, o.gpu));
  std::printf("gpu %d: %s, %d SMs, L2 %d MiB; ring of %llu MiB per measurement, median of %d rounds\n", o.gpu, p.name,
              p.multiProcessorCount, p.l2CacheSize >> 20, static_cast<unsigned long long>(o.ring_mib), o.reps);
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<Row> rows;
  struct Fmt {
    const char* name;
    VideoSampling sampling;
    uint8_t depth;
  };
  for (const Fmt f : {Fmt{"422 10-bit", VideoSampling::ycbcr_422, 10}, Fmt{"422 8-bit", VideoSampling::ycbcr_422, 8}})
    for (const auto [w, h] : {std::pair{1920u, 1080u}, std::pair{3840u, 2160u}}) {
      VideoOptions v;
      v.width = w;
      v.height = h;
      v.sampling = f.sampling;
      v.depth = f.depth;
      v.rate_num = 60;
      bench_format(o, stream, v, f.name, rows);
    }
  print(rows);
  if (!o.json.empty()) write_json(o.json, p.name, rows);
  CK(cudaStreamDestroy(stream));
  bool ok = true;
  for (const Row& r : rows) ok = ok && (r.target == 0 || r.ratio() >= r.target);
  if (!ok) std::printf("MISS: unpack below %.1fx of D2D copy bandwidth (rows marked MISSED)\n", 0.8);
  return ok ? 0 : 1;
}
