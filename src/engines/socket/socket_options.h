// Socket engine: sockets, setsockopt helpers that throw clear setup errors, and the
// rate-limited error log of the hot path.
#pragma once

#include <cstdint>
#include <string>

#include "core/counters.h"
#include "engines/socket/address.h"
#include "netdaq/config.h"
#include "netdaq/engines/socket.h"
#include "netdaq/status.h"
#include "util/rate_limited_log.h"
#include "util/unique_fd.h"

namespace netdaq::detail::socket_engine {

// What a setup error message starts with: "interface 'x' rx queue 'x/rx0'".
std::string queue_context(const std::string& iface, const std::string& queue, bool rx);

// Throws Error(code) "<context>: <what>: <strerror> (<ERRNAME>)<hint>".
[[noreturn]] void throw_os(Errc code, const std::string& context, const std::string& what, int err,
                           const std::string& hint = "");

// A non-blocking, close-on-exec socket. Throws on failure.
UniqueFd open_socket(int family, int type, int protocol, const std::string& context);

// setsockopt of an int; returns 0 or the errno.
int set_int(int fd, int level, int name, int value) noexcept;
// setsockopt of an int or throw "cannot set <what>".
void set_int_or_throw(int fd, int level, int name, int value, const char* what, const std::string& context);

// SO_RCVBUF / SO_SNDBUF: tries the *FORCE variant first (root / CAP_NET_ADMIN may exceed
// net.core.[rw]mem_max), falls back silently to the plain option, and warns when the kernel
// granted less than asked. Returns the size the kernel reports.
int set_buffer_size(int fd, bool receive, uint32_t bytes, const std::string& context);

// SO_BUSY_POLL (microseconds). Throws a permission error that says what is needed.
void set_busy_poll(int fd, uint32_t usec, const std::string& context);

// Index of a network interface; throws Error(not_found) naming it when it does not exist.
unsigned interface_index(const std::string& ifname, const std::string& context, const char* key);

// Joins the multicast group `group` on interface `ifname` ("" = the kernel's choice).
void join_multicast(int fd, const SockAddr& group, const std::string& ifname, const std::string& context);
// Sends multicast through `ifname` (IP_MULTICAST_IF / IPV6_MULTICAST_IF).
void set_multicast_interface(int fd, int family, const std::string& ifname, const std::string& context);

// bind() with errors that say what is wrong: the port held by another process
// (EADDRINUSE), an address that is not on this host (EADDRNOTAVAIL), a privileged port
// (EACCES). `url` is the address as configured.
void bind_or_throw(int fd, const SockAddr& addr, const std::string& url, const std::string& context);

// Throws the EADDRINUSE error of bind_or_throw when another socket (also one that set
// SO_REUSEPORT, e.g. a second netdaq) already holds addr.
void check_address_free(const SockAddr& addr, int type, const std::string& url, const std::string& context);

// The kernel's drop counter of a socket (SO_MEMINFO, SK_MEMINFO_DROPS); -1 if unavailable.
int64_t socket_drops(int fd) noexcept;

// Logs "<queue>: <what>: <strerror> (<ERRNAME>)" at error level through `limiter` (at most
// one line per interval, saying how many were suppressed) and counts it in counters->errors.
void log_os_error(RateLimitedLog& limiter, QueueCounters* counters, const std::string& queue, const char* what,
                  int err) noexcept;

}  // namespace netdaq::detail::socket_engine
