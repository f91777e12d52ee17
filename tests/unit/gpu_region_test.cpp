// GPU memory kinds without a GPU (CI): clear errors that name the region and say why, the
// `gpu` key's validation, and the NIC-registration hooks of host regions.
#include <gtest/gtest.h>

#include <string>

#include "config_test_util.h"
#include "core/memory_region.h"
#include "netdaq/gpu.h"
#include "netdaq/session.h"

namespace netdaq {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// One socket interface receiving into region "dma" of `kind`.
Config config_with(MemoryKind kind, int gpu) {
  Config c;
  c.log.level = "warn";
  c.memory_regions.push_back({.name = "dma", .kind = kind, .buf_size = 2048, .num_bufs = 4096, .gpu = gpu});
  InterfaceConfig i;
  i.name = "if0";
  i.address = "udp://127.0.0.1:0";
  i.rx.queues.push_back({.id = 0, .memory_regions = {"dma"}});
  c.interfaces.push_back(i);
  return c;
}

// What a pinned region must say here: no GPU and why, or no CUDA in the build.
void expect_no_gpu_error(const Error& e) {
  const std::string what = e.what();
  EXPECT_EQ(e.code(), Errc::unsupported) << what;
  EXPECT_TRUE(contains(what, "memory region 'dma'")) << what;
  if (gpu::built_in()) {
    EXPECT_TRUE(contains(what, "needs a GPU, and none is usable here")) << what;
    EXPECT_TRUE(contains(what, gpu::unavailable_reason()) || contains(what, "cudaError")) << what;
  } else {
    EXPECT_TRUE(contains(what, "this build of netdaq has none")) << what;
  }
}

TEST(GpuRegionUnavailable, PinnedRegionNamesTheRegionAndWhyThereIsNoGpu) {
  if (gpu::device_count() > 0) GTEST_SKIP() << "a GPU is usable here; this test covers machines without one";
  for (MemoryKind k : {MemoryKind::pinned, MemoryKind::mapped, MemoryKind::device}) {
    try {
      detail::create_region({.name = "dma", .kind = k, .buf_size = 2048, .num_bufs = 64, .gpu = 0});
      ADD_FAILURE() << to_string(k) << ": no error";
    } catch (const Error& e) {
      expect_no_gpu_error(e);
    }
  }
}

TEST(GpuRegionUnavailable, SessionWithPinnedRegionSaysThereIsNoGpu) {
  if (gpu::device_count() > 0) GTEST_SKIP() << "a GPU is usable here; this test covers machines without one";
  try {
    Session s(config_with(MemoryKind::pinned, 0));
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    ADD_FAILURE() << "the config is valid: " << e.what();
  } catch (const Error& e) {
    expect_no_gpu_error(e);
  }
}

TEST(GpuRegionConfig, GpuIndexIsForGpuKindsOnly) {
  for (MemoryKind k : {MemoryKind::host, MemoryKind::huge}) {
    const auto issues = config_with(k, 1).validate();
    ASSERT_EQ(issues.size(), 1u) << to_string(k);
    EXPECT_EQ(issues[0].key, "memory_regions[0].gpu");
    EXPECT_EQ(issues[0].value, "1");
    EXPECT_TRUE(contains(issues[0].message, "applies only to kinds pinned, mapped and device")) << issues[0].message;
    EXPECT_TRUE(contains(issues[0].message, std::string("kind ") + to_string(k))) << issues[0].message;
    EXPECT_TRUE(config_with(k, -1).validate().empty()) << to_string(k);
  }
  for (MemoryKind k : {MemoryKind::pinned, MemoryKind::mapped})
    EXPECT_TRUE(config_with(k, 3).validate().empty()) << to_string(k);
}

TEST(GpuRegionConfig, GpuOnHostKindIsLocatedInYaml) {
  const auto issues = test::parse_issues(
      "memory_regions:\n  - {name: dma, kind: huge, gpu: 0}\n"
      "interfaces:\n  - {name: if0, address: 'udp://127.0.0.1:0', rx: {queues: [{id: 0, memory_regions: [dma]}]}}\n");
  const ConfigIssue* i = test::find_issue(issues, "memory_regions[0].gpu");
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->where.line, 2);
  EXPECT_TRUE(contains(i->message, "kind huge")) << i->message;
}

TEST(GpuRegionHooks, HostRegionsHaveNoGpuAndNoDmaBuf) {
  auto r = detail::create_region({.name = "plain", .kind = MemoryKind::host, .buf_size = 2048, .num_bufs = 4});
  EXPECT_EQ(r->gpu(), -1);
  EXPECT_STREQ(r->gpudirect_path(), "none");
  try {
    (void)r->export_dmabuf();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    EXPECT_TRUE(contains(e.what(), "memory region 'plain': kind host cannot be exported as a dma-buf")) << e.what();
  }
}

}  // namespace
}  // namespace netdaq
