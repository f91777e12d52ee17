/* The layout shared by the steering program (steer.bpf.c) and the engine that fills and reads
 * its maps (xdp_program.cpp). Plain C, fixed-width types, no padding surprises. */
#ifndef NETDAQ_AFXDP_STEER_ABI_H
#define NETDAQ_AFXDP_STEER_ABI_H

#include <linux/types.h>

#define NDQ_MAX_FLOWS 64     /* flows per interface (also the validator's limit: limits.h) */
#define NDQ_MAX_QUEUES 256   /* XSK map slots: NIC queue ids 0..255 */
#define NDQ_UNMATCHED NDQ_MAX_FLOWS  /* counter slot of packets that matched no flow */

/* Which match fields a rule uses. */
enum ndq_match_bits {
  NDQ_M_UDP_SRC = 1u << 0,
  NDQ_M_UDP_DST = 1u << 1,
  NDQ_M_IP4_SRC = 1u << 2,
  NDQ_M_IP4_DST = 1u << 3,
  NDQ_M_IP6_SRC = 1u << 4,
  NDQ_M_IP6_DST = 1u << 5,
  NDQ_M_VLAN = 1u << 6,
  NDQ_M_ANY_QUEUE = 1u << 7, /* no flows configured: every UDP packet to its arrival queue */
  NDQ_M_TAG = 1u << 8,       /* the queue has several flows: write the flow id as metadata */
};

struct ndq_rule {
  __u32 id;        /* the config's flow id */
  __u32 bits;      /* ndq_match_bits */
  __u16 queue;     /* NIC queue (= XSK) the flow belongs to */
  __u16 vlan;
  __u16 src_lo, src_hi, dst_lo, dst_hi; /* UDP port ranges, host order, inclusive */
  __u8 ip_src[16]; /* IPv4 in the first 4 bytes, network order */
  __u8 ip_dst[16];
};

/* Per-CPU counters of one rule (slot NDQ_UNMATCHED: passed to the kernel, no match). */
struct ndq_counts {
  __u64 packets;
  __u64 bytes;
  __u64 wrong_queue; /* matched, arrived on another NIC queue: passed to the kernel */
};

/* Rule count and the process that owns the program: lets a later start tell a stale
 * program (its owner was killed) from one in use. */
struct ndq_control {
  __u32 nrules;
  __u32 owner_pid;
  __u64 owner_start; /* the owner's start time, /proc/PID/stat field 22 */
};

/* Written in front of the packet (XDP metadata) so the engine knows the flow without
 * matching again. */
struct ndq_meta {
  __u32 flow;
  __u32 magic;
};
#define NDQ_META_MAGIC 0x6e647131u /* "ndq1" */

#endif
