// bench/st2110's pacing section (issue 33 item 2): `netdaq video-send --pacing gapped --epoch tai`
// sends a format's frames across the veth pair to a socket that takes each packet's kernel
// receive time (SO_TIMESTAMPNS); the gaps a receiver sees (histogram in quarters of T_DRAIN)
// and ST 2110-21's receiver models (C_INST, VRX, FPT) per frame are reported, with
// sent == received checked.
#pragma once

#include <cstdint>
#include <string>

#include "netdaq/config.h"
#include "netns_lab.h"
#include "sensors/st2110_receiver_model.h"

namespace ndqbench {

struct PacingResult {
  uint64_t sent = 0, received = 0;
  double t_drain_ns = 0, t_frame_ns = 0;
  netdaq::sensors::St2110Gaps gaps;
  netdaq::sensors::St2110Summary models;
  std::string sender_json;  // video-send's report
  std::string error;        // a failed check ("" when sent == received and the sender exited 0)
};

// frames: video frames sent; sender_cpu: the CPU the sender runs on (-1: any).
PacingResult measure_pacing(ndqtest::NetnsLab& lab, const netdaq::VideoOptions& v, uint32_t payload,
                            uint32_t frames, int sender_cpu);
// Two lines for the table, and the JSON object.
std::string pacing_text(const std::string& format, const PacingResult& r);
std::string pacing_json(const PacingResult& r);

}  // namespace ndqbench
