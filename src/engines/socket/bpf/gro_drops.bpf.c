// Counts the datagrams inside the UDP skbs a socket's full receive queue drops.
//
// With UDP GRO the kernel queues coalesced super-datagrams and, when the receive buffer is
// full, drops a whole one while sk_drops (SO_MEMINFO, SO_RXQ_OVFL) grows by one. When
// __udp_enqueue_schedule_skb (the one place that queues and drops) fails, these programs add
// the skb's segment count to the socket's entry, for sockets user space put in `watched`
// (key: the socket cookie). One of the two is loaded, whichever the kernel offers. Types are
// declared with CO-RE relocations, so the object loads on any kernel with BTF.
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "gro_drops_abi.h"

struct sock_common {
  struct {
    long long counter;
  } skc_cookie;  // set once user space asked for SO_COOKIE
} __attribute__((preserve_access_index));
struct sock {
  struct sock_common __sk_common;
} __attribute__((preserve_access_index));
struct sk_buff {
  unsigned char *head;
  unsigned int end;  // offset of skb_shared_info from head (64-bit kernels)
} __attribute__((preserve_access_index));
struct skb_shared_info {
  unsigned short gso_segs;
} __attribute__((preserve_access_index));

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, NDQ_GRO_MAX_SOCKETS);
  __type(key, __u64);
  __type(value, struct ndq_gro_drops);
} watched SEC(".maps");

static __always_inline void count_drop(struct sock *sk, struct sk_buff *skb) {
  __u64 cookie = BPF_CORE_READ(sk, __sk_common.skc_cookie.counter);
  struct ndq_gro_drops *d = cookie ? bpf_map_lookup_elem(&watched, &cookie) : 0;
  if (!d) return;
  struct skb_shared_info *shinfo = (struct skb_shared_info *)(BPF_CORE_READ(skb, head) + BPF_CORE_READ(skb, end));
  __u16 segs = BPF_CORE_READ(shinfo, gso_segs);
  __sync_fetch_and_add(&d->batches, 1);
  __sync_fetch_and_add(&d->datagrams, segs > 1 ? segs : 1);
}

// Kernels from 6.10 pass the skb to this tracepoint (raw tracepoints need no trampoline).
SEC("tp_btf/udp_fail_queue_rcv_skb")
int BPF_PROG(udp_drop_tracepoint, int rc, struct sock *sk, struct sk_buff *skb) {
  count_drop(sk, skb);
  return 0;
}

// Older kernels: the function's exit, through a trampoline.
SEC("fexit/__udp_enqueue_schedule_skb")
int BPF_PROG(udp_enqueue_exit, struct sock *sk, struct sk_buff *skb, int ret) {
  if (ret < 0) count_drop(sk, skb);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";  // tracing programs that read kernel memory must be GPL
