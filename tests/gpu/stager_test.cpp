// Stager: packets scattered over a pinned pool land packed in the slot's device buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "gpu/stager.h"
#include "gpu_test_util.h"

namespace netdaq::gpu {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

struct Pinned {
  void* p = nullptr;
  explicit Pinned(size_t n) {
    if (cudaHostAlloc(&p, n, cudaHostAllocDefault) != cudaSuccess) p = nullptr;
  }
  ~Pinned() {
    if (p) cudaFreeHost(p);
  }
  std::byte* bytes() const { return static_cast<std::byte*>(p); }
};

// Stages `order` (buffer indices of the pool, stride bytes apart) into `slot`; checks the
// packed copy.
void stage_and_check(Stager& st, uint32_t slot, const std::byte* pool, uint32_t stride,
                     const std::vector<uint32_t>& order, cudaStream_t stream) {
  std::vector<const void*> srcs;
  for (uint32_t b : order) srcs.push_back(pool + uint64_t{b} * stride);
  CUDA_OK(st.stage(slot, srcs.data(), static_cast<uint32_t>(srcs.size()), stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  std::vector<std::byte> got(srcs.size() * st.in_bytes());
  CUDA_OK(cudaMemcpy(got.data(), st.slot_base(slot), got.size(), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < srcs.size(); ++i)
    ASSERT_EQ(0, std::memcmp(got.data() + i * st.in_bytes(), srcs[i], st.in_bytes())) << "packet " << i;
}

TEST(Stager, CopiesScatteredPinnedBuffersPacked) {
  NDQ_REQUIRE_GPU();
  for (uint32_t in_bytes : {1000u, 1024u, 8192u}) {
    const uint32_t stride = (in_bytes + 63) / 64 * 64, pool_n = 2048;
    Pinned pool(uint64_t{stride} * pool_n);
    ASSERT_TRUE(pool.p);
    std::mt19937 rng(in_bytes);
    for (uint64_t i = 0; i < uint64_t{stride} * pool_n; ++i) pool.bytes()[i] = static_cast<std::byte>(rng());
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    Stager st(0, 2, 1024, in_bytes);
    std::vector<uint32_t> order(pool_n);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), rng);
    // Random buffers (one copy each), runs of neighbours (merged copies), one packet.
    stage_and_check(st, 0, pool.bytes(), stride, {order.begin(), order.begin() + 1024}, stream);
    std::vector<uint32_t> runs;
    for (uint32_t i = 0; i < 64; ++i) runs.push_back(i < 32 ? 100 + i : 900 + i);
    stage_and_check(st, 1, pool.bytes(), stride, runs, stream);
    stage_and_check(st, 1, pool.bytes(), stride, {7}, stream);
    // The legacy default stream takes the per-copy fallback.
    stage_and_check(st, 0, pool.bytes(), stride, {order.begin() + 5, order.begin() + 69}, nullptr);
    CUDA_OK(cudaStreamDestroy(stream));
  }
}

TEST(Stager, NothingToDoAndBadArguments) {
  NDQ_REQUIRE_GPU();
  Stager st(0, 2, 16, 64);
  EXPECT_EQ(st.stage(0, nullptr, 0, nullptr), cudaSuccess);
  const void* one[1] = {nullptr};
  EXPECT_EQ(st.stage(2, one, 1, nullptr), cudaErrorInvalidValue);   // no such slot
  EXPECT_EQ(st.stage(0, one, 17, nullptr), cudaErrorInvalidValue);  // more than max_packets
  EXPECT_NE(st.slot_base(1), st.slot_base(0));
  EXPECT_EQ(st.slot_base(1) - st.slot_base(0), 16 * 64);
}

}  // namespace
}  // namespace netdaq::gpu
