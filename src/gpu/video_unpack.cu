// The video unpack kernel (src/gpu/video_unpack.h): RFC 4175 pgroups -> planar 16-bit samples.
// Bandwidth first: the frame is read once with 16-byte coalesced loads into shared memory
// (a pgroup of 5 bytes never lines up with a thread otherwise), every output plane is written
// with one 16- or 8-byte store per thread, contiguous across a warp.
#include <cuda_fp16.h>

#include <atomic>

#include "gpu/cuda_check.h"
#include "gpu/video_unpack.h"
#include "protocols/rtp_video_format.h"

namespace netdaq::gpu {
namespace {

// A unit: the pgroups of 8 pixels, the samples they give each plane.
template <UnpackFormat F>
struct Unit;
template <>
struct Unit<UnpackFormat::ycbcr422_10> {
  static constexpr uint32_t pgroups = 4, bytes = 20;  // 4 x (Cb Y0 Cr Y1, 10 bits each)
  __host__ __device__ static constexpr uint32_t samples(int p) { return p == 0 ? 8 : 4; }
};
template <>
struct Unit<UnpackFormat::ycbcr422_8> {
  static constexpr uint32_t pgroups = 4, bytes = 16;  // 4 x (Cb Y0 Cr Y1, 8 bits each)
  __host__ __device__ static constexpr uint32_t samples(int p) { return p == 0 ? 8 : 4; }
};
template <>
struct Unit<UnpackFormat::rgb_8> {
  static constexpr uint32_t pgroups = 8, bytes = 24;  // 8 x (R G B)
  __host__ __device__ static constexpr uint32_t samples(int) { return 8; }
};

constexpr uint32_t unit_pgroups(UnpackFormat f) {
  return f == UnpackFormat::rgb_8 ? Unit<UnpackFormat::rgb_8>::pgroups : Unit<UnpackFormat::ycbcr422_10>::pgroups;
}

// The unit's words as they lie in memory (little-endian loads) -> samples per plane.
template <UnpackFormat F>
__device__ __forceinline__ void decode(const uint32_t (&w)[Unit<F>::bytes / 4], uint32_t (&s)[3][8]) {
  if constexpr (F == UnpackFormat::ycbcr422_10) {
    uint32_t b[5];  // the 160-bit string, big-endian: component k is bits [10k, 10k + 10)
#pragma unroll
    for (int i = 0; i < 5; ++i) b[i] = __byte_perm(w[i], 0, 0x0123);
    const auto c = [&](int k) {
      const int pos = 10 * k, j = pos >> 5, sh = pos & 31;
      const uint32_t lo = j + 1 < 5 ? b[j + 1] : 0;
      return __funnelshift_l(lo, b[j], sh) >> 22;
    };
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      s[1][g] = c(4 * g);
      s[0][2 * g] = c(4 * g + 1);
      s[2][g] = c(4 * g + 2);
      s[0][2 * g + 1] = c(4 * g + 3);
    }
  } else if constexpr (F == UnpackFormat::ycbcr422_8) {
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      s[1][g] = w[g] & 0xFF;
      s[0][2 * g] = (w[g] >> 8) & 0xFF;
      s[2][g] = (w[g] >> 16) & 0xFF;
      s[0][2 * g + 1] = w[g] >> 24;
    }
  } else {
#pragma unroll
    for (int i = 0; i < 24; ++i) s[i % 3][i / 3] = (w[i / 4] >> (8 * (i % 4))) & 0xFF;
  }
}

__device__ __forceinline__ uint32_t sample_bits(uint32_t v, const UnpackJob& job) {
  return job.fp16 ? __half_as_ushort(__float2half_rn(__fmul_rn(__uint2float_rn(v), job.scale))) : v;
}

// Writes the unit whose first pgroup is `first`; the frame's planes are out_off past job.out.
template <UnpackFormat F>
__device__ __forceinline__ void store_unit(const UnpackJob& job, uint64_t out_off, uint32_t first,
                                           const uint32_t (&s)[3][8]) {
  using U = Unit<F>;
  uint32_t row = first / job.row_pgroups, col = first - row * job.row_pgroups;
  if (job.vector_out) {  // the unit lies in one line; 16-byte (8 samples) or 8-byte (4) stores
#pragma unroll
    for (int p = 0; p < 3; ++p) {
      uint32_t w[4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        w[i] = 2 * i < int(U::samples(p)) ? sample_bits(s[p][2 * i], job) | sample_bits(s[p][2 * i + 1], job) << 16 : 0;
      std::byte* dst = job.out[p] + out_off + uint64_t{row} * job.pitch[p] + uint64_t{col} * U::samples(p) / U::pgroups * 2;
      if (U::samples(p) == 8) *reinterpret_cast<uint4*>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
      else *reinterpret_cast<uint2*>(dst) = make_uint2(w[0], w[1]);
    }
    return;
  }
  // Units straddling lines, or planes that do not suit vector stores: one sample at a time.
#pragma unroll
  for (uint32_t g = 0; g < U::pgroups; ++g) {
    if (first + g >= job.pgroups) break;
#pragma unroll
    for (int p = 0; p < 3; ++p) {
      const uint32_t per = U::samples(p) / U::pgroups;  // samples of plane p per pgroup: 1 or 2
#pragma unroll
      for (uint32_t e = 0; e < 2; ++e) {
        if (e >= per) break;
        std::byte* dst = job.out[p] + out_off + uint64_t{row} * job.pitch[p] + (uint64_t{col} * per + e) * 2;
        *reinterpret_cast<uint16_t*>(dst) = static_cast<uint16_t>(sample_bits(s[p][g * per + e], job));
      }
    }
    if (++col == job.row_pgroups) {
      col = 0;
      ++row;
    }
  }
}

// Staged: a block's tile of kUnpackThreads x S units comes into shared memory with 16-byte
// loads, all issued before the first is used; then each thread unpacks S units, kUnpackThreads
// apart, so a warp's stores are contiguous.
template <UnpackFormat F, uint32_t S>
__global__ void __launch_bounds__(kUnpackThreads) unpack_staged(const __grid_constant__ UnpackJob job) {
  using U = Unit<F>;
  constexpr uint32_t tile_units = kUnpackThreads * S, tile_bytes = tile_units * U::bytes, tile_vecs = tile_bytes / 16;
  static_assert(tile_bytes % 16 == 0);
  __shared__ uint4 tile[tile_vecs];
  const uint32_t t = threadIdx.x;
  const uint64_t b0 = uint64_t{blockIdx.x} * tile_bytes;
  const std::byte* frame = job.in + blockIdx.y * job.in_frame_stride;
  const uint32_t nb = job.in_bytes - b0 < tile_bytes ? static_cast<uint32_t>(job.in_bytes - b0) : tile_bytes;
  if (job.aligned_in && nb == tile_bytes) {
    const uint4* src = reinterpret_cast<const uint4*>(frame + b0);
    constexpr uint32_t per_thread = (tile_vecs + kUnpackThreads - 1) / kUnpackThreads;
    uint4 v[per_thread];
#pragma unroll
    for (uint32_t k = 0; k < per_thread; ++k)
      if (t + k * kUnpackThreads < tile_vecs) v[k] = __ldcs(src + t + k * kUnpackThreads);
#pragma unroll
    for (uint32_t k = 0; k < per_thread; ++k)
      if (t + k * kUnpackThreads < tile_vecs) tile[t + k * kUnpackThreads] = v[k];
  } else {  // the frame's last tile, or a frame not 16-byte aligned: vectors where whole, then bytes
    uint32_t head = 0;
    if (job.aligned_in) {
      const uint4* src = reinterpret_cast<const uint4*>(frame + b0);
      for (uint32_t i = t; i < nb / 16; i += kUnpackThreads) tile[i] = __ldcs(src + i);
      head = nb & ~15u;
    }
    auto* bytes = reinterpret_cast<unsigned char*>(tile);
    const auto* in = reinterpret_cast<const unsigned char*>(frame + b0);
    for (uint32_t i = head + t; i < nb; i += kUnpackThreads) bytes[i] = in[i];
  }
  __syncthreads();
#pragma unroll
  for (uint32_t k = 0; k < S; ++k) {
    const uint32_t u = t + k * kUnpackThreads;
    const uint32_t first = (blockIdx.x * tile_units + u) * U::pgroups;
    if (first >= job.pgroups) break;
    uint32_t w[U::bytes / 4];
    const auto* sw = reinterpret_cast<const uint32_t*>(tile) + u * (U::bytes / 4);
#pragma unroll
    for (uint32_t i = 0; i < U::bytes / 4; ++i) w[i] = sw[i];  // stride 5 words (10-bit): no bank conflict
    uint32_t s[3][8];
    decode<F>(w, s);
    store_unit<F>(job, blockIdx.y * job.out_frame_stride, first, s);
  }
}

// Direct: each thread loads its unit's words itself (L1 merges the warp's overlapping
// sectors). Kept to compare with staging (bench/gpu/video_unpack.cu).
template <UnpackFormat F>
__global__ void __launch_bounds__(kUnpackThreads) unpack_direct(const __grid_constant__ UnpackJob job) {
  using U = Unit<F>;
  constexpr uint32_t nw = U::bytes / 4;
  const uint32_t unit = blockIdx.x * kUnpackThreads + threadIdx.x;
  const uint32_t first = unit * U::pgroups;
  if (first >= job.pgroups) return;
  const uint64_t off = uint64_t{unit} * U::bytes;
  const std::byte* frame = job.in + blockIdx.y * job.in_frame_stride;
  uint32_t w[nw];
  if (job.aligned_in && off + U::bytes <= job.in_bytes) {
    if constexpr (U::bytes % 16 == 0) {
#pragma unroll
      for (uint32_t i = 0; i < nw / 4; ++i) {
        const uint4 v = __ldcs(reinterpret_cast<const uint4*>(frame + off) + i);
        w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
      }
    } else if constexpr (U::bytes % 8 == 0) {
#pragma unroll
      for (uint32_t i = 0; i < nw / 2; ++i) {
        const uint2 v = __ldcs(reinterpret_cast<const uint2*>(frame + off) + i);
        w[2 * i] = v.x, w[2 * i + 1] = v.y;
      }
    } else {
#pragma unroll
      for (uint32_t i = 0; i < nw; ++i) w[i] = __ldcs(reinterpret_cast<const unsigned*>(frame + off) + i);
    }
  } else {
    const auto* in = reinterpret_cast<const unsigned char*>(frame);
#pragma unroll
    for (uint32_t i = 0; i < nw; ++i) {
      w[i] = 0;
#pragma unroll
      for (uint32_t b = 0; b < 4; ++b)
        if (off + 4 * i + b < job.in_bytes) w[i] |= uint32_t{in[off + 4 * i + b]} << (8 * b);
    }
  }
  uint32_t s[3][8];
  decode<F>(w, s);
  store_unit<F>(job, blockIdx.y * job.out_frame_stride, first, s);
}

// Units one wave of 4-unit tiles would take: 8 blocks of kUnpackThreads x 4 per SM; 0 when
// the device cannot be asked. Per device, asked once.
uint64_t wave_units() noexcept {
  static std::atomic<uint32_t> sms[64];
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0) return 0;
  uint32_t n = dev < 64 ? sms[dev].load(std::memory_order_relaxed) : 0;
  if (n == 0) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || v <= 0) return 0;
    n = static_cast<uint32_t>(v);
    if (dev < 64) sms[dev].store(n, std::memory_order_relaxed);
  }
  return uint64_t{n} * 8 * kUnpackThreads * 4;
}

template <UnpackFormat F>
const void* kernel_for(uint32_t units) {
  switch (units) {
    case 0: return reinterpret_cast<const void*>(&unpack_direct<F>);
    case 1: return reinterpret_cast<const void*>(&unpack_staged<F, 1>);
    case 2: return reinterpret_cast<const void*>(&unpack_staged<F, 2>);
    default: return reinterpret_cast<const void*>(&unpack_staged<F, 4>);
  }
}

}  // namespace

bool make_unpack_job(const VideoOptions& video, const void* frame, const VideoPlanes& out, UnpackJob& job,
                     std::string* why) {
  if (!unpack_acceptable(video, out, why)) return false;
  if (!frame) {
    if (why) *why = "video unpack: the frame is null";
    return false;
  }
  UnpackFormat f{};
  unpack_format(video, f);
  const protocols::video::Pgroup g = protocols::video::pgroup_of(video.sampling, video.depth);
  job = UnpackJob{};
  job.in = static_cast<const std::byte*>(frame);
  job.in_bytes = protocols::video::frame_bytes(video);
  job.row_pgroups = video.width / g.pixels;
  job.pgroups = job.row_pgroups * video.height;
  job.scale = unpack_fp16_scale(video.depth);
  job.format = f;
  job.fp16 = out.type == PlaneType::fp16;
  job.aligned_in = reinterpret_cast<uintptr_t>(frame) % 16 == 0;
  const uint32_t unit_pg = unit_pgroups(f);
  job.vector_out = job.row_pgroups % unit_pg == 0;
  for (int p = 0; p < 3; ++p) {
    job.out[p] = static_cast<std::byte*>(out.data[p]);
    job.pitch[p] = out.pitch[p];
    const uint32_t store = (f == UnpackFormat::rgb_8 || p == 0) ? 16 : 8;  // bytes one thread writes
    if (reinterpret_cast<uintptr_t>(out.data[p]) % store != 0 || out.pitch[p] % store != 0) job.vector_out = false;
  }
  return true;
}

cudaError_t launch_unpack(const UnpackJob& job, cudaStream_t stream, uint32_t units, uint32_t frames) noexcept {
  const uint32_t unit_pg = unit_pgroups(job.format);
  const uint64_t total_units = (uint64_t{job.pgroups} + unit_pg - 1) / unit_pg;
  if (units == kUnpackAuto) units = total_units * frames * 2 >= wave_units() && wave_units() > 0 ? 4 : 0;
  units = units <= 2 ? units : 4;  // the variants built: 0 (direct), 1, 2, 4
  const uint64_t per_block = uint64_t{kUnpackThreads} * (units == 0 ? 1 : units);
  const auto grid = static_cast<uint32_t>((total_units + per_block - 1) / per_block);
  if (grid == 0 || frames == 0) return cudaSuccess;
  const void* k = nullptr;
  switch (job.format) {
    case UnpackFormat::ycbcr422_10: k = kernel_for<UnpackFormat::ycbcr422_10>(units); break;
    case UnpackFormat::ycbcr422_8: k = kernel_for<UnpackFormat::ycbcr422_8>(units); break;
    case UnpackFormat::rgb_8: k = kernel_for<UnpackFormat::rgb_8>(units); break;
  }
  void* args[] = {const_cast<UnpackJob*>(&job)};
  return cudaLaunchKernel(k, dim3(grid, frames), dim3(kUnpackThreads), args, 0, stream);
}

void unpack_video(const VideoOptions& video, const void* frame, const VideoPlanes& out, Stream stream) {
  UnpackJob job;
  if (!make_unpack_job(video, frame, out, job, nullptr)) {
    std::string why;
    make_unpack_job(video, frame, out, job, &why);
    throw Error(Errc::unsupported, why);
  }
  check(launch_unpack(job, stream), "video unpack: kernel launch");
}

}  // namespace netdaq::gpu
