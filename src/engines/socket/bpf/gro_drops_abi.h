// What the GRO drop counter (gro_drops.bpf.c) shares with user space (gro_drops.cpp).
#pragma once

#include <linux/types.h>

// Sockets one process can watch at once (one entry per GRO receive socket).
#define NDQ_GRO_MAX_SOCKETS 4096

// Per watched socket (key: its SO_COOKIE): what the kernel dropped at its receive queue.
struct ndq_gro_drops {
  __u64 batches;    // skbs dropped: what SO_MEMINFO / SO_RXQ_OVFL count
  __u64 datagrams;  // the datagrams in them (a GRO batch holds up to 64)
};
