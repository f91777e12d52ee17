#include "util/errno_text.h"

#include <cerrno>
#include <cstring>

namespace netdaq::detail {

namespace {
// strerror_r is the GNU one (returns the text) or the XSI one (fills buf): take either.
[[maybe_unused]] const char* text_of(const char* gnu, const char*) { return gnu; }
[[maybe_unused]] const char* text_of(int xsi, const char* buf) { return xsi == 0 ? buf : "Unknown error"; }
}  // namespace

std::string errno_text(int err) {
  if (err < 0) err = -err;
  char buf[256] = {};
  return text_of(strerror_r(err, buf, sizeof buf), buf);
}

std::string errno_name(int err) {
  if (err < 0) err = -err;
  switch (err) {
#define NETDAQ_ERRNO_CASE(e) \
  case e: return #e;
    NETDAQ_ERRNO_CASE(EADDRINUSE)
    NETDAQ_ERRNO_CASE(EADDRNOTAVAIL)
    NETDAQ_ERRNO_CASE(EACCES)
    NETDAQ_ERRNO_CASE(EPERM)
    NETDAQ_ERRNO_CASE(ENODEV)
    NETDAQ_ERRNO_CASE(ENOBUFS)
    NETDAQ_ERRNO_CASE(ENOMEM)
    NETDAQ_ERRNO_CASE(EINVAL)
    NETDAQ_ERRNO_CASE(ENOPROTOOPT)
    NETDAQ_ERRNO_CASE(EAFNOSUPPORT)
    NETDAQ_ERRNO_CASE(ENETUNREACH)
    NETDAQ_ERRNO_CASE(EHOSTUNREACH)
    NETDAQ_ERRNO_CASE(ECONNREFUSED)
    NETDAQ_ERRNO_CASE(ECONNRESET)
    NETDAQ_ERRNO_CASE(EPIPE)
    NETDAQ_ERRNO_CASE(EMSGSIZE)
    NETDAQ_ERRNO_CASE(ETIMEDOUT)
    NETDAQ_ERRNO_CASE(EMFILE)
    NETDAQ_ERRNO_CASE(ENFILE)
    NETDAQ_ERRNO_CASE(EIO)
#undef NETDAQ_ERRNO_CASE
    default: return "errno " + std::to_string(err);
  }
}

}  // namespace netdaq::detail
