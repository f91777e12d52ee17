#include "engines/socket/socket_options.h"

#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/sock_diag.h>

#include <cerrno>

#include "core/log.h"
#include "util/errno_text.h"

namespace netdaq::detail::socket_engine {

std::string queue_context(const std::string& iface, const std::string& queue, bool rx) {
  return "interface '" + iface + "' " + (rx ? "rx" : "tx") + " queue '" + queue + "'";
}

void throw_os(Errc code, const std::string& context, const std::string& what, int err, const std::string& hint) {
  throw Error(code, context + ": " + what + ": " + errno_text(err) + " (" + errno_name(err) + ")" + hint);
}

UniqueFd open_socket(int family, int type, int protocol, const std::string& context) {
  const int fd = ::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
  if (fd < 0) {
    const int err = errno;
    std::string hint;
    if (err == EAFNOSUPPORT) hint = ": IPv6 is disabled on this host";
    if (err == EMFILE || err == ENFILE) hint = ": too many open files (raise ulimit -n)";
    throw_os(err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM ? Errc::resource : Errc::system,
             context, family == AF_INET6 ? "cannot create an IPv6 socket" : "cannot create a socket", err, hint);
  }
  return UniqueFd(fd);
}

int set_int(int fd, int level, int name, int value) noexcept {
  return ::setsockopt(fd, level, name, &value, sizeof(value)) == 0 ? 0 : errno;
}

void set_int_or_throw(int fd, int level, int name, int value, const char* what, const std::string& context) {
  if (const int err = set_int(fd, level, name, value))
    throw_os(Errc::system, context,
             std::string("cannot set ") + what + " = " + std::to_string(value), err);
}

int set_buffer_size(int fd, bool receive, uint32_t bytes, const std::string& context) {
  const int value = bytes > static_cast<uint32_t>(INT32_MAX / 2) ? INT32_MAX / 2 : static_cast<int>(bytes);
  if (value > 0) {
    const int force = receive ? SO_RCVBUFFORCE : SO_SNDBUFFORCE;
    const int plain = receive ? SO_RCVBUF : SO_SNDBUF;
    if (set_int(fd, SOL_SOCKET, force, value) != 0) {  // not root: silently the plain option
      if (const int err = set_int(fd, SOL_SOCKET, plain, value))
        throw_os(Errc::system, context, std::string("cannot set ") + (receive ? "SO_RCVBUF" : "SO_SNDBUF"), err);
    }
  }
  int got = 0;
  socklen_t len = sizeof(got);
  getsockopt(fd, SOL_SOCKET, receive ? SO_RCVBUF : SO_SNDBUF, &got, &len);
  // The kernel doubles the value it is given (bookkeeping overhead) and reports the double.
  if (value > 0 && got / 2 < value)
    log()->warn("{}: {} is {} bytes, less than the {} asked for (limited by net.core.{}; run as root or raise it "
                "with sysctl)",
                context, receive ? "SO_RCVBUF" : "SO_SNDBUF", got / 2, value, receive ? "rmem_max" : "wmem_max");
  return got;
}

void set_busy_poll(int fd, uint32_t usec, const std::string& context) {
  if (usec == 0) return;
  if (const int err = set_int(fd, SOL_SOCKET, SO_BUSY_POLL, static_cast<int>(usec)))
    throw_os(Errc::system, context, "cannot set SO_BUSY_POLL = " + std::to_string(usec) + " us", err,
             err == EPERM ? ": busy polling above net.core.busy_read needs CAP_NET_ADMIN (run as root, or set "
                            "socket.busy_poll_us: 0)"
                          : "");
}

unsigned interface_index(const std::string& ifname, const std::string& context, const char* key) {
  const unsigned idx = if_nametoindex(ifname.c_str());
  if (idx == 0) {
    std::string names;
    if (struct if_nameindex* list = if_nameindex()) {
      for (struct if_nameindex* p = list; p->if_index != 0; ++p) names += (names.empty() ? "" : ", ") + std::string(p->if_name);
      if_freenameindex(list);
    }
    throw Error(Errc::not_found, context + ": " + key + " '" + ifname +
                                     "': no such network interface on this host (interfaces here: " + names + ")");
  }
  return idx;
}

void join_multicast(int fd, const SockAddr& group, const std::string& ifname, const std::string& context) {
  const unsigned idx = ifname.empty() ? 0 : interface_index(ifname, context, "socket.multicast_interface");
  const std::string on = ifname.empty() ? "" : " on " + ifname;
  if (group.family() == AF_INET) {
    ip_mreqn mreq{};
    mreq.imr_multiaddr = reinterpret_cast<const sockaddr_in*>(&group.ss)->sin_addr;
    mreq.imr_ifindex = static_cast<int>(idx);
    if (::setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) != 0) {
      const int err = errno;
      throw_os(Errc::system, context, "cannot join multicast group " + group.to_string() + on, err,
               err == ENODEV ? ": no route for the group; set socket.multicast_interface" : "");
    }
  } else {
    ipv6_mreq mreq{};
    mreq.ipv6mr_multiaddr = reinterpret_cast<const sockaddr_in6*>(&group.ss)->sin6_addr;
    mreq.ipv6mr_interface = idx;
    if (::setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mreq, sizeof(mreq)) != 0) {
      const int err = errno;
      throw_os(Errc::system, context, "cannot join multicast group " + group.to_string() + on, err,
               err == ENODEV ? ": no route for the group; set socket.multicast_interface" : "");
    }
  }
}

void set_multicast_interface(int fd, int family, const std::string& ifname, const std::string& context) {
  if (ifname.empty()) return;
  const unsigned idx = interface_index(ifname, context, "socket.multicast_interface");
  int rc;
  if (family == AF_INET) {
    ip_mreqn mreq{};
    mreq.imr_ifindex = static_cast<int>(idx);
    rc = ::setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &mreq, sizeof(mreq));
  } else {
    const int i = static_cast<int>(idx);
    rc = ::setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &i, sizeof(i));
  }
  if (rc != 0) throw_os(Errc::system, context, "cannot send multicast through " + ifname, errno);
}

namespace {
[[noreturn]] void throw_bind_error(int err, const SockAddr& addr, const std::string& url, const std::string& context) {
  const std::string what = "cannot bind " + url + " (" + addr.to_string() + ")";
  switch (err) {
    case EADDRINUSE:
      throw_os(Errc::resource, context, what, err,
               ": the port is in use: another process (or another netdaq session) holds " + addr.to_string() +
                   "; stop it or choose another port (ss -lunp / ss -ltnp shows who)");
    case EADDRNOTAVAIL:
      throw_os(Errc::not_found, context, what, err,
               ": this address is not an address of this host (ip addr shows the host's addresses; use 0.0.0.0 or "
               "[::] to listen on all)");
    case EACCES:
    case EPERM:
      throw_os(Errc::system, context, what, err,
               ": permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)");
    default:
      throw_os(Errc::system, context, what, err);
  }
}
}  // namespace

void bind_or_throw(int fd, const SockAddr& addr, const std::string& url, const std::string& context) {
  if (::bind(fd, addr.get(), addr.len) != 0) throw_bind_error(errno, addr, url, context);
}

void check_address_free(const SockAddr& addr, int type, const std::string& url, const std::string& context) {
  UniqueFd probe = open_socket(addr.family(), type, 0, context);
  // TCP: ignore connections in TIME_WAIT (the real listener sets SO_REUSEADDR too).
  if (type == SOCK_STREAM) set_int(probe.get(), SOL_SOCKET, SO_REUSEADDR, 1);
  if (::bind(probe.get(), addr.get(), addr.len) != 0) throw_bind_error(errno, addr, url, context);
}

int64_t socket_drops(int fd) noexcept {
  uint32_t mem[SK_MEMINFO_VARS] = {};
  socklen_t len = sizeof(mem);
  if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) != 0 || len <= SK_MEMINFO_DROPS * sizeof(uint32_t)) return -1;
  return mem[SK_MEMINFO_DROPS];
}

void log_os_error(RateLimitedLog& limiter, QueueCounters* counters, const std::string& queue, const char* what,
                  int err) noexcept {
  QueueCounters::add(counters->errors, 1);
  limiter.log([&](uint64_t suppressed) {
    if (suppressed)
      log()->error("{}: {}: {} ({}) [{} similar errors suppressed]", queue, what, errno_text(err), errno_name(err),
                   suppressed);
    else
      log()->error("{}: {}: {} ({})", queue, what, errno_text(err), errno_name(err));
  });
}

}  // namespace netdaq::detail::socket_engine
