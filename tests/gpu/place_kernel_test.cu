// The place kernel on the GPU against the CPU reference, bit for bit: every format pair and
// byte order, packet sizes 64 / 1000 / 1024 / 8192, random slots, missing packets, aligned
// and misaligned sources in device memory and in mapped pinned host memory (zero-copy).
#include <gtest/gtest.h>

#include <cstring>

#include "gpu/place_device.cuh"
#include "gpu/place_kernel.h"
#include "gpu_test_util.h"
#include "place_cases.h"

namespace netdaq::gpu::test {
namespace {

__global__ void k(PlaceJob j) { place_job(j, blockIdx.x, gridDim.x); }

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

struct Device {  // cudaMalloc'd, or cudaHostAlloc'd (mapped) when host
  void* p = nullptr;
  bool host = false;
  Device(uint64_t n, bool pinned_host = false) : host(pinned_host) {
    const cudaError_t err = host ? cudaHostAlloc(&p, n, cudaHostAllocMapped) : cudaMalloc(&p, n);
    if (err != cudaSuccess) p = nullptr;
  }
  ~Device() {
    if (p) host ? cudaFreeHost(p) : cudaFree(p);
  }
  std::byte* bytes() const { return static_cast<std::byte*>(p); }
};

// Runs s on the GPU with `blocks` x `threads`; the input in device or mapped host memory.
void run_on_gpu(const Scenario& s, unsigned blocks, unsigned threads, bool zero_copy, std::vector<std::byte>& got) {
  Device in(s.input.size(), zero_copy), out(s.out_bytes()), ent(sizeof(PlacementEntry) * s.count + 16);
  ASSERT_TRUE(in.p && out.p && ent.p);
  CUDA_OK(cudaMemcpy(in.p, s.input.data(), s.input.size(), cudaMemcpyDefault));
  const auto entries = s.entries(in.bytes());  // UVA: a mapped host pointer is valid on the GPU
  CUDA_OK(cudaMemcpy(ent.p, entries.data(), sizeof(PlacementEntry) * s.count, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(out.p, static_cast<int>(kPoison), s.out_bytes()));
  k<<<blocks, threads>>>(s.job(static_cast<const PlacementEntry*>(ent.p), out.bytes()));
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  got.resize(s.out_bytes());
  CUDA_OK(cudaMemcpy(got.data(), out.p, s.out_bytes(), cudaMemcpyDeviceToHost));
}

TEST(PlaceKernel, EveryFormatAndSizeMatchesTheReference) {
  NDQ_REQUIRE_GPU();
  unsigned seed = 100;
  for (const Formats& f : all_formats()) {
    for (uint32_t in_bytes : {64u, 1000u, 1024u, 8192u}) {
      for (bool packed : {true, false}) {
        const uint32_t stride = packed ? in_bytes : (in_bytes + 63) / 64 * 64;
        const Scenario s(f, in_bytes, 300, stride, 0, seed++);
        const auto want = s.expected();
        // 300 blocks: a block per packet; 8 blocks: a warp per packet.
        for (unsigned blocks : {300u, 8u}) {
          std::vector<std::byte> got;
          run_on_gpu(s, blocks, 256, false, got);
          ASSERT_EQ(first_difference(got, want, s.out_slot_bytes), "")
              << describe(f, in_bytes, 0, stride) << " blocks " << blocks;
        }
      }
    }
  }
}

TEST(PlaceKernel, MisalignedSourcesAndOddSizes) {
  NDQ_REQUIRE_GPU();
  unsigned seed = 5000;
  for (const Formats& f : all_formats()) {
    for (uint32_t in_bytes : {6u, 1003u, 1000u}) {
      for (uint32_t shift : {1u, 2u, 4u, 8u}) {
        const Scenario s(f, in_bytes, 64, in_bytes + shift, shift, seed++);
        std::vector<std::byte> got;
        run_on_gpu(s, 5, 96, false, got);
        ASSERT_EQ(first_difference(got, s.expected(), s.out_slot_bytes), "") << describe(f, in_bytes, shift, in_bytes + shift);
      }
    }
  }
}

TEST(PlaceKernel, ZeroCopyFromMappedHostMemory) {
  NDQ_REQUIRE_GPU();
  unsigned seed = 9000;
  for (const Formats& f : {Formats{SampleFormat::raw, SampleFormat::raw, ByteOrder::little},
                           Formats{SampleFormat::int16, SampleFormat::fp32, ByteOrder::big},
                           Formats{SampleFormat::int4, SampleFormat::bf16, ByteOrder::little}}) {
    for (uint32_t in_bytes : {1000u, 8192u}) {
      const Scenario s(f, in_bytes, 256, (in_bytes + 63) / 64 * 64, 0, seed++);
      std::vector<std::byte> got;
      run_on_gpu(s, 64, 256, true, got);
      ASSERT_EQ(first_difference(got, s.expected(), s.out_slot_bytes), "") << describe(f, in_bytes, 0, in_bytes);
    }
  }
}

// A staged launch through launch_place (the per_burst executor's call), packets in mapped
// host memory at offsets that are not 16-byte aligned: the frames match the reference and
// every packet's bytes are at its staging place.
TEST(PlaceKernel, StagedLaunchGathersThenPlaces) {
  NDQ_REQUIRE_GPU();
  unsigned seed = 12000;
  for (const Formats& f : all_formats()) {
    for (uint32_t in_bytes : {1000u, 1024u, 8192u}) {
      for (uint32_t shift : {0u, 10u}) {
        const Scenario s(f, in_bytes, 200, (in_bytes + 63) / 64 * 64 + 64, shift, seed++);
        Device in(s.input.size(), true), out(s.out_bytes()), stage(s.stage_bytes()), ent(sizeof(PlacementEntry) * s.count);
        ASSERT_TRUE(in.p && out.p && stage.p && ent.p);
        std::memcpy(in.p, s.input.data(), s.input.size());
        const auto entries = s.staged_entries(in.bytes());
        CUDA_OK(cudaMemcpy(ent.p, entries.data(), sizeof(PlacementEntry) * s.count, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemset(out.p, static_cast<int>(kPoison), s.out_bytes()));
        const PlaceJob job = s.job(static_cast<const PlacementEntry*>(ent.p), out.bytes());
        cudaStream_t stream = nullptr;
        CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CUDA_OK(launch_place(job, place_grid(s.count, 64), stream, stage.bytes()));
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaStreamDestroy(stream));
        std::vector<std::byte> got(s.out_bytes()), staged(s.stage_bytes());
        CUDA_OK(cudaMemcpy(got.data(), out.p, got.size(), cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(staged.data(), stage.p, staged.size(), cudaMemcpyDeviceToHost));
        ASSERT_EQ(first_difference(got, s.expected(), s.out_slot_bytes), "") << describe(f, in_bytes, shift, in_bytes);
        for (const PlacementEntry& e : entries) {
          if (!e.stage) continue;
          const std::byte* want = s.input.data() + (reinterpret_cast<const std::byte*>(e.src) - in.bytes());
          ASSERT_EQ(std::memcmp(staged.data() + staged_at(e.stage - 1, e.src, in_bytes), want, in_bytes), 0)
              << "staging place " << e.stage - 1 << ", " << describe(f, in_bytes, shift, in_bytes);
        }
      }
    }
  }
}

}  // namespace
}  // namespace netdaq::gpu::test
