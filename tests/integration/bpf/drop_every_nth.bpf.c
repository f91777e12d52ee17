// A lossy link for tests: a tc egress program on the sender's veth that drops the IPv4 UDP
// packets to one port whose sequence number (the payload's first 4 bytes, big endian) is
// `phase` modulo `every`, and counts what it saw and dropped. The sender's socket is not told
// (a queueing discipline's drop), and the receiver's kernel never sees them: loss on the wire.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "drop_every_nth_abi.h"

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct ndq_test_dropper);
} dropper SEC(".maps");

struct headers {
  struct ethhdr eth;
  struct iphdr ip;
  struct udphdr udp;
  __u8 seq[4];
} __attribute__((packed));

SEC("tc")
int drop_every_nth(struct __sk_buff *skb) {
  __u32 zero = 0;
  struct ndq_test_dropper *d = bpf_map_lookup_elem(&dropper, &zero);
  struct headers h;
  if (!d || !d->every || bpf_skb_load_bytes(skb, 0, &h, sizeof h)) return TC_ACT_OK;
  if (h.eth.h_proto != bpf_htons(ETH_P_IP) || h.ip.ihl != 5 || h.ip.protocol != IPPROTO_UDP ||
      h.udp.dest != bpf_htons(d->port))
    return TC_ACT_OK;
  __u32 seq = ((__u32)h.seq[0] << 24) | ((__u32)h.seq[1] << 16) | ((__u32)h.seq[2] << 8) | h.seq[3];
  __sync_fetch_and_add(&d->seen, 1);
  if (seq % d->every != d->phase) return TC_ACT_OK;
  __sync_fetch_and_add(&d->dropped, 1);
  return TC_ACT_SHOT;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
