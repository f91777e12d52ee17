// RTP packets received with their kernel receive times (SO_TIMESTAMPNS): the arrivals that the
// ST 2110 pacing tests (st2110_send_test) and bench/st2110's pacing section (p) measure.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sensors/st2110_receiver_model.h"

namespace ndqtest {

// Sets SO_TIMESTAMPNS and a 100 ms SO_RCVTIMEO on the UDP socket fd, then receives until
// `count` packets, `deadline`, or (done given) 300 ms without a packet once *done is true. Each
// arrival: the RTP timestamp and the receive time on CLOCK_REALTIME (to_tai puts them on TAI).
std::vector<netdaq::sensors::St2110Arrival> receive_rtp_arrivals(int fd, size_t count,
                                                                std::chrono::steady_clock::time_point deadline,
                                                                const std::atomic<bool>* done = nullptr);

// CLOCK_TAI - CLOCK_REALTIME, ns.
int64_t tai_minus_realtime_ns();
// Moves receive times from CLOCK_REALTIME to CLOCK_TAI.
void to_tai(std::vector<netdaq::sensors::St2110Arrival>& a);

}  // namespace ndqtest
