// EgressDropper: a lossy link between a NetnsLab's two namespaces. bpf/drop_every_nth.bpf.c on
// side B's veth (tc egress, attached through libbpf) drops the IPv4 UDP packets to `port`
// whose sequence (the payload's first 4 bytes, big endian) is `phase` modulo `every`, and
// counts them: the receiver in A never sees them, the sender is not told. Detached and its
// queueing discipline removed in the destructor (the lab's namespaces go after it anyway).
#pragma once

#include <cstdint>
#include <memory>

#include "netns_lab.h"

namespace ndqtest {

class EgressDropper {
 public:
  // Throws std::runtime_error saying what failed (load, clsact, attach).
  EgressDropper(NetnsLab& lab, uint16_t port, uint32_t every, uint32_t phase);
  ~EgressDropper();
  EgressDropper(const EgressDropper&) = delete;
  EgressDropper& operator=(const EgressDropper&) = delete;

  uint64_t seen() const;     // packets to the port it looked at
  uint64_t dropped() const;  // of them, dropped

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ndqtest
