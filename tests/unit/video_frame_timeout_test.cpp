// rx.reorder.frame_timeout_us in mode rtp_video (issue 33): left out (0, auto) it is two frame
// periods, since an ST 2110-21 sender spreads a frame over its whole period; one shorter than a
// period is refused, naming the period. Other modes keep 10 ms.
#include <gtest/gtest.h>

#include <string>

#include "config_test_util.h"
#include "gpu/host/span_tracker.h"
#include "netdaq/config.h"
#include "protocols/decoder.h"

namespace netdaq {
namespace {

// TIMEOUT: a frame_timeout_us line, or nothing.
std::string timeout_yaml(const std::string& timeout) {
  return test::reorder_yaml(
      "          mode: rtp_video\n          frames: host\n"
      "          video: {width: 1920, height: 1080, exactframerate: 60000/1001}\n" + timeout);
}

TEST(st2110_frame_timeout, AutoIsTwoFramePeriodsAndAWrittenOneIsKept) {
  test::ensure_socket_engine();
  const Config a = Config::parse(timeout_yaml(""));
  const ReorderConfig& r = a.interfaces[0].rx.reorder[0];
  EXPECT_EQ(r.frame_timeout_us, 0u);
  EXPECT_EQ(protocols::frame_timeout_ns_of(r), 2 * 16'683'334u);  // 1001/60000 s, rounded up
  EXPECT_EQ(gpu::span_tracker_config(r).timeout_ns, protocols::frame_timeout_ns_of(r));
  const Config b = Config::parse(timeout_yaml("          frame_timeout_us: 50000"));
  EXPECT_EQ(protocols::frame_timeout_ns_of(b.interfaces[0].rx.reorder[0]), 50'000'000u);
  // Other modes: 10 ms when left out.
  ReorderConfig s;
  s.mode = ReorderMode::spead;
  EXPECT_EQ(protocols::frame_timeout_ns_of(s), uint64_t{kFrameTimeoutUs} * 1000);
}

TEST(st2110_frame_timeout, ShorterThanAFramePeriodIsRefused) {
  test::ensure_socket_engine();
  const auto issues = test::parse_issues(timeout_yaml("          frame_timeout_us: 9000"));
  test::expect_issue(issues, "test.yaml", 14, 11, "interfaces[0].rx.reorder[0].frame_timeout_us", "9000",
                     "must be at least one frame period (16684 us at 60000/1001)");
}

}  // namespace
}  // namespace netdaq
