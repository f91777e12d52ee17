// The path from one NetnsLab side to the other for the st2110 tests, shaped with tc on the
// sender's veth (this kernel has no netem):
//  - paced: a token bucket (tbf) at a link rate, so that GStreamer's per-frame bursts (a
//    frame's packets at once) cross the veth at that rate instead of overrunning the
//    receiver's rings;
//  - lossy, deterministically: UDP packets to a port whose RTP sequence number has
//    (seq & mask) == 0 are taken off the path (u32 classifier on the clsact egress hook,
//    mirred redirect into a veth that leads nowhere), each counted by tc. Which packets are
//    lost is then a function of the sequence numbers GStreamer wrote, known to the test.
// Everything lives in the lab's namespaces and goes with them.
#pragma once

#include <cstdint>
#include <string>

#include "netns_lab.h"

namespace ndqtest {

// Paces what `side` sends out of its veth to `rate` (tc syntax, e.g. "400mbit"). Throws
// std::runtime_error with tc's output.
void pace_sender(const NetnsLab& lab, const NetnsLab::Side& side, const std::string& rate);

// Drops, on `side`'s egress, UDP packets to `port` whose RTP sequence number (the 16 bits
// after the UDP header's 8 and RTP's first 2; IPv4 without options) has (seq & mask) == 0.
void drop_rtp_sequences(const NetnsLab& lab, const NetnsLab::Side& side, uint16_t port, uint16_t mask);
// Packets drop_rtp_sequences took off the path so far (tc's count for its action).
uint64_t rtp_sequences_dropped(const NetnsLab& lab, const NetnsLab::Side& side);

// A permanent neighbour entry on `from` for `to`'s IPv4 address: no ARP exchange delays or
// drops the first packets (a kernel queues only a few while it resolves).
void static_neighbour(const NetnsLab& lab, const NetnsLab::Side& from, const NetnsLab::Side& to);

}  // namespace ndqtest
