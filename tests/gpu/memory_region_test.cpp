// GPU memory kinds of memory regions on a real GPU: where the memory is, that CPU and GPU
// both see the bytes, dma-buf export for GPUDirect, clear errors, and UDP received by the
// socket engine straight into pinned memory.
#include <arpa/inet.h>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "core/memory_region.h"
#include "gpu_test_util.h"
#include "netdaq/session.h"

namespace netdaq::gpu {
namespace {

using detail::create_region;
using detail::MemoryRegion;

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

MemoryRegionConfig region_cfg(MemoryKind kind, int gpu = 0, uint32_t num_bufs = 256) {
  return {.name = "r", .kind = kind, .buf_size = 2048, .num_bufs = num_bufs, .gpu = gpu};
}

std::vector<std::byte> pattern(size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + seed) & 0xff);
  return v;
}

cudaPointerAttributes attributes(const void* p) {
  cudaPointerAttributes a{};
  EXPECT_EQ(cudaPointerGetAttributes(&a, p), cudaSuccess);
  return a;
}

void expect_unsupported_dmabuf(const MemoryRegion& r) {
  try {
    (void)r.export_dmabuf();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("memory region 'r'"), std::string::npos) << e.what();
  }
}

TEST(GpuMemoryRegion, PinnedIsPageLockedHostMemory) {
  NDQ_REQUIRE_GPU();
  auto r = create_region(region_cfg(MemoryKind::pinned));
  EXPECT_EQ(r->kind(), MemoryKind::pinned);
  EXPECT_EQ(r->gpu(), 0);
  EXPECT_TRUE(r->cpu_accessible());
  EXPECT_GE(r->size(), detail::buffer_stride(2048) * 256);
  EXPECT_EQ(attributes(r->base()).type, cudaMemoryTypeHost);
  const auto want = pattern(r->size(), 1);
  std::memcpy(r->base(), want.data(), want.size());  // CPU writes, the GPU copies it back out
  void* dev = nullptr;
  CUDA_OK(cudaMalloc(&dev, want.size()));
  CUDA_OK(cudaMemcpy(dev, r->base(), want.size(), cudaMemcpyHostToDevice));
  std::vector<std::byte> got(want.size());
  CUDA_OK(cudaMemcpy(got.data(), dev, got.size(), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(dev));
  EXPECT_EQ(got, want);
  EXPECT_STREQ(r->gpudirect_path(), "none");
  expect_unsupported_dmabuf(*r);
}

TEST(GpuMemoryRegion, MappedIsSeenByTheGpuAtTheHostAddress) {
  NDQ_REQUIRE_GPU();
  auto r = create_region(region_cfg(MemoryKind::mapped));
  EXPECT_EQ(r->kind(), MemoryKind::mapped);
  EXPECT_EQ(r->gpu(), 0);
  void* dptr = nullptr;
  CUDA_OK(cudaHostGetDevicePointer(&dptr, r->base(), 0));
  EXPECT_EQ(dptr, r->base());
  const size_t n = r->size();
  void* scratch = nullptr;
  CUDA_OK(cudaMalloc(&scratch, n));
  // CPU writes; the GPU reads through the device pointer (device-to-device copy).
  const auto a = pattern(n, 2);
  std::memcpy(r->base(), a.data(), n);
  CUDA_OK(cudaMemcpy(scratch, dptr, n, cudaMemcpyDeviceToDevice));
  std::vector<std::byte> got(n);
  CUDA_OK(cudaMemcpy(got.data(), scratch, n, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, a);
  // The GPU writes through the device pointer; the CPU reads the host address.
  const auto b = pattern(n, 3);
  CUDA_OK(cudaMemcpy(scratch, b.data(), n, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dptr, scratch, n, cudaMemcpyDeviceToDevice));
  CUDA_OK(cudaDeviceSynchronize());
  EXPECT_EQ(std::memcmp(r->base(), b.data(), n), 0);
  CUDA_OK(cudaFree(scratch));
  expect_unsupported_dmabuf(*r);
}

TEST(GpuMemoryRegion, DeviceIsZeroedGpuMemoryAlignedForDmaBuf) {
  NDQ_REQUIRE_GPU();
  auto r = create_region(region_cfg(MemoryKind::device, 0, 1000));
  EXPECT_EQ(r->kind(), MemoryKind::device);
  EXPECT_EQ(r->gpu(), 0);
  EXPECT_FALSE(r->cpu_accessible());
  const auto at = attributes(r->base());
  EXPECT_EQ(at.type, cudaMemoryTypeDevice);
  EXPECT_EQ(at.device, 0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r->base()) % static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)), 0u);
  EXPECT_EQ(r->size() % (2u << 20), 0u);
  EXPECT_GE(r->size(), detail::buffer_stride(2048) * 1000);
  std::vector<std::byte> got(r->size(), std::byte{1});
  CUDA_OK(cudaMemcpy(got.data(), r->base(), got.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, std::vector<std::byte>(r->size()));
  const auto want = pattern(r->size(), 4);
  CUDA_OK(cudaMemcpy(r->base(), want.data(), want.size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(got.data(), r->base(), got.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, want);
  const DeviceInfo d = devices()[0];
  EXPECT_STREQ(r->gpudirect_path(), d.dmabuf ? "dmabuf" : d.peermem ? "peermem" : "none");
}

TEST(GpuMemoryRegion, DeviceExportsADmaBufWhenTheGpuCan) {
  NDQ_REQUIRE_GPU();
  auto r = create_region(region_cfg(MemoryKind::device));
  if (!devices()[0].dmabuf) {
    std::printf("gpu 0 has no dma-buf support; expecting the unsupported error\n");
    expect_unsupported_dmabuf(*r);
    return;
  }
  const detail::DmaBuf buf = r->export_dmabuf();
  ASSERT_GE(buf.fd, 0);
  EXPECT_EQ(buf.offset, 0u);
  EXPECT_EQ(buf.size, r->size());
  EXPECT_EQ(lseek(buf.fd, 0, SEEK_END), static_cast<off_t>(r->size()));  // dma-buf size
  EXPECT_EQ(close(buf.fd), 0);
  EXPECT_EQ(fcntl(buf.fd, F_GETFD), -1);  // the caller owned it, and it is gone
}

TEST(GpuMemoryRegion, WrongGpuIndexNamesTheRegionAndTheGpus) {
  NDQ_REQUIRE_GPU();
  for (MemoryKind k : {MemoryKind::pinned, MemoryKind::mapped, MemoryKind::device}) {
    try {
      create_region(region_cfg(k, device_count() + 2));
      ADD_FAILURE() << to_string(k) << ": no error";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.code(), Errc::invalid_config) << what;
      EXPECT_NE(what.find("memory region 'r': gpu " + std::to_string(device_count() + 2) + " does not exist"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find(devices()[0].name), std::string::npos) << what;
    }
  }
}

TEST(GpuMemoryRegion, NoGpuIndexMeansGpu0) {
  NDQ_REQUIRE_GPU();
  EXPECT_EQ(create_region(region_cfg(MemoryKind::pinned, -1))->gpu(), 0);
  EXPECT_EQ(create_region(region_cfg(MemoryKind::device, -1))->gpu(), 0);
}

TEST(GpuMemoryRegion, TooBigNamesRegionBytesAndCudaError) {
  NDQ_REQUIRE_GPU();
  MemoryRegionConfig cfg{.name = "r", .kind = MemoryKind::device, .buf_size = 1u << 20, .num_bufs = 1u << 20, .gpu = 0};
  try {
    create_region(cfg);  // 1 TiB
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), Errc::resource) << what;
    const std::string want = "memory region 'r': cudaMalloc of 1099511627776 bytes on gpu 0 failed: ";
    EXPECT_NE(what.find(want + "cudaErrorMemoryAllocation"), std::string::npos) << what;
  }
  // The failed allocation leaves no sticky error behind.
  EXPECT_EQ(create_region(region_cfg(MemoryKind::device))->gpu(), 0);
}

uint16_t free_udp_port() {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(fd, reinterpret_cast<sockaddr*>(&a), len);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

TEST(GpuSession, UdpLandsInPinnedMemory) {
  NDQ_REQUIRE_GPU();
  const uint16_t port = free_udp_port();
  Config c;
  c.log.level = "warn";
  c.memory_regions.push_back(
      {.name = "pinned", .kind = MemoryKind::pinned, .buf_size = 2048, .num_bufs = 4096, .gpu = 0});
  InterfaceConfig i;
  i.name = "if0";
  i.address = "udp://127.0.0.1:" + std::to_string(port);
  i.rx.queues.push_back({.id = 0, .memory_regions = {"pinned"}});
  c.interfaces.push_back(i);
  Session s(c);
  auto& q = s.rx_queue("if0");

  const int tx = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  constexpr unsigned kPackets = 100;
  for (unsigned n = 0; n < kPackets; ++n) {
    const auto p = pattern(1000, n);
    ASSERT_EQ(sendto(tx, p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to), 1000);
  }
  close(tx);

  unsigned got = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got < kPackets && std::chrono::steady_clock::now() < deadline) {
    RxBurst b = q.poll();
    if (b.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    for (const Packet& p : b) {
      const auto data = p.data();
      ASSERT_EQ(data.size(), 1000u);
      EXPECT_EQ(std::memcmp(data.data(), pattern(1000, got).data(), 1000), 0) << "packet " << got;
      const auto at = attributes(data.data());
      EXPECT_EQ(at.type, cudaMemoryTypeHost) << "packet " << got << " is not in pinned memory";
      ++got;
    }
  }
  EXPECT_EQ(got, kPackets) << "drops: " << q.stats().total_drops();
}

}  // namespace
}  // namespace netdaq::gpu
