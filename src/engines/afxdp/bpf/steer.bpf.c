/* netdaq's AF_XDP steering program: packets of the configured flows go to the XSK of their
 * NIC queue; everything else (ARP, ICMP, SSH, other ports) passes to the kernel untouched.
 * Compiled with clang -target bpf at build time and embedded in libnetdaq.
 *
 * Frags-aware (SEC "xdp.frags", BPF_F_XDP_HAS_FRAGS): a jumbo frame may come as several
 * buffers (multi-buffer XDP). The headers are read only from the first buffer
 * (ctx->data..ctx->data_end, which can be shorter than the frame): a frame whose headers do
 * not fit there is not matched and passes to the kernel. Byte counters count the whole
 * frame (bpf_xdp_get_buff_len). On a kernel without multi-buffer XDP the engine loads this
 * program without the frags flag and with ndq_frags = 0 (xdp_program.cpp): the helper's call
 * is then dead code the verifier removes. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "steer_abi.h"

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, NDQ_MAX_FLOWS);
  __type(key, __u32);
  __type(value, struct ndq_rule);
} netdaq_rules SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, NDQ_MAX_FLOWS + 1);
  __type(key, __u32);
  __type(value, struct ndq_counts);
} netdaq_counts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct ndq_control);
} netdaq_owner SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, NDQ_MAX_QUEUES);
  __type(key, __u32);
  __type(value, __u32);
} netdaq_xsks SEC(".maps");

/* Set by the loader before loading (read-only data, a constant for the verifier). */
const volatile __u32 ndq_frags = 1;

struct vlan_tag {
  __be16 tci;
  __be16 proto;
};

/* The fields a rule can match, pulled out of the headers once. */
struct fields {
  __u8 src[16];
  __u8 dst[16];
  __u16 sport, dport, vlan;
  __u8 v6, has_vlan;
};

static __always_inline int same_ip(const __u8 *a, const __u8 *b, int n) {
  const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;
  if (x[0] != y[0]) return 0;
  if (n == 4) return 1;
  return x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

static __always_inline int matches(const struct ndq_rule *r, const struct fields *f) {
  const __u32 b = r->bits;
  if ((b & NDQ_M_UDP_SRC) && (f->sport < r->src_lo || f->sport > r->src_hi)) return 0;
  if ((b & NDQ_M_UDP_DST) && (f->dport < r->dst_lo || f->dport > r->dst_hi)) return 0;
  if ((b & NDQ_M_VLAN) && (!f->has_vlan || f->vlan != r->vlan)) return 0;
  if ((b & (NDQ_M_IP4_SRC | NDQ_M_IP4_DST)) && f->v6) return 0;
  if ((b & (NDQ_M_IP6_SRC | NDQ_M_IP6_DST)) && !f->v6) return 0;
  if ((b & NDQ_M_IP4_SRC) && !same_ip(r->ip_src, f->src, 4)) return 0;
  if ((b & NDQ_M_IP4_DST) && !same_ip(r->ip_dst, f->dst, 4)) return 0;
  if ((b & NDQ_M_IP6_SRC) && !same_ip(r->ip_src, f->src, 16)) return 0;
  if ((b & NDQ_M_IP6_DST) && !same_ip(r->ip_dst, f->dst, 16)) return 0;
  return 1;
}

/* Parses Ethernet (one VLAN tag), IPv4 without fragments or IPv6 without extension headers,
 * and UDP. Returns 0 when the packet is not such a UDP packet. */
static __always_inline int parse(void *data, void *end, struct fields *f) {
  struct ethhdr *eth = data;
  if ((void *)(eth + 1) > end) return 0;
  __u16 proto = eth->h_proto;
  void *p = eth + 1;
  if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
    struct vlan_tag *v = p;
    if ((void *)(v + 1) > end) return 0;
    f->vlan = bpf_ntohs(v->tci) & 0x0fff;
    f->has_vlan = 1;
    proto = v->proto;
    p = v + 1;
  }
  struct udphdr *udp;
  if (proto == bpf_htons(ETH_P_IP)) {
    struct iphdr *ip = p;
    if ((void *)(ip + 1) > end) return 0;
    if (ip->protocol != IPPROTO_UDP || ip->ihl < 5) return 0;
    if (ip->frag_off & bpf_htons(0x3fff)) return 0; /* fragments: the kernel reassembles them */
    __builtin_memcpy(f->src, &ip->saddr, 4);
    __builtin_memcpy(f->dst, &ip->daddr, 4);
    udp = (void *)ip + ip->ihl * 4;
  } else if (proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr *ip6 = p;
    if ((void *)(ip6 + 1) > end) return 0;
    if (ip6->nexthdr != IPPROTO_UDP) return 0;
    __builtin_memcpy(f->src, &ip6->saddr, 16);
    __builtin_memcpy(f->dst, &ip6->daddr, 16);
    f->v6 = 1;
    udp = (void *)(ip6 + 1);
  } else {
    return 0;
  }
  if ((void *)(udp + 1) > end) return 0;
  f->sport = bpf_ntohs(udp->source);
  f->dport = bpf_ntohs(udp->dest);
  return 1;
}

static __always_inline void count(__u32 slot, __u64 bytes, int wrong_queue) {
  struct ndq_counts *c = bpf_map_lookup_elem(&netdaq_counts, &slot);
  if (!c) return;
  if (wrong_queue) {
    c->wrong_queue++;
  } else {
    c->packets++;
    c->bytes += bytes;
  }
}

/* Tells the engine the flow id through XDP metadata (best effort: not every mode has it). */
static __always_inline void tag(struct xdp_md *ctx, __u32 flow) {
  if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct ndq_meta))) return;
  void *data = (void *)(long)ctx->data;
  struct ndq_meta *m = (void *)(long)ctx->data_meta;
  if ((void *)(m + 1) > data) return;
  m->flow = flow;
  m->magic = NDQ_META_MAGIC;
}

SEC("xdp.frags")
int netdaq_steer(struct xdp_md *ctx) {
  void *data = (void *)(long)ctx->data;
  void *end = (void *)(long)ctx->data_end; /* end of the first buffer */
  const __u64 bytes = ndq_frags ? bpf_xdp_get_buff_len(ctx) : (__u64)(end - data);
  struct fields f = {};
  __u32 zero = 0;
  struct ndq_control *ctl = bpf_map_lookup_elem(&netdaq_owner, &zero);
  if (!ctl || !parse(data, end, &f)) goto unmatched;
  const __u32 n = ctl->nrules;
  const __u32 queue = ctx->rx_queue_index;
  for (__u32 i = 0; i < NDQ_MAX_FLOWS; i++) {
    if (i >= n) break;
    __u32 key = i;
    struct ndq_rule *r = bpf_map_lookup_elem(&netdaq_rules, &key);
    if (!r) break;
    if (!matches(r, &f)) continue;
    if (!(r->bits & NDQ_M_ANY_QUEUE) && r->queue != queue) {
      count(i, bytes, 1);
      return XDP_PASS;
    }
    count(i, bytes, 0);
    if (r->bits & NDQ_M_TAG) tag(ctx, r->id); /* a queue with one flow knows it without: ~2% faster */
    return bpf_redirect_map(&netdaq_xsks, queue, XDP_PASS);
  }
unmatched:
  count(NDQ_UNMATCHED, bytes, 0);
  return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
