// The ST 2110-21 receiver models (src/sensors/st2110_receiver_model.h) on arrivals made here
// with known timing: an ideal narrow sender passes narrow; bursts above CMAX make it wide;
// an unpaced frame, late packets and timestamps off the TAI clock fail, each naming why.
#include <gtest/gtest.h>

#include <vector>

#include "sensors/st2110_receiver_model.h"
#include "sensors/video_sender.h"

namespace netdaq::sensors {
namespace {

St2110Timing timing_1080p60() {
  VideoOptions v;
  v.width = 1920;
  v.height = 1080;
  v.rate_num = 60;
  v.rate_den = 1;
  return st2110_narrow_timing(v, 4320);
}

constexpr uint64_t kEpochFrame = 107'748'461'095ull;  // a 2026 period at 60 frames/s

// Frames k0.. of 4320 packets: packet j of frame k arrives at its period + TRO + j x T_DRAIN +
// at(j) ns, with the RTP timestamp of the TAI media clock at the period (plus ts_error).
std::vector<St2110Arrival> arrivals(const St2110Timing& t, int frames, double (*at)(uint32_t, double),
                                    int32_t ts_error = 0) {
  std::vector<St2110Arrival> a;
  for (int f = 0; f < frames; ++f) {
    const uint64_t k = kEpochFrame + f;
    const uint32_t ts = static_cast<uint32_t>(k * 1500) + static_cast<uint32_t>(ts_error);
    for (uint32_t j = 0; j < t.packets; ++j)
      a.push_back({ts, t.frame_start_ns(k) + static_cast<uint64_t>(t.tro_ns + at(j, t.t_drain_ns))});
  }
  return a;
}

TEST(st2110ReceiverModel, LimitsOf1080p60) {
  const St2110Limits l = st2110_limits(timing_1080p60());
  EXPECT_DOUBLE_EQ(l.cmax_narrow, 6.25);    // 4320 / (43200 x 1080/1125 x 1/60)
  EXPECT_DOUBLE_EQ(l.cmax_wide, 16);        // max(16, 4320 / 360)
  EXPECT_DOUBLE_EQ(l.vrx_full_narrow, 9.6); // 4320 / 450
  EXPECT_DOUBLE_EQ(l.vrx_full_wide, 864);   // 4320 / 5
  EXPECT_EQ(l.rtp_offset_max, 58 + 1);      // TRO 637.04 us x 90 kHz = 57.3 ticks, rounded up
}

TEST(st2110ReceiverModel, IdealNarrowSenderIsNarrow) {
  const St2110Timing t = timing_1080p60();
  const auto a = arrivals(t, 3, [](uint32_t j, double d) { return j * d + 2000.0; });  // 2 us on the wire
  const auto frames = check_st2110_arrivals(a, t);
  ASSERT_EQ(frames.size(), 3u);
  for (const auto& f : frames) {
    EXPECT_EQ(f.verdict, St2110Compliance::narrow) << f.cause;
    EXPECT_EQ(f.packets, 4320u);
    EXPECT_EQ(f.rtp_offset, 0);
    EXPECT_EQ(f.cinst_max, 0);
    EXPECT_EQ(f.vrx_min, 0);
    EXPECT_NEAR(f.fpt_ns, t.tro_ns + 2000, 1);
    EXPECT_NEAR(f.ipt_mean_ns, t.t_drain_ns, 1);
  }
  EXPECT_EQ(frames[1].epoch_frame, kEpochFrame + 1);
  const St2110Summary s = summarize(frames);
  EXPECT_EQ(s.narrow, 3u);
  EXPECT_TRUE(s.first_cause.empty());
}

TEST(st2110ReceiverModel, BurstsAboveCmaxAreWideAndAnUnpacedFrameFails) {
  const St2110Timing t = timing_1080p60();
  // groups of 10 packets at once (a sender handing the NIC 10 at a time), on schedule overall
  const auto bursts = check_st2110_arrivals(arrivals(t, 1, [](uint32_t j, double d) { return (j / 10) * 10 * d; }), t);
  ASSERT_EQ(bursts.size(), 1u);
  EXPECT_EQ(bursts[0].verdict, St2110Compliance::wide) << bursts[0].cause;
  EXPECT_GT(bursts[0].cinst_max, 6);
  EXPECT_LE(bursts[0].cinst_max, 16);
  EXPECT_NE(bursts[0].cause.find("cinst"), std::string::npos);
  // the whole frame in 100 us: the bucket overflows the wide limit
  const auto unpaced = check_st2110_arrivals(arrivals(t, 1, [](uint32_t j, double) { return j * 23.0; }), t);
  EXPECT_EQ(unpaced[0].verdict, St2110Compliance::failed);
  EXPECT_GT(unpaced[0].cinst_max, 1000);
}

TEST(st2110ReceiverModel, LatePacketsUnderflowAndTimestampsOffTheClockFail) {
  const St2110Timing t = timing_1080p60();
  // from packet 2000 on, 3 x T_DRAIN late: read before they came
  const auto late = check_st2110_arrivals(
      arrivals(t, 1, [](uint32_t j, double d) { return j * d + (j >= 2000 ? 3 * d : 0.0); }), t);
  EXPECT_EQ(late[0].verdict, St2110Compliance::failed);
  EXPECT_EQ(late[0].vrx_min, -3);
  EXPECT_NE(late[0].cause.find("underflow"), std::string::npos) << late[0].cause;
  // timestamps 200 ticks after the period's media clock (not the sampling instant)
  const auto off = check_st2110_arrivals(arrivals(t, 1, [](uint32_t j, double d) { return j * d; }, 200), t);
  EXPECT_EQ(off[0].verdict, St2110Compliance::failed);
  EXPECT_EQ(off[0].rtp_offset, 200);
  EXPECT_NE(off[0].cause.find("rtp offset"), std::string::npos) << off[0].cause;
}

}  // namespace
}  // namespace netdaq::sensors
