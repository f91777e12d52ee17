// What tests/integration/egress_dropper.cpp and bpf/drop_every_nth.bpf.c share: the one entry
// of the program's `dropper` array map.
#pragma once

#include <linux/types.h>

struct ndq_test_dropper {
  __u32 every;     // drop the packets whose sequence % every == phase (0: drop none)
  __u32 phase;
  __u16 port;      // IPv4 UDP destination port (host order) whose packets it looks at
  __u16 pad[3];
  __u64 seen;      // packets to that port it looked at
  __u64 dropped;   // of them, dropped
};
