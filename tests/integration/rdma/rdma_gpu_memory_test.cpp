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

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

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

// A lab device (device_env: NDQ_RDMA_DEV0 or NDQ_RDMA_DEV1), opened.
struct LabDevice {
  ibv_context* ctx = nullptr;
  explicit LabDevice(const char* device_env = "NDQ_RDMA_DEV0") {
    const char* want = std::getenv(device_env);
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

// An RC queue pair with its CQ, on port 1 of the device of `pd`, set up by hand (plain verbs,
// no netdaq code): INIT here, RTR and RTS in connect().
struct RcEnd {
  detail::rdma::CompletionQueue cq;
  detail::rdma::QueuePair qp;
  ibv_gid gid{};
  int gid_index = -1;

  RcEnd(ibv_pd* pd, const char* gid_index_env) {
    const char* gi = std::getenv(gid_index_env);
    if (!gi) return;
    gid_index = std::atoi(gi);
    if (ibv_query_gid(pd->context, 1, gid_index, &gid) != 0) return;
    cq.reset(ibv_create_cq(pd->context, 16, nullptr, nullptr, 0));
    if (!cq) return;
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq.get();
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = init.cap.max_recv_wr = 4;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    qp.reset(ibv_create_qp(pd, &init));
    if (!qp) return;
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    if (ibv_modify_qp(qp.get(), &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0) qp.reset();
  }

  // To RTR and RTS towards `peer`; "" or what failed.
  std::string connect(const RcEnd& peer) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = peer.qp->qp_num;
    a.rq_psn = 0;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = peer.gid;
    a.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_index);
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.port_num = 1;
    if (ibv_modify_qp(qp.get(), &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
      return std::string("to RTR: ") + std::strerror(errno);
    a = {};
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = 0;
    a.max_rd_atomic = 1;
    if (ibv_modify_qp(qp.get(), &a,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                          IBV_QP_MAX_QP_RD_ATOMIC) != 0)
      return std::string("to RTS: ") + std::strerror(errno);
    return "";
  }
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
// host pages): the registration falls back to it, and RDMA works through it: the other lab
// device writes all of the region through that registration (an RC queue pair of plain verbs
// to one in the engine's protection domain; RDMA WRITE to the registration's address and
// rkey), and every byte arrives.
TEST_F(RdmaGpuMemory, FallsBackToThePointerPathWhenDmaBufIsRefused) {
  VgemBuffer buf(node_);
  ASSERT_GE(buf.dmabuf, 0);
  Mapping pages(PROT_READ | PROT_WRITE);
  ASSERT_NE(pages.p, MAP_FAILED);
  std::memset(pages.p, 0xa5, kSize);
  DmaBufRegion region(buf.dmabuf, pages.p);
  detail::rdma::DeviceMemory memory(dev_.ctx);
  ibv_mr* mr = memory.registration(region, "test");
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(mr->addr, pages.p);
  EXPECT_EQ(mr->length, kSize);
  EXPECT_EQ(memory.registration(region, "test"), mr);  // once per region

  // The writer: lab device 1, a buffer of its own with a pattern no page holds yet.
  LabDevice writer("NDQ_RDMA_DEV1");
  ASSERT_NE(writer.ctx, nullptr) << "cannot open NDQ_RDMA_DEV1";
  detail::rdma::ProtectionDomain writer_pd(ibv_alloc_pd(writer.ctx));
  ASSERT_TRUE(writer_pd);
  std::vector<uint8_t> source(kSize);
  for (size_t i = 0; i < kSize; ++i) source[i] = static_cast<uint8_t>((i * 131 + (i >> 12)) ^ 0x5a);
  detail::rdma::MemoryRegistration source_mr(ibv_reg_mr(writer_pd.get(), source.data(), kSize, IBV_ACCESS_LOCAL_WRITE));
  ASSERT_TRUE(source_mr) << std::strerror(errno);
  RcEnd target(memory.pd(), "NDQ_RDMA_GID_INDEX0"), from(writer_pd.get(), "NDQ_RDMA_GID_INDEX1");
  ASSERT_TRUE(target.qp && from.qp) << "cannot make the queue pairs: " << std::strerror(errno);
  ASSERT_EQ(target.connect(from), "");
  ASSERT_EQ(from.connect(target), "");
  const Wire wire;
  ibv_sge sge{reinterpret_cast<uintptr_t>(source.data()), static_cast<uint32_t>(kSize), source_mr->lkey};
  ibv_send_wr w{};
  w.wr_id = 1;
  w.sg_list = &sge;
  w.num_sge = 1;
  w.opcode = IBV_WR_RDMA_WRITE;
  w.send_flags = IBV_SEND_SIGNALED;
  w.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(mr->addr);
  w.wr.rdma.rkey = mr->rkey;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(from.qp.get(), &w, &bad), 0);
  ibv_wc wc{};
  int got = 0;
  for (const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       got == 0 && std::chrono::steady_clock::now() < deadline;)
    if ((got = ibv_poll_cq(from.cq.get(), 1, &wc)) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(got, 1) << "no completion of the RDMA WRITE within 60 s";
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  // Every byte of the region is the writer's (the RC completion: the target acknowledged it all).
  const auto* p = static_cast<const uint8_t*>(pages.p);
  const auto [at, want] = std::mismatch(p, p + kSize, source.begin());
  EXPECT_EQ(at, p + kSize) << "byte " << (at - p) << " of the region is " << int(*at) << ", written " << int(*want);
  EXPECT_TRUE(wire.crossed(0, kSize / 1024));  // 2 MiB in 1024-byte RoCE packets from device 1 to 0
}
