#include "sensors/st2110_receiver_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace netdaq::sensors {

namespace {

__extension__ typedef unsigned __int128 U128;
constexpr double kBeta = 1.1;          // ST 2110-21's drain scaling of the compatibility model
constexpr uint64_t kMediaClockHz = 90'000;

// The 90 kHz media clock at period k's start, modulo 2^32.
uint32_t ticks_at(const St2110Timing& t, uint64_t k) noexcept {
  return static_cast<uint32_t>(U128(k) * kMediaClockHz * t.period_num / (U128(t.period_den) * 1'000'000'000u));
}

St2110FrameCheck check_frame(std::span<const St2110Arrival> a, const St2110Timing& t, const St2110Limits& lim) {
  St2110FrameCheck f;
  f.packets = static_cast<uint32_t>(a.size());
  const uint64_t t0 = a.front().tai_ns;
  f.epoch_frame = static_cast<uint64_t>(U128(t0) * t.period_den / t.period_num);
  const uint64_t epoch = t.frame_start_ns(f.epoch_frame);
  f.fpt_ns = double(t0 - epoch);
  f.rtp_offset = static_cast<int32_t>(a.front().rtp_timestamp - ticks_at(t, f.epoch_frame));
  const double tpr0 = double(epoch) + t.tro_ns, drain = t.t_drain_ns;
  f.cinst_max = std::numeric_limits<int64_t>::min();
  f.vrx_min = std::numeric_limits<int64_t>::max();
  f.vrx_max = std::numeric_limits<int64_t>::min();
  f.ipt_min_ns = a.size() > 1 ? std::numeric_limits<double>::max() : 0;
  double ipt_sum = 0;
  for (size_t j = 0; j < a.size(); ++j) {
    const double at = double(a[j].tai_ns);
    const int64_t drained = static_cast<int64_t>(std::floor((at - double(t0)) / drain * kBeta));
    f.cinst_max = std::max(f.cinst_max, std::max<int64_t>(0, int64_t(j) - drained));
    const int64_t vrx = static_cast<int64_t>(std::floor((tpr0 + double(j + 1) * drain - at) / drain));
    f.vrx_min = std::min(f.vrx_min, vrx);
    f.vrx_max = std::max(f.vrx_max, vrx);
    if (j > 0) {
      const double ipt = at - double(a[j - 1].tai_ns);
      f.ipt_min_ns = std::min(f.ipt_min_ns, ipt);
      f.ipt_max_ns = std::max(f.ipt_max_ns, ipt);
      ipt_sum += ipt;
    }
  }
  f.ipt_mean_ns = a.size() > 1 ? ipt_sum / double(a.size() - 1) : 0;
  // The verdict: failed beyond the wide limits, wide beyond the narrow ones.
  const auto why = [&](St2110Compliance v, std::string c) {
    if (f.cause.empty() || v == St2110Compliance::failed) f.verdict = v, f.cause = std::move(c);
  };
  f.verdict = St2110Compliance::narrow;
  if (f.rtp_offset < -1 || f.rtp_offset > lim.rtp_offset_max)
    why(St2110Compliance::failed, "rtp offset " + std::to_string(f.rtp_offset) + " ticks outside -1.." +
                                      std::to_string(lim.rtp_offset_max));
  if (f.vrx_min < 0)
    why(St2110Compliance::failed, "vrx underflow: a packet came " + std::to_string(-f.vrx_min) +
                                      " x T_DRAIN after it was read");
  if (double(f.vrx_max) > lim.vrx_full_wide)
    why(St2110Compliance::failed, "vrx " + std::to_string(f.vrx_max) + " above the wide VRX_FULL");
  if (double(f.cinst_max) > lim.cmax_wide)
    why(St2110Compliance::failed, "cinst " + std::to_string(f.cinst_max) + " above the wide CMAX");
  if (f.verdict != St2110Compliance::failed) {
    if (double(f.cinst_max) > lim.cmax_narrow)
      why(St2110Compliance::wide, "cinst " + std::to_string(f.cinst_max) + " above the narrow CMAX");
    else if (double(f.vrx_max) > lim.vrx_full_narrow)
      why(St2110Compliance::wide, "vrx " + std::to_string(f.vrx_max) + " above the narrow VRX_FULL");
  }
  return f;
}

}  // namespace

const char* to_string(St2110Compliance c) noexcept {
  switch (c) {
    case St2110Compliance::narrow: return "narrow";
    case St2110Compliance::wide: return "wide";
    case St2110Compliance::failed: return "failed";
  }
  return "?";
}

St2110Limits st2110_limits(const St2110Timing& t) noexcept {
  St2110Limits l;
  const double s = t.t_frame_ns / 1e9, n = t.packets;
  if (s <= 0) return l;
  l.cmax_narrow = t.cmax();
  l.cmax_wide = std::max(16.0, n / (21600.0 * s));
  l.vrx_full_narrow = std::max(8.0, n / (27000.0 * s));
  l.vrx_full_wide = std::max(720.0, n / (300.0 * s));
  l.rtp_offset_max = static_cast<int64_t>(std::ceil(t.tro_ns * kMediaClockHz / 1e9)) + 1;
  return l;
}

std::vector<St2110FrameCheck> check_st2110_arrivals(std::span<const St2110Arrival> arrivals, const St2110Timing& t) {
  std::vector<St2110FrameCheck> out;
  if (t.period_num == 0 || t.t_drain_ns <= 0) return out;
  const St2110Limits lim = st2110_limits(t);
  size_t begin = 0;
  for (size_t i = 1; i <= arrivals.size(); ++i)
    if (i == arrivals.size() || arrivals[i].rtp_timestamp != arrivals[begin].rtp_timestamp) {
      out.push_back(check_frame(arrivals.subspan(begin, i - begin), t, lim));
      begin = i;
    }
  return out;
}

namespace {
double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}
}  // namespace

St2110Gaps st2110_gaps(std::span<const St2110Arrival> a, double expected_gap_ns) {
  St2110Gaps g;
  std::vector<double> spans, gaps, periods, vgaps;
  size_t begin = 0, near = 0;
  uint64_t prev_first = 0, prev_last = 0;
  bool have_prev = false;
  for (size_t i = 1; i <= a.size(); ++i) {
    if (i < a.size() && a[i].rtp_timestamp == a[begin].rtp_timestamp) continue;
    const uint64_t first = a[begin].tai_ns, last = a[i - 1].tai_ns;
    if (begin > 0 && i < a.size()) {  // a whole frame between two others
      spans.push_back(double(last - first));
      for (size_t k = begin + 1; k < i; ++k) {
        const double gap = double(a[k].tai_ns - a[k - 1].tai_ns);
        gaps.push_back(gap);
        near += std::fabs(gap - expected_gap_ns) <= 0.5 * expected_gap_ns;
        g.histogram[std::min<size_t>(11, static_cast<size_t>(gap / (expected_gap_ns / 4)))]++;
      }
      if (have_prev) {
        periods.push_back(double(first - prev_first));
        vgaps.push_back(double(first - prev_last));
      }
      have_prev = true;
      ++g.frames;
    }
    prev_first = first;
    prev_last = last;
    begin = i;
  }
  g.within_half = gaps.empty() ? 0 : double(near) / double(gaps.size());
  g.under_half = gaps.empty() ? 0 : double(g.histogram[0] + g.histogram[1]) / double(gaps.size());
  g.median_span_ns = median_of(spans);
  g.median_gap_ns = median_of(std::move(gaps));
  g.median_period_ns = median_of(periods);
  g.median_vgap_ns = median_of(vgaps);
  return g;
}

St2110Summary summarize(std::span<const St2110FrameCheck> frames) {
  St2110Summary s;
  std::vector<double> fpt;
  for (const auto& f : frames) {
    ++s.frames;
    (f.verdict == St2110Compliance::narrow ? s.narrow : f.verdict == St2110Compliance::wide ? s.wide : s.failed)++;
    if (s.first_cause.empty() && !f.cause.empty()) s.first_cause = f.cause;
    s.cinst_max = s.frames == 1 ? f.cinst_max : std::max(s.cinst_max, f.cinst_max);
    s.vrx_min = s.frames == 1 ? f.vrx_min : std::min(s.vrx_min, f.vrx_min);
    s.vrx_max = s.frames == 1 ? f.vrx_max : std::max(s.vrx_max, f.vrx_max);
    s.fpt_max_ns = std::max(s.fpt_max_ns, f.fpt_ns);
    fpt.push_back(f.fpt_ns);
  }
  s.fpt_median_ns = median_of(std::move(fpt));
  return s;
}

}  // namespace netdaq::sensors
