// UDP receive with the IP header (socket.ip_headers): for protocols whose integrity check
// covers the IP header, e.g. the RoCEv2 ICRC (IP ID, flags, TTL masked, addresses included).
//
// Why a raw AF_INET socket (SOCK_RAW, IPPROTO_UDP) and not AF_PACKET: it sees exactly what the
// UDP socket would (datagrams for this host, after netfilter and IP reassembly), needs no
// interface name (the config has only udp://HOST:PORT), never sees outgoing copies (AF_PACKET
// on lo sees each packet twice), and bind() already matches the destination address. A
// classic BPF filter admits only the configured destination port, so other UDP traffic of
// the host never reaches the socket's queue. recvmmsg reads batches of up to batch_size.
//
// Why a second, plain UDP socket on the port: the raw socket gets a copy of each datagram;
// the original still goes to UDP, and with no socket bound there the kernel answers every
// datagram with ICMP port unreachable (and counts NoPorts). That socket's own filter drops
// everything, so its queue stays empty and nothing is read or counted twice (the kernel
// counts those datagrams in the host's UDP InErrors, which netdaq never reads).
//
// Each packet: a synthetic 14-byte Ethernet header (zero MACs, ethertype IPv4), then the IP
// and UDP headers as received, then the payload; data[0] is the payload, l2_len covers the
// headers, so Packet::frame() starts at an Ethernet header as with afxdp and dpdk.
//
// IPv4 only: an IPv6 raw socket never hands over the IPv6 header (validate.cpp says so).
// The raw socket sees a datagram before UDP verifies its checksum (a datagram with a bad
// UDP checksum is delivered; on lo and veth the checksum is often not even filled in).
#include <arpa/inet.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/log.h"
#include "engines/socket/ports.h"
#include "engines/socket/socket_options.h"
#include "util/errno_text.h"

#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif

namespace netdaq::detail::socket_engine {

namespace {

constexpr uint32_t kEthLen = 14;
constexpr uint32_t kMinHeaders = kEthLen + 20 + 8;  // Ethernet + IPv4 without options + UDP
constexpr size_t kCtrlSize = 64;

// Admits IPv4 datagrams to UDP port `port` (the filter sees the packet from its IP header).
void attach_port_filter(int fd, uint16_t port, const std::string& context) {
  sock_filter code[] = {
      BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),                 // x = IP header length
      BPF_STMT(BPF_LD | BPF_H | BPF_IND, 2),                  // a = UDP destination port
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, port, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),                 // whole packet
      BPF_STMT(BPF_RET | BPF_K, 0),                           // drop
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof(code) / sizeof(code[0])), code};
  if (::setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) != 0)
    throw_os(Errc::system, context, "cannot attach the port filter to the raw socket", errno);
}

// The plain UDP socket that holds the port: a filter that drops everything keeps it empty.
void attach_drop_all(int fd, const std::string& context) {
  sock_filter code[] = {BPF_STMT(BPF_RET | BPF_K, 0)};
  sock_fprog prog{1, code};
  if (::setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) != 0)
    throw_os(Errc::system, context, "cannot attach the drop filter to the port's UDP socket", errno);
}

class UdpIpRx final : public RxPort {
 public:
  UdpIpRx(const QueueResources& q, UniqueFd raw, UniqueFd holder)
      : q_(q),
        raw_(std::move(raw)),
        holder_(std::move(holder)),
        slots_(std::max<uint32_t>(q.queue->batch_size, 1)),
        slot_pkts_(slots_),
        msgs_(slots_),
        iov_(slots_),
        ctrl_(size_t{slots_} * kCtrlSize),
        discard_msgs_(slots_) {
    discard_iov_ = {discard_buf_, sizeof discard_buf_};
    for (uint32_t i = 0; i < slots_; ++i) {
      msghdr& h = msgs_[i].msg_hdr;
      h.msg_iov = &iov_[i];
      h.msg_iovlen = 1;
      h.msg_control = ctrl_.data() + size_t{i} * kCtrlSize;
      msghdr& d = discard_msgs_[i].msg_hdr;
      d.msg_iov = &discard_iov_;
      d.msg_iovlen = 1;
      d.msg_control = h.msg_control;
    }
  }

  uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept override {
    if (max > slots_) max = slots_;
    const uint32_t got = attach_buffers(q_, slot_pkts_.data(), max);
    if (got == 0) {
      discard_when_pool_empty();
      return 0;
    }
    for (uint32_t i = 0; i < got; ++i) {
      const PacketFields& f = fields(slot_pkts_[i]);
      iov_[i] = {f.data[0] + kEthLen, f.cap[0] - kEthLen};  // room for the synthetic Ethernet header
      msgs_[i].msg_hdr.msg_controllen = kCtrlSize;
    }
    const int r = ::recvmmsg(raw_.get(), msgs_.data(), got, MSG_DONTWAIT, nullptr);
    if (r <= 0) {
      return_buffers(q_, slot_pkts_.data(), got);
      if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        log_os_error(errlog_, q_.counters, q_.name, "recvmmsg failed", errno);
      return 0;
    }
    const uint32_t n = static_cast<uint32_t>(r);
    if (n < got) return_buffers(q_, slot_pkts_.data() + n, got - n);
    uint32_t out = 0;
    for (uint32_t j = 0; j < n; ++j) {
      read_overflow(msgs_[j].msg_hdr);
      Packet& p = slot_pkts_[j];
      const DropReason why = frame(fields(p), msgs_[j].msg_len, (msgs_[j].msg_hdr.msg_flags & MSG_TRUNC) != 0);
      if (why == DropReason::count_) {
        bytes += fields(p).len[0];
        pkts[out++] = p;
      } else {
        q_.counters->drop(why);
        return_buffers(q_, &p, 1);
      }
    }
    return out;
  }

  void refresh_counters() noexcept override {
    uint64_t drops = ovfl_.load(std::memory_order_relaxed);
    const int64_t mem = socket_drops(raw_.get());
    if (mem > 0 && static_cast<uint64_t>(mem) > drops) drops = static_cast<uint64_t>(mem);
    uint64_t seen = seen_drops_.load(std::memory_order_relaxed);
    while (drops > seen && !seen_drops_.compare_exchange_weak(seen, drops, std::memory_order_relaxed)) {
    }
    q_.counters->set_drop(DropReason::kernel, std::max(drops, seen));
  }

  void add_details(QueueStats& s) const override { s.mode = "udp with IP headers (raw IPv4 socket, BPF port filter)"; }

  const QueueResources& resources() const noexcept override { return q_; }

 private:
  // Turns a received IPv4 datagram (at data[0] + 14) into a packet; returns why it is not
  // one (DropReason::count_: it is).
  static DropReason frame(PacketFields& f, uint32_t n, bool truncated) noexcept {
    if (truncated) return DropReason::oversize;
    std::byte* eth = f.data[0];
    const auto* ip = reinterpret_cast<const uint8_t*>(eth + kEthLen);
    if (n < 28 || (ip[0] >> 4) != 4) return DropReason::malformed;
    const uint32_t ihl = (ip[0] & 0x0fu) * 4u;
    if (ihl < 20 || n < ihl + 8) return DropReason::malformed;
    const uint32_t udp_len = (uint32_t{ip[ihl + 4]} << 8) | ip[ihl + 5];
    if (udp_len < 8 || udp_len > n - ihl) return DropReason::malformed;
    std::memset(eth, 0, 12);
    eth[12] = std::byte{0x08};
    eth[13] = std::byte{0x00};
    const uint32_t head = kEthLen + ihl + 8;
    f.data[0] = eth + head;
    f.cap[0] -= head;
    f.len[0] = udp_len - 8;
    f.l2_len = static_cast<uint16_t>(head);
    f.whole_frame = 0;
    return DropReason::count_;
  }

  void read_overflow(msghdr& h) noexcept {
    if (h.msg_controllen == 0) return;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_RXQ_OVFL) continue;
      uint32_t d = 0;
      std::memcpy(&d, CMSG_DATA(c), sizeof d);
      if (d > ovfl_.load(std::memory_order_relaxed)) ovfl_.store(d, std::memory_order_relaxed);
    }
  }

  // Not one buffer free: read what waits and count it, so the socket holds no stale data.
  void discard_when_pool_empty() noexcept {
    for (uint32_t i = 0; i < slots_; ++i) discard_msgs_[i].msg_hdr.msg_controllen = kCtrlSize;
    const int r = ::recvmmsg(raw_.get(), discard_msgs_.data(), slots_, MSG_DONTWAIT | MSG_TRUNC, nullptr);
    if (r > 0) q_.counters->drop(DropReason::pool_empty, static_cast<uint64_t>(r));
  }

  QueueResources q_;
  UniqueFd raw_;
  UniqueFd holder_;  // holds the port (no ICMP port unreachable); never read
  const uint32_t slots_;
  std::vector<Packet> slot_pkts_;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iov_;
  std::vector<std::byte> ctrl_;
  std::vector<mmsghdr> discard_msgs_;
  iovec discard_iov_{};
  std::byte discard_buf_[64];
  std::atomic<uint64_t> ovfl_{0};
  std::atomic<uint64_t> seen_drops_{0};
  RateLimitedLog errlog_;
};

}  // namespace

std::unique_ptr<RxPort> open_udp_ip_rx(const QueueResources& q, SockAddr& addr, const std::string& url,
                                       const std::string& context) {
  if (addr.family() != AF_INET || addr.is_multicast())
    throw Error(Errc::invalid_config, context + ": socket.ip_headers needs a unicast IPv4 address (udp://IPV4:PORT); '" +
                                          url + "' is not one (an IPv6 raw socket never delivers the IP header)");
  if (q.segments != 1 || q.pools[0]->buf_size() <= kMinHeaders)
    throw Error(Errc::invalid_config, context + ": socket.ip_headers needs one memory region per queue with buffers "
                                                "larger than the " + std::to_string(kMinHeaders) + " header bytes");
  const SocketOptions& opt = q.iface->options.get<SocketOptions>();
  // The holder first: it binds the port (also port 0: the kernel picks one) and reports
  // a port in use or an address that is not on this host.
  UniqueFd holder = open_socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP, context);
  attach_drop_all(holder.get(), context);
  bind_or_throw(holder.get(), addr, url, context);
  if (addr.port() == 0) addr.set_port(local_address(holder.get()).port());

  const int rfd = ::socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
  if (rfd < 0) {
    const int err = errno;
    throw_os(Errc::system, context, "cannot create a raw IPv4 socket", err,
             err == EPERM ? ": socket.ip_headers needs CAP_NET_RAW (run as root, or setcap cap_net_raw+ep)" : "");
  }
  UniqueFd raw(rfd);
  // The filter before bind: nothing for another port is ever queued.
  attach_port_filter(raw.get(), addr.port(), context);
  if (!addr.is_any()) {
    SockAddr local = addr;
    local.set_port(0);
    if (::bind(raw.get(), local.get(), local.len) != 0)
      throw_os(Errc::system, context, "cannot bind the raw socket to " + local.to_string(), errno);
  }
  set_buffer_size(raw.get(), true, opt.rcvbuf, context);
  if (const int err = set_int(raw.get(), SOL_SOCKET, SO_RXQ_OVFL, 1))
    log()->debug("{}: SO_RXQ_OVFL unavailable ({}); kernel drops come from SO_MEMINFO only", context, errno_text(err));
  set_busy_poll(raw.get(), opt.busy_poll_us, context);
  log()->debug("{}: receiving on {} with IP headers (raw socket)", context, addr.to_string());
  return std::make_unique<UdpIpRx>(q, std::move(raw), std::move(holder));
}

}  // namespace netdaq::detail::socket_engine
