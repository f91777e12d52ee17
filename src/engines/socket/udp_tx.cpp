// UDP send: a socket connect()ed to tx.destination, sendmmsg(MSG_DONTWAIT) straight from
// the pool buffers (one iovec per segment, so header-data split packets are gathered).
//
// GSO (socket.gso and a kernel with UDP_SEGMENT): runs of consecutive packets of equal size
// (the last of a run may be shorter) go as one message with a UDP_SEGMENT cmsg; the kernel
// (or the NIC) cuts it into datagrams. A run is at most the kernel's segment limit
// (UDP_MAX_SEGMENTS: 128 since Linux 6.9, 64 before; we start at 128 and step down to 64
// when the kernel refuses) and 65507 bytes, and its segment size fits the path MTU.
// Several such messages go in one sendmmsg.
//
// Errors: EAGAIN/ENOBUFS accept fewer packets (the caller retries; nothing counted). Any
// other error drops the packets of the message that failed (tx_error, errno logged
// rate-limited) and sending goes on with the next one, so a dead destination never stalls
// the sender. Packets are consumed in order; dropped ones are taken but not sent
// (TxResult). Buffers go back to the pool
// right after the syscall: the kernel has copied the data.
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/log.h"
#include "engines/socket/gso_run.h"
#include "engines/socket/ports.h"
#include "engines/socket/socket_options.h"
#include "util/errno_text.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

namespace netdaq::detail::socket_engine {
namespace {

constexpr uint32_t kGsoSegmentsNew = 128;      // UDP_MAX_SEGMENTS since Linux 6.9
constexpr uint32_t kGsoSegmentsOld = 64;       // before
constexpr size_t kCtrlSize = CMSG_SPACE(sizeof(uint16_t));

class UdpTx final : public TxPort {
 public:
  UdpTx(const QueueResources& q, UniqueFd fd, bool gso, uint32_t gso_max_size, std::string dest)
      : q_(q),
        fd_(std::move(fd)),
        gso_(gso),
        gso_max_size_(gso_max_size),
        dest_(std::move(dest)),
        send_error_("send to " + dest_ + " failed"),
        slots_(std::max<uint32_t>(q.queue->batch_size, 1)),
        nseg_(q.segments),
        msgs_(slots_),
        iov_(size_t{slots_} * nseg_),
        first_(slots_),
        count_(slots_),
        failed_(slots_),
        ctrl_(new std::byte[size_t{slots_} * kCtrlSize]()) {
    for (uint32_t i = 0; i < slots_; ++i) {
      auto* c = reinterpret_cast<cmsghdr*>(ctrl_.get() + size_t{i} * kCtrlSize);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    }
  }

  TxResult transmit(Packet* pkts, uint32_t n) noexcept override {
    if (n > slots_) n = slots_;
    if (n == 0) return {};
    const uint32_t nm = build(pkts, n);
    uint32_t done = 0;  // messages sent or failed, in order
    bool dropped = false;
    while (done < nm) {
      const int r = ::sendmmsg(fd_.get(), msgs_.data() + done, nm - done, MSG_DONTWAIT);
      if (r > 0) {
        done += static_cast<uint32_t>(r);
        continue;
      }
      const int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) break;  // full: the caller retries
      if (count_[done] > 1 && (err == EINVAL || err == EIO || err == EMSGSIZE || err == ENOPROTOOPT)) {
        gso_refused(err, count_[done]);  // those packets go again without (or with smaller) GSO
        break;
      }
      log_os_error(errlog_, q_.counters, q_.name, send_error_.c_str(), err);
      q_.counters->drop(DropReason::tx_error, count_[done]);
      failed_[done] = 1;
      dropped = true;
      ++done;
    }
    if (done == 0) return {};
    const uint32_t consumed = first_[done - 1] + count_[done - 1];
    TxResult r = TxResult::all_sent(pkts, consumed);
    if (dropped)
      for (uint32_t m = 0; m < done; ++m)
        if (failed_[m]) {
          r.sent -= count_[m];
          r.sent_bytes -= packet_bytes(pkts + first_[m], count_[m]);
        }
    return_buffers(q_, pkts, consumed);
    return r;
  }

 private:
  // Fills msgs_ for pkts[0, n); returns the number of messages.
  uint32_t build(Packet* pkts, uint32_t n) noexcept {
    uint32_t nm = 0, v = 0, i = 0;
    while (i < n) {
      const uint32_t size = pkts[i].size();
      uint32_t run = 1;
      if (gso_ && size > 0 && size <= gso_max_size_)
        run = gso_run([pkts](uint32_t k) { return pkts[k].size(); }, i, n, gso_segments_);
      msghdr& h = msgs_[nm].msg_hdr;
      h.msg_iov = &iov_[v];
      for (uint32_t k = i; k < i + run; ++k) {
        const PacketFields& f = fields(pkts[k]);
        for (unsigned s = 0; s < nseg_; ++s) iov_[v++] = {f.data[s], f.len[s]};
      }
      h.msg_iovlen = size_t{run} * nseg_;
      if (run > 1) {
        std::byte* c = ctrl_.get() + size_t{nm} * kCtrlSize;
        const uint16_t seg = static_cast<uint16_t>(size);
        std::memcpy(CMSG_DATA(reinterpret_cast<cmsghdr*>(c)), &seg, sizeof(seg));
        h.msg_control = c;
        h.msg_controllen = kCtrlSize;
      } else {
        h.msg_control = nullptr;
        h.msg_controllen = 0;
      }
      first_[nm] = i;
      count_[nm] = run;
      failed_[nm] = 0;
      ++nm;
      i += run;
    }
    return nm;
  }

  void gso_refused(int err, uint32_t segments) noexcept {
    if (segments > kGsoSegmentsOld && gso_segments_ > kGsoSegmentsOld) {
      gso_segments_ = kGsoSegmentsOld;  // a kernel before 6.9
      log()->debug("{}: kernel takes at most {} GSO segments", q_.name, kGsoSegmentsOld);
      return;
    }
    gso_ = false;
    QueueCounters::add(q_.counters->errors, 1);
    log()->warn("{}: UDP GSO refused by the kernel or the path to {} ({}: {}); sending without GSO", q_.name, dest_,
                errno_name(err), errno_text(err));
  }

  QueueResources q_;
  UniqueFd fd_;
  bool gso_;
  uint32_t gso_segments_ = kGsoSegmentsNew;
  const uint32_t gso_max_size_;  // largest segment the path MTU allows
  const std::string dest_;
  const std::string send_error_;
  const uint32_t slots_;
  const unsigned nseg_;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iov_;
  std::vector<uint32_t> first_, count_;  // packets of each message
  std::vector<uint8_t> failed_;
  std::unique_ptr<std::byte[]> ctrl_;    // one UDP_SEGMENT cmsg per message
  RateLimitedLog errlog_;
};

uint32_t path_mtu(int fd, int family) {
  int mtu = 0;
  socklen_t len = sizeof(mtu);
  const int rc = family == AF_INET ? getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &len)
                                   : getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &len);
  return rc == 0 && mtu > 0 ? static_cast<uint32_t>(mtu) : 1500;
}

}  // namespace

std::unique_ptr<TxPort> open_udp_tx(const QueueResources& q, const SockAddr& dest, const std::string& url,
                                    const std::string& context) {
  const SocketOptions& opt = q.iface->options.get<SocketOptions>();
  UniqueFd fd = open_socket(dest.family(), SOCK_DGRAM, IPPROTO_UDP, context);
  const int s = fd.get();
  set_buffer_size(s, false, opt.sndbuf, context);
  if (dest.is_multicast()) set_multicast_interface(s, dest.family(), opt.multicast_interface, context);
  if (::connect(s, dest.get(), dest.len) != 0) {
    const int err = errno;
    throw_os(err == ENETUNREACH || err == EHOSTUNREACH ? Errc::not_found : Errc::system, context,
             "cannot send to " + url + " (" + dest.to_string() + ")", err,
             err == ENETUNREACH ? ": no route to it from this host (for multicast set socket.multicast_interface)"
                                : "");
  }
  bool gso = false;
  if (opt.gso) {
    if (const int err = set_int(s, SOL_UDP, UDP_SEGMENT, 0))
      log()->debug("{}: UDP GSO not available on this kernel ({}); sending datagram by datagram", context,
                   errno_text(err));
    else
      gso = true;
  }
  const uint32_t ip_header = dest.family() == AF_INET ? 20 : 40;
  const uint32_t mtu = path_mtu(s, dest.family());
  const uint32_t gso_max = mtu > ip_header + 8 ? mtu - ip_header - 8 : 0;
  log()->debug("{}: sending to {} from {} (udp{}, path MTU {})", context, dest.to_string(),
               local_address(s).to_string(), gso ? ", GSO" : "", mtu);
  return std::make_unique<UdpTx>(q, std::move(fd), gso, gso_max, dest.to_string());
}

}  // namespace netdaq::detail::socket_engine
