// What the kernel counted for the frames one side of a NetnsLab sent to the other (veth.c),
// so a test can check each frame's fate against counts netdaq and its peers did not make:
// a frame that the sender's veth_xmit could not put into the receiver's ring never reaches
// the receiver's XDP; one that reached it was redirected (to an AF_XDP socket), dropped by
// XDP_DROP, or dropped because the redirect failed (the socket's ring was full).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "netns_lab.h"

namespace ndqtest {

struct VethFates {
  uint64_t dropped_by_sender = 0;  // the sender's tx_dropped: the receiver's ring was full
  uint64_t xdp_packets = 0;        // frames that reached the receiver's XDP (rx queue 0)
  uint64_t xdp_redirect = 0;       // redirected by XDP
  uint64_t xdp_drops = 0;          // XDP_DROP
  uint64_t drops = 0;              // failed redirects (and the veth's other rx drops)

  // Frames that met a fate XDP counted: redirected or dropped there.
  uint64_t xdp_fates() const { return xdp_redirect + xdp_drops + drops; }
  // Every frame sent that the kernel did not deliver to the receiving socket.
  uint64_t dropped() const { return dropped_by_sender + xdp_drops + drops; }
  std::string describe() const;
};

// The counters now (ethtool -S of the receiver's veth, sysfs tx_dropped of the sender's).
// Throws std::runtime_error when a counter is missing.
VethFates veth_fates(const NetnsLab& lab, const NetnsLab::Side& sender, const NetnsLab::Side& receiver);
// What was counted between two snapshots.
VethFates operator-(const VethFates& now, const VethFates& before);
// What was counted since `before`, once every one of `sent` frames has met its fate in the
// kernel (reached the receiver's XDP or was dropped by the sender's veth, and XDP counted what
// it did with it), or `timeout` passed: the counters, not a sleep, say when the receiver has
// everything it will get.
VethFates await_veth_fates(const NetnsLab& lab, const NetnsLab::Side& sender, const NetnsLab::Side& receiver,
                           const VethFates& before, uint64_t sent,
                           std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace ndqtest
