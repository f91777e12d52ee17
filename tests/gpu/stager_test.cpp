// Stager, every option (sm gather kernel with mapped or device entries, copy_engine batch
// copy; gathers on the caller's stream or on the Stager's own streams): packets scattered
// over a pinned pool land packed in the slot's device buffer, and work queued on the
// caller's stream after stage() sees them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
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

class StagerEngines : public ::testing::TestWithParam<StagerOptions> {};

TEST_P(StagerEngines, CopiesScatteredPinnedBuffersPacked) {
  NDQ_REQUIRE_GPU();
  for (uint32_t in_bytes : {1000u, 1024u, 8192u}) {
    const uint32_t stride = (in_bytes + 63) / 64 * 64, pool_n = 2048;
    Pinned pool(uint64_t{stride} * pool_n);
    ASSERT_TRUE(pool.p);
    std::mt19937 rng(in_bytes);
    for (uint64_t i = 0; i < uint64_t{stride} * pool_n; ++i) pool.bytes()[i] = static_cast<std::byte>(rng());
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    Stager st(0, 2, 1024, in_bytes, GetParam());
    EXPECT_EQ(st.engine(), GetParam().engine);
    EXPECT_EQ(st.entries(), GetParam().entries);
    EXPECT_EQ(st.streams(), std::min(GetParam().streams, 2u));
    std::vector<uint32_t> order(pool_n);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), rng);
    // Random buffers (one copy each), runs of neighbours (merged copies), one packet.
    stage_and_check(st, 0, pool.bytes(), stride, {order.begin(), order.begin() + 1024}, stream);
    std::vector<uint32_t> runs;
    for (uint32_t i = 0; i < 64; ++i) runs.push_back(i < 32 ? 100 + i : 900 + i);
    stage_and_check(st, 1, pool.bytes(), stride, runs, stream);
    stage_and_check(st, 1, pool.bytes(), stride, {7}, stream);
    // The legacy default stream (copy_engine on it: the per-copy fallback; own streams: the
    // legacy stream waits for the gather's event).
    stage_and_check(st, 0, pool.bytes(), stride, {order.begin() + 5, order.begin() + 69}, nullptr);
    CUDA_OK(cudaStreamDestroy(stream));
  }
}

TEST_P(StagerEngines, BackToBackBurstsWithSlotsReusedAfterCompletion) {
  // As the pipeline runs it: bursts queued without waiting, a slot reused once the event
  // recorded after its previous burst completed (the slot reuse contract); each burst's slot
  // is read on the caller's stream right after stage() (the placement job's place), so with
  // own streams this checks that the caller's stream waits for each gather.
  NDQ_REQUIRE_GPU();
  const uint32_t in_bytes = 1024, stride = 1088, pool_n = 4096, burst = 64, slots = 3;
  Pinned pool(uint64_t{stride} * pool_n);
  ASSERT_TRUE(pool.p);
  std::mt19937 rng(5);
  for (uint64_t i = 0; i < uint64_t{stride} * pool_n; ++i) pool.bytes()[i] = static_cast<std::byte>(rng());
  std::vector<const void*> srcs(pool_n);
  for (uint32_t i = 0; i < pool_n; ++i) srcs[i] = pool.bytes() + uint64_t{(i * 2654435761u) % pool_n} * stride;
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Stager st(0, slots, burst, in_bytes, GetParam());
  cudaEvent_t done[slots];
  for (cudaEvent_t& ev : done) CUDA_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  // Each burst's slot is copied out to its own place in `all` right after it, in stream order.
  std::vector<std::byte> all(uint64_t{pool_n} * in_bytes);
  Pinned out(all.size());
  ASSERT_TRUE(out.p);
  for (uint32_t b = 0; b < pool_n / burst; ++b) {
    const uint32_t slot = b % slots;
    if (b >= slots) {
      CUDA_OK(cudaEventSynchronize(done[slot]));
    }
    CUDA_OK(st.stage(slot, &srcs[uint64_t{b} * burst], burst, stream));
    CUDA_OK(cudaMemcpyAsync(out.bytes() + uint64_t{b} * burst * in_bytes, st.slot_base(slot), uint64_t{burst} * in_bytes,
                            cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaEventRecord(done[slot], stream));
  }
  CUDA_OK(cudaStreamSynchronize(stream));
  for (uint32_t i = 0; i < pool_n; ++i)
    ASSERT_EQ(0, std::memcmp(out.bytes() + uint64_t{i} * in_bytes, srcs[i], in_bytes)) << "packet " << i;
  for (cudaEvent_t ev : done) CUDA_OK(cudaEventDestroy(ev));
  CUDA_OK(cudaStreamDestroy(stream));
}

TEST_P(StagerEngines, NothingToDoAndBadArguments) {
  NDQ_REQUIRE_GPU();
  Stager st(0, 2, 16, 64, GetParam());
  EXPECT_EQ(st.stage(0, nullptr, 0, nullptr), cudaSuccess);
  const void* one[1] = {nullptr};
  EXPECT_EQ(st.stage(2, one, 1, nullptr), cudaErrorInvalidValue);   // no such slot
  EXPECT_EQ(st.stage(0, one, 17, nullptr), cudaErrorInvalidValue);  // more than max_packets
  EXPECT_NE(st.slot_base(1), st.slot_base(0));
  EXPECT_EQ(st.slot_base(1) - st.slot_base(0), 16 * 64);
}

std::string option_name(const StagerOptions& o) {
  std::string n = o.engine == StagerEngine::sm ? "sm" : "copy_engine";
  if (o.engine == StagerEngine::sm) n += o.entries == StagerEntries::mapped ? "_mapped" : "_device";
  return n + (o.streams ? "_streams" + std::to_string(o.streams) : "_caller");
}

INSTANTIATE_TEST_SUITE_P(Stager, StagerEngines,
                         ::testing::Values(StagerOptions{StagerEngine::sm, StagerEntries::mapped, 0},
                                           StagerOptions{StagerEngine::sm, StagerEntries::mapped, 1},
                                           StagerOptions{StagerEngine::sm, StagerEntries::mapped, 4},
                                           StagerOptions{StagerEngine::sm, StagerEntries::device, 0},
                                           StagerOptions{StagerEngine::sm, StagerEntries::device, 4},
                                           StagerOptions{StagerEngine::copy_engine, StagerEntries::mapped, 0},
                                           StagerOptions{StagerEngine::copy_engine, StagerEntries::mapped, 4}),
                         [](const ::testing::TestParamInfo<StagerOptions>& i) { return option_name(i.param); });

TEST(Stager, DefaultsAreSmMappedOnOwnStreamsAndNullSourcesAreRefused) {
  NDQ_REQUIRE_GPU();
  Stager st(0, 1, 4, 64);
  EXPECT_EQ(st.engine(), StagerEngine::sm);
  EXPECT_EQ(st.entries(), StagerEntries::mapped);
  EXPECT_EQ(st.streams(), 1u);  // 4 by default, clamped to the slot count
  const void* srcs[2] = {st.slot_base(0), nullptr};  // device memory is a valid source; null is not
  EXPECT_EQ(st.stage(0, srcs, 2, nullptr), cudaErrorInvalidValue);
  Stager ce(0, 8, 4, 64, StagerEngine::copy_engine);  // the engine-only constructor
  EXPECT_EQ(ce.engine(), StagerEngine::copy_engine);
  EXPECT_EQ(ce.streams(), 4u);
}

TEST(Stager, OwnStreamsLetTheCallerStreamOrderWorkAfterTheGather) {
  // The caller's stream is busy with a long host-to-device copy queued before stage(); the
  // gather (own stream) need not wait for it, and a copy queued on the caller's stream after
  // stage() must still read the staged data (the caller's stream waits for the gather).
  NDQ_REQUIRE_GPU();
  const uint32_t in_bytes = 4096, count = 256;
  Pinned pool(uint64_t{in_bytes} * count), big(64u << 20), out(uint64_t{in_bytes} * count);
  ASSERT_TRUE(pool.p && big.p && out.p);
  std::mt19937 rng(9);
  for (uint64_t i = 0; i < uint64_t{in_bytes} * count; ++i) pool.bytes()[i] = static_cast<std::byte>(rng());
  void* dev = nullptr;
  CUDA_OK(cudaMalloc(&dev, 64u << 20));
  std::vector<const void*> srcs(count);
  for (uint32_t i = 0; i < count; ++i) srcs[i] = pool.bytes() + uint64_t{(i * 37) % count} * in_bytes;
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const StagerEntries entries : {StagerEntries::mapped, StagerEntries::device}) {
    Stager st(0, 2, count, in_bytes, StagerOptions{StagerEngine::sm, entries, 2});
    CUDA_OK(cudaMemcpyAsync(dev, big.p, 64u << 20, cudaMemcpyHostToDevice, stream));
    CUDA_OK(st.stage(1, srcs.data(), count, stream));
    CUDA_OK(cudaMemcpyAsync(out.p, st.slot_base(1), uint64_t{in_bytes} * count, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    for (uint32_t i = 0; i < count; ++i)
      ASSERT_EQ(0, std::memcmp(out.bytes() + uint64_t{i} * in_bytes, srcs[i], in_bytes)) << "packet " << i;
  }
  CUDA_OK(cudaStreamDestroy(stream));
  CUDA_OK(cudaFree(dev));
}

}  // namespace
}  // namespace netdaq::gpu
