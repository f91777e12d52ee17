// The receiver side of SMPTE ST 2110-21 (issue 33): a video stream's packet arrivals, on the
// TAI clock, checked frame by frame against the standard's receiver models, as a compliance
// analyser does. Each RTP frame (field when interlaced) is placed in its period from the SMPTE
// epoch (1970-01-01 TAI): epoch = the start of the period holding its first arrival.
//   C_INST  the network compatibility model: a bucket that fills with each arriving packet and
//           drains at 1.1 packets per T_DRAIN (beta 1.1) from the frame's first arrival; a narrow
//           sender keeps it <= CMAX = max(4, N / (43200 x R_ACTIVE x T_FRAME[s])), a wide one
//           <= max(16, N / (21600 x T_FRAME[s])).
//   VRX     the virtual receiver buffer: packet j is read at TPR0 + (j + 1) x T_DRAIN, TPR0 =
//           epoch + TRO; VRX = floor((its read time - its arrival) / T_DRAIN): below 0 the packet
//           came after it was needed (underflow), above VRX_FULL = max(8, N / (27000 x T[s]))
//           (wide: max(720, N / (300 x T[s]))) it overflows the receiver's buffer.
//   FPT     the first packet's arrival after the epoch; RTP offset: the RTP timestamp less the
//           90 kHz media clock at the epoch, in ticks (ST 2110-10: within -1 .. TRO + 1 tick).
//   IPT     the time between a frame's consecutive arrivals.
// Packet j is the j-th arrival of the frame: with losses the models see fewer packets.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sensors/video_sender.h"

namespace netdaq::sensors {

struct St2110Arrival {
  uint32_t rtp_timestamp = 0;
  uint64_t tai_ns = 0;  // arrival on the TAI clock (a kernel receive timestamp + CLOCK_TAI's offset)
};

enum class St2110Compliance : uint8_t { narrow, wide, failed };
const char* to_string(St2110Compliance c) noexcept;

struct St2110Limits {
  double cmax_narrow = 0, cmax_wide = 0, vrx_full_narrow = 0, vrx_full_wide = 0;
  int64_t rtp_offset_max = 0;  // ticks: ceil(TRO x 90 kHz) + 1
};
St2110Limits st2110_limits(const St2110Timing& t) noexcept;

struct St2110FrameCheck {
  uint64_t epoch_frame = 0;     // the period (RTP frame) since the SMPTE epoch
  uint32_t packets = 0;
  double fpt_ns = 0;            // first arrival after the epoch
  int64_t rtp_offset = 0;       // ticks
  int64_t cinst_max = 0;
  int64_t vrx_min = 0, vrx_max = 0;
  double ipt_min_ns = 0, ipt_mean_ns = 0, ipt_max_ns = 0;
  St2110Compliance verdict = St2110Compliance::failed;
  std::string cause;            // why not narrow ("" when narrow)
};

// One entry per run of arrivals with one RTP timestamp (arrivals in order of arrival).
std::vector<St2110FrameCheck> check_st2110_arrivals(std::span<const St2110Arrival> arrivals, const St2110Timing& t);

struct St2110Summary {
  size_t frames = 0, narrow = 0, wide = 0, failed = 0;
  int64_t cinst_max = 0, vrx_min = 0, vrx_max = 0;
  double fpt_median_ns = 0, fpt_max_ns = 0;
  std::string first_cause;      // the first frame's cause that was not narrow
};
St2110Summary summarize(std::span<const St2110FrameCheck> frames);

// The packet spacing a receiver sees, frame by frame (frames by RTP timestamp; the first and the
// last arrivals' frames are left out, they may be cut): medians of each frame's span (first to
// last packet), of the gaps between packets within frames, of the frame periods (first to
// first) and of the gaps between frames (last to first), and the in-frame gaps in quarters of
// the expected gap (bucket 11: 2.75 and above).
struct St2110Gaps {
  size_t frames = 0;
  double median_span_ns = 0, median_gap_ns = 0, median_period_ns = 0, median_vgap_ns = 0;
  double within_half = 0;   // in-frame gaps within the expected +- 50%
  double under_half = 0;    // in-frame gaps under half the expected (packets sent together)
  uint64_t histogram[12] = {};
};
St2110Gaps st2110_gaps(std::span<const St2110Arrival> arrivals, double expected_gap_ns);

}  // namespace netdaq::sensors
