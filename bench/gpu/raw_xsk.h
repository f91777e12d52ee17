// An AF_XDP socket from raw syscalls (the GPU machine has no libxdp), for the GPU-owned ring
// probe (xsk_gpu_rings.cu): a network namespace of its own with lo up, a UMEM, the four rings
// mmap()ed, an XSKMAP and a small XDP program attached to lo in generic mode that redirects
// UDP to one port to the socket and passes everything else. Everything is released with the
// process (the namespace goes with it).
#pragma once

#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace raw_xsk {

inline constexpr uint32_t kRingSize = 2048;   // descriptors per ring
inline constexpr uint32_t kFrameSize = 2048;  // UMEM chunk
inline constexpr uint32_t kFrames = 2 * kRingSize;  // the first half for RX, the second for TX

[[noreturn]] inline void die(const char* what, int err = errno) {
  std::fprintf(stderr, "xsk_gpu_rings: %s: %s\n", what, std::strerror(err));
  std::exit(2);
}

// One mmap()ed ring as both sides see it (host addresses).
struct Ring {
  uint32_t* producer = nullptr;
  uint32_t* consumer = nullptr;
  uint32_t* flags = nullptr;  // XDP_RING_NEED_WAKEUP
  void* desc = nullptr;
  void* map = nullptr;
  size_t map_len = 0;
};

inline Ring map_ring(int fd, const xdp_ring_offset& off, size_t desc_size, off_t pgoff) {
  Ring r;
  r.map_len = off.desc + kRingSize * desc_size;
  r.map = mmap(nullptr, r.map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);
  if (r.map == MAP_FAILED) die("mmap of a ring");
  auto* base = static_cast<uint8_t*>(r.map);
  r.producer = reinterpret_cast<uint32_t*>(base + off.producer);
  r.consumer = reinterpret_cast<uint32_t*>(base + off.consumer);
  r.flags = reinterpret_cast<uint32_t*>(base + off.flags);
  r.desc = base + off.desc;
  return r;
}

inline long sys_bpf(int cmd, bpf_attr* a) { return syscall(__NR_bpf, cmd, a, sizeof(*a)); }

// XDP (jump offsets count from the next instruction; all go to `pass`, the second to last):
// IPv4 UDP to `port` (no IP options) -> bpf_redirect_map(&xsks, rx_queue_index, XDP_PASS);
// anything else XDP_PASS (the probe's own transmitted packets go up the stack to a socket).
inline int load_redirect_program(int map_fd, uint16_t port) {
  const int32_t port_be = htons(port);
  const bpf_insn insns[] = {
      {BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, offsetof(xdp_md, data), 0},
      {BPF_LDX | BPF_MEM | BPF_W, BPF_REG_3, BPF_REG_1, offsetof(xdp_md, data_end), 0},
      {BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_4, BPF_REG_2, 0, 0},
      {BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_4, 0, 0, 38},  // through the UDP destination port
      {BPF_JMP | BPF_JGT | BPF_X, BPF_REG_4, BPF_REG_3, 14, 0},        // -> pass
      {BPF_LDX | BPF_MEM | BPF_H, BPF_REG_5, BPF_REG_2, 12, 0},        // ethertype
      {BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, 12, htons(0x0800)},    // -> pass
      {BPF_LDX | BPF_MEM | BPF_B, BPF_REG_5, BPF_REG_2, 14, 0},        // version, IHL
      {BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, 10, 0x45},              // -> pass
      {BPF_LDX | BPF_MEM | BPF_B, BPF_REG_5, BPF_REG_2, 23, 0},        // protocol
      {BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, 8, IPPROTO_UDP},       // -> pass
      {BPF_LDX | BPF_MEM | BPF_H, BPF_REG_5, BPF_REG_2, 36, 0},        // UDP destination port
      {BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, 6, port_be},           // -> pass
      {BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, offsetof(xdp_md, rx_queue_index), 0},
      {BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd},
      {0, 0, 0, 0, 0},
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, XDP_PASS},
      {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS},      // pass:
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  static char log[8192];
  bpf_attr a{};
  a.prog_type = BPF_PROG_TYPE_XDP;
  a.expected_attach_type = BPF_XDP;
  a.insns = reinterpret_cast<uint64_t>(insns);
  a.insn_cnt = sizeof(insns) / sizeof(insns[0]);
  a.license = reinterpret_cast<uint64_t>("GPL");
  a.log_buf = reinterpret_cast<uint64_t>(log);
  a.log_size = sizeof(log);
  a.log_level = 1;
  const int fd = static_cast<int>(sys_bpf(BPF_PROG_LOAD, &a));
  if (fd < 0) {
    std::fprintf(stderr, "xsk_gpu_rings: verifier log:\n%s\n", log);
    die("BPF_PROG_LOAD");
  }
  return fd;
}

// A network namespace of our own with its loopback up: the XDP program sees only our traffic.
inline int own_loopback() {
  if (unshare(CLONE_NEWNET) != 0) die("unshare(CLONE_NEWNET)");
  const int s = socket(AF_INET, SOCK_DGRAM, 0);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0) die("SIOCGIFFLAGS lo");
  ifr.ifr_flags |= IFF_UP;
  if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) die("SIOCSIFFLAGS lo up");
  close(s);
  // What an AF_XDP socket transmits on lo arrives without the route a local socket's packets
  // carry, so it is routed as input: 127/8 needs route_localnet, a local source accept_local
  // (this namespace's settings).
  for (const char* f : {"/proc/sys/net/ipv4/conf/all/route_localnet", "/proc/sys/net/ipv4/conf/lo/route_localnet",
                        "/proc/sys/net/ipv4/conf/all/accept_local", "/proc/sys/net/ipv4/conf/lo/accept_local"}) {
    FILE* sysctl = std::fopen(f, "w");
    if (!sysctl || std::fputs("1", sysctl) < 0 || std::fclose(sysctl) != 0) die(f);
  }
  return static_cast<int>(if_nametoindex("lo"));
}

struct Xsk {
  int fd = -1;
  Ring fill, comp, rx, tx;
  uint8_t* umem = nullptr;
};

// Bound to lo's queue 0 in copy mode (generic XDP) with need_wakeup: the TX ring's flag then
// says when the kernel wants a sendto() to transmit.
inline Xsk open_xsk(int ifindex, uint8_t* umem) {
  Xsk x;
  x.umem = umem;
  x.fd = socket(AF_XDP, SOCK_RAW, 0);
  if (x.fd < 0) die("socket(AF_XDP)");
  xdp_umem_reg reg{};
  reg.addr = reinterpret_cast<uint64_t>(umem);
  reg.len = uint64_t(kFrames) * kFrameSize;
  reg.chunk_size = kFrameSize;
  if (setsockopt(x.fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) != 0) die("XDP_UMEM_REG");
  const int n = kRingSize;
  if (setsockopt(x.fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) != 0) die("XDP_UMEM_FILL_RING");
  if (setsockopt(x.fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n, sizeof(n)) != 0) die("XDP_UMEM_COMPLETION_RING");
  if (setsockopt(x.fd, SOL_XDP, XDP_RX_RING, &n, sizeof(n)) != 0) die("XDP_RX_RING");
  if (setsockopt(x.fd, SOL_XDP, XDP_TX_RING, &n, sizeof(n)) != 0) die("XDP_TX_RING");
  xdp_mmap_offsets off{};
  socklen_t len = sizeof(off);
  if (getsockopt(x.fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &len) != 0) die("XDP_MMAP_OFFSETS");
  x.fill = map_ring(x.fd, off.fr, sizeof(uint64_t), XDP_UMEM_PGOFF_FILL_RING);
  x.comp = map_ring(x.fd, off.cr, sizeof(uint64_t), XDP_UMEM_PGOFF_COMPLETION_RING);
  x.rx = map_ring(x.fd, off.rx, sizeof(xdp_desc), XDP_PGOFF_RX_RING);
  x.tx = map_ring(x.fd, off.tx, sizeof(xdp_desc), XDP_PGOFF_TX_RING);
  sockaddr_xdp sa{};
  sa.sxdp_family = AF_XDP;
  sa.sxdp_ifindex = ifindex;
  sa.sxdp_queue_id = 0;
  sa.sxdp_flags = XDP_COPY | XDP_USE_NEED_WAKEUP;
  if (bind(x.fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) die("bind(AF_XDP, lo, queue 0)");
  return x;
}

// The XSKMAP with the socket at index 0, and the program attached to lo (generic mode, a BPF
// link: detached when the process ends).
inline void attach(int ifindex, int xsk_fd, uint16_t port) {
  bpf_attr m{};
  m.map_type = BPF_MAP_TYPE_XSKMAP;
  m.key_size = 4;
  m.value_size = 4;
  m.max_entries = 1;
  const int map_fd = static_cast<int>(sys_bpf(BPF_MAP_CREATE, &m));
  if (map_fd < 0) die("BPF_MAP_CREATE(XSKMAP)");
  const uint32_t key = 0, value = static_cast<uint32_t>(xsk_fd);
  bpf_attr u{};
  u.map_fd = map_fd;
  u.key = reinterpret_cast<uint64_t>(&key);
  u.value = reinterpret_cast<uint64_t>(&value);
  if (sys_bpf(BPF_MAP_UPDATE_ELEM, &u) != 0) die("XSKMAP update");
  const int prog = load_redirect_program(map_fd, port);
  bpf_attr l{};
  l.link_create.prog_fd = prog;
  l.link_create.target_ifindex = ifindex;
  l.link_create.attach_type = BPF_XDP;
  l.link_create.flags = XDP_FLAGS_SKB_MODE;
  if (sys_bpf(BPF_LINK_CREATE, &l) < 0) die("BPF_LINK_CREATE (XDP, generic, lo)");
}

inline xdp_statistics stats(int fd) {
  xdp_statistics s{};
  socklen_t len = sizeof(s);
  if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &s, &len) != 0) die("XDP_STATISTICS");
  return s;
}

}  // namespace raw_xsk
