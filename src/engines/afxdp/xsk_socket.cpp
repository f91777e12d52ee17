#include "engines/afxdp/xsk_socket.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/log.h"
#include "netdaq/status.h"
#include "util/errno_text.h"

namespace netdaq::detail::afxdp {

namespace {

std::string why_failed(int err, const NetdevInfo& dev, uint32_t queue, size_t umem_bytes) {
  err = err < 0 ? -err : err;
  const std::string q = "queue " + std::to_string(queue) + " of '" + dev.name + "'";
  switch (err) {
    case EBUSY:
      return q + " is already used by another AF_XDP socket (another netdaq process, or a tool like xdpsock)";
    case EOPNOTSUPP:
      return "the driver" + (dev.driver.empty() ? std::string() : " '" + dev.driver + "'") +
             " has no AF_XDP zero-copy";
    case EINVAL:
      if (dev.rx_queues > 0 && queue >= static_cast<uint32_t>(dev.rx_queues))
        return q + " does not exist: the NIC has " + std::to_string(dev.rx_queues) + " queues";
      return errno_text(err);
    default:
      return privilege_or_memlock_hint(err, umem_bytes);
  }
}

}  // namespace

XskSocket::XskSocket(const NetdevInfo& dev, uint32_t queue, Umem& umem, bool rx, bool tx, const AfxdpOptions& opts,
                     const std::string& context)
    : queue_(queue), umem_(umem), fill_size_(opts.fill_ring), rx_size_(opts.rx_ring), tx_size_(opts.tx_ring) {
  const int nic_queues = std::max(dev.rx_queues, dev.tx_queues);
  if (nic_queues > 0 && queue >= static_cast<uint32_t>(nic_queues))
    throw Error(Errc::not_found, context + ": queue id " + std::to_string(queue) + " is beyond the queues of '" +
                                     dev.name + "', which has " + std::to_string(nic_queues) +
                                     " (ethtool -l " + dev.name + "; ids 0.." + std::to_string(nic_queues - 1) + ")");
  const size_t umem_bytes = umem.chunk() * umem.pool().capacity();
  const bool first = umem.first_rings_free();
  if (first) umem.take_first_rings(&fill_, &comp_);
  const uint16_t wake = opts.need_wakeup ? XDP_USE_NEED_WAKEUP : 0;
  int err = 0;
  if (!first) {
    err = create(dev, rx, tx, 0);  // binds with XDP_SHARED_UMEM: the first socket's mode and SG
    zero_copy_ = umem.zero_copy;
    need_wakeup_ = umem.need_wakeup;
    multi_buffer_ = umem.multi_buffer;
    sg_refused_ = umem.multi_buffer_refused;
  } else if (opts.mode == XskMode::copy) {
    err = create_sg(dev, rx, tx, XDP_COPY | wake);
  } else {
    err = create_sg(dev, rx, tx, XDP_ZEROCOPY | wake);
    zero_copy_ = err == 0;
    if (err && opts.mode == XskMode::automatic && err != -EBUSY) {
      log()->info("afxdp {} queue {}: zero-copy not available ({}); using copy mode", dev.name, queue,
                  why_failed(err, dev, queue, umem_bytes));
      err = create_sg(dev, rx, tx, XDP_COPY | wake);
    }
  }
  if (err == 0 && first && !multi_buffer_)
    log()->warn("afxdp {} queue {}: multi-buffer AF_XDP refused (XDP_USE_SG: {}): frames larger than one "
                "buffer ({} B less 256 B of XDP headroom) are dropped (xsk_rx_dropped, counted pool_empty)",
                dev.name, queue, sg_refused_, umem.chunk());
  if (err) {
    const bool zc_refused = opts.mode == XskMode::zero_copy && err == -EOPNOTSUPP;
    throw Error(zc_refused ? Errc::unsupported : err == -EINVAL ? Errc::not_found : Errc::system,
                context + ": cannot bind an AF_XDP socket to queue " + std::to_string(queue) + " of '" + dev.name +
                    "': " + why_failed(err, dev, queue, umem_bytes) +
                    (zc_refused ? "; set afxdp.mode: copy (or auto)" : ""));
  }
  if (first) {
    need_wakeup_ = wake != 0;
    umem.zero_copy = zero_copy_;
    umem.need_wakeup = need_wakeup_;
    umem.multi_buffer = multi_buffer_;
    umem.multi_buffer_refused = sg_refused_;
  }
  try {
    set_busy_poll(opts, context);
  } catch (...) {
    xsk_socket__delete(xsk_);
    throw;
  }
}

int XskSocket::create(const NetdevInfo& dev, bool rx, bool tx, uint16_t bind_flags) {
  // A socket closed a moment ago frees its queue from a kernel work item: EBUSY for a few
  // milliseconds after the previous run. Retry that briefly before calling the queue taken.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  int err;
  while ((err = create_once(dev, rx, tx, bind_flags)) == -EBUSY && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return err;
}

// Binds with XDP_USE_SG and, where that is refused (EINVAL: a kernel before 6.6 that does
// not know the flag; EOPNOTSUPP: a driver without multi-buffer zero-copy), without it.
int XskSocket::create_sg(const NetdevInfo& dev, bool rx, bool tx, uint16_t bind_flags) {
  const int err = create(dev, rx, tx, bind_flags | XDP_USE_SG);
  multi_buffer_ = err == 0;
  if (err != -EINVAL && err != -EOPNOTSUPP) return err;
  const int plain = create(dev, rx, tx, bind_flags);
  if (plain == 0) sg_refused_ = errno_text(err);
  return plain;
}

int XskSocket::create_once(const NetdevInfo& dev, bool rx, bool tx, uint16_t bind_flags) {
  xsk_socket_config cfg{};
  cfg.rx_size = rx ? rx_size_ : 0;
  cfg.tx_size = tx ? tx_size_ : 0;
  cfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;  // our own steering program
  cfg.bind_flags = bind_flags;
  return xsk_socket__create_shared(&xsk_, dev.name.c_str(), queue_, umem_.get(), rx ? &rx_ : nullptr,
                                   tx ? &tx_ : nullptr, fill_, comp_, &cfg);
}

void XskSocket::set_busy_poll(const AfxdpOptions& opts, const std::string& context) {
  if (opts.busy_poll_us == 0) return;
  const int fd = xsk_socket__fd(xsk_);
  const int one = 1, us = static_cast<int>(opts.busy_poll_us), budget = static_cast<int>(opts.busy_poll_budget);
  auto set = [&](int opt, int value, const char* name) {
    if (setsockopt(fd, SOL_SOCKET, opt, &value, sizeof value) != 0)
      throw Error(Errc::system, context + ": busy polling: setsockopt(" + name + ") failed: " + errno_text(errno) +
                                    (errno == EPERM ? " (needs CAP_NET_ADMIN)" : ""));
  };
  set(SO_PREFER_BUSY_POLL, one, "SO_PREFER_BUSY_POLL");
  set(SO_BUSY_POLL, us, "SO_BUSY_POLL");
  set(SO_BUSY_POLL_BUDGET, budget, "SO_BUSY_POLL_BUDGET");
  busy_poll_ = true;
}

XskSocket::~XskSocket() {
  if (xsk_) xsk_socket__delete(xsk_);
}

int XskSocket::fd() const noexcept { return xsk_socket__fd(xsk_); }

std::string XskSocket::mode() const {
  std::string m = zero_copy_ ? "zero-copy" : "copy";
  if (need_wakeup_) m += " need_wakeup";
  if (busy_poll_) m += " busy_poll";
  m += multi_buffer_ ? " multi-buffer" : " single-buffer (XDP_USE_SG refused: " + sg_refused_ + ")";
  return m;
}

xdp_statistics XskSocket::statistics() const noexcept {
  xdp_statistics s{};
  socklen_t len = sizeof s;
  if (getsockopt(fd(), SOL_XDP, XDP_STATISTICS, &s, &len) != 0) s = {};
  return s;
}

}  // namespace netdaq::detail::afxdp
