// GPU memory registration (GPUDirect RDMA) for real in the guest's Soft-RoCE lab, with a real
// dma-buf: no GPU there, so the dma-buf comes from vgem (the kernel's virtual GEM driver, which
// exports its buffers as dma-bufs the way a GPU driver does). rxe cannot map dma-bufs: the
// engine must say so, try nvidia-peermem's path next, and name both when both fail. The
// success of the dma-buf path itself needs a NIC that maps dma-bufs and a GPU (docs/rdma-engine.md);
// the GPU side (the device region's export) runs in tests/gpu.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <libdrm/drm.h>
#include <libdrm/drm_mode.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/memory_region.h"
#include "engines/rdma/device_memory.h"
#include "netdaq/status.h"
#include "rdma_lab.h"
#include "test_util.h"

using namespace netdaq;
using namespace ndqtest;

namespace {

constexpr size_t kSize = 2u << 20;

// The DRM node of the vgem driver ("" when vgem is not loaded).
std::string vgem_node() {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/class/drm", ec)) {
    const std::string name = e.path().filename();
    if (name.rfind("card", 0) != 0 || name.find('-') != std::string::npos) continue;
    // vgem's device is the platform device "vgem" (it has no driver link)
    if (fs::read_symlink(e.path() / "device", ec).filename() == "vgem") return "/dev/dri/" + name;
  }
  return "";
}

// A vgem buffer object exported as a dma-buf.
struct VgemBuffer {
  int card = -1, dmabuf = -1;
  explicit VgemBuffer(const std::string& node) {
    card = ::open(node.c_str(), O_RDWR | O_CLOEXEC);
    if (card < 0) return;
    drm_mode_create_dumb create{};
    create.width = 1024;
    create.height = kSize / 4096;
    create.bpp = 32;  // 4 KiB rows: kSize bytes
    if (ioctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &create) != 0) return;
    drm_prime_handle prime{};
    prime.handle = create.handle;
    prime.flags = DRM_CLOEXEC | DRM_RDWR;
    if (ioctl(card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime) == 0) dmabuf = prime.fd;
  }
  ~VgemBuffer() {
    if (dmabuf >= 0) ::close(dmabuf);
    if (card >= 0) ::close(card);
  }
};

// A device-kind region as a GPU's looks to the engine: an address range the CPU cannot touch
// (a PROT_NONE reservation, like a device pointer) and a dma-buf behind it.
class DmaBufRegion final : public detail::MemoryRegion {
 public:
  DmaBufRegion(int dmabuf, void* base) : MemoryRegion("gpu", MemoryKind::device, static_cast<std::byte*>(base), kSize), fd_(dmabuf) {}
  detail::DmaBuf export_dmabuf() const override { return {::dup(fd_), 0, size()}; }
  const char* gpudirect_path() const noexcept override { return "dmabuf"; }

 private:
  int fd_;
};

// Lab device 0, opened.
struct LabDevice {
  ibv_context* ctx = nullptr;
  LabDevice() {
    const char* want = std::getenv("NDQ_RDMA_DEV0");
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    for (int i = 0; list && i < n && !ctx; ++i)
      if (want && std::string(ibv_get_device_name(list[i])) == want) ctx = ibv_open_device(list[i]);
    if (list) ibv_free_device_list(list);
  }
  ~LabDevice() {
    if (ctx) ibv_close_device(ctx);
  }
};

struct Mapping {
  void* p;
  explicit Mapping(int prot) : p(mmap(nullptr, kSize, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) {}
  ~Mapping() { munmap(p, kSize); }
};

}  // namespace

class RdmaGpuMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    NDQ_REQUIRE_LAB();
    node_ = vgem_node();
    NDQ_REQUIRE(!node_.empty(), "no vgem device (/sys/class/drm/card*/device -> vgem): the guest loads vgem");
    ASSERT_NE(dev_.ctx, nullptr) << "cannot open NDQ_RDMA_DEV0";
  }
  std::string node_;
  LabDevice dev_;
};

// rxe has no dma-buf support and the range is no host memory: both paths refused, each named.
TEST_F(RdmaGpuMemory, BothPathsRefusedAreNamedWithWhatToDo) {
  VgemBuffer buf(node_);
  ASSERT_GE(buf.dmabuf, 0) << "vgem gave no dma-buf";
  Mapping device_pointer(PROT_NONE);
  ASSERT_NE(device_pointer.p, MAP_FAILED);
  DmaBufRegion region(buf.dmabuf, device_pointer.p);
  detail::rdma::DeviceMemory memory(dev_.ctx);
  try {
    (void)memory.registration(region, "rdma engine: rx queue 'rx/0'");
    FAIL() << "rxe registered a dma-buf or a PROT_NONE range";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.code(), Errc::unsupported) << m;
    EXPECT_NE(m.find("rdma engine: rx queue 'rx/0': registering memory region 'gpu' (2 MiB) with "), std::string::npos) << m;
    EXPECT_NE(m.find("1. dma-buf: ibv_reg_dmabuf_mr: "), std::string::npos) << m;
    EXPECT_NE(m.find("rxe never can"), std::string::npos) << m;  // EOPNOTSUPP, explained
    EXPECT_NE(m.find("2. nvidia-peermem: ibv_reg_mr on the device pointer: "), std::string::npos) << m;
    EXPECT_NE(m.find("open GPU kernel modules >= 515, kernel >= 5.12"), std::string::npos) << m;
    EXPECT_NE(m.find("kind: pinned"), std::string::npos) << m;
    std::printf("the refusal: %s\n", m.c_str());
  }
}

// The dma-buf path alone, with the real dma-buf: refused with EOPNOTSUPP, the owner empty.
TEST_F(RdmaGpuMemory, DmaBufPathRefusedByRxeWithTheReason) {
  VgemBuffer buf(node_);
  ASSERT_GE(buf.dmabuf, 0);
  detail::rdma::ProtectionDomain pd(ibv_alloc_pd(dev_.ctx));
  ASSERT_TRUE(pd);
  std::string why;
  Mapping range(PROT_NONE);
  auto mr = detail::rdma::register_dmabuf(pd.get(), {buf.dmabuf, 0, kSize}, range.p, why);
  EXPECT_FALSE(mr);
  EXPECT_NE(why.find("ibv_reg_dmabuf_mr: "), std::string::npos) << why;
  EXPECT_NE(why.find("Operation not supported (errno 95)"), std::string::npos) << why;  // EOPNOTSUPP
}

// dma-buf refused, the pointer registrable (what nvidia-peermem makes of a device pointer; here
// host pages): the registration falls back to it, and RDMA works through it.
TEST_F(RdmaGpuMemory, FallsBackToThePointerPathWhenDmaBufIsRefused) {
  VgemBuffer buf(node_);
  ASSERT_GE(buf.dmabuf, 0);
  Mapping pages(PROT_READ | PROT_WRITE);
  ASSERT_NE(pages.p, MAP_FAILED);
  DmaBufRegion region(buf.dmabuf, pages.p);
  detail::rdma::DeviceMemory memory(dev_.ctx);
  ibv_mr* mr = memory.registration(region, "test");
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(mr->addr, pages.p);
  EXPECT_EQ(mr->length, kSize);
  EXPECT_EQ(memory.registration(region, "test"), mr);  // once per region
}
