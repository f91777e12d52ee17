#include "rtp_arrivals.h"

#include <sys/socket.h>
#include <time.h>

#include <cstring>

namespace ndqtest {

std::vector<netdaq::sensors::St2110Arrival> receive_rtp_arrivals(int fd, size_t count,
                                                                std::chrono::steady_clock::time_point deadline,
                                                                const std::atomic<bool>* done) {
  int on = 1;
  timeval tv{0, 100'000};
  ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::vector<netdaq::sensors::St2110Arrival> a;
  a.reserve(count);
  std::vector<unsigned char> buf(9000);
  int idle = 0;
  while (a.size() < count && std::chrono::steady_clock::now() < deadline && idle < 3) {
    iovec iov{buf.data(), buf.size()};
    alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(timespec))];
    msghdr h{};
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    h.msg_control = ctrl;
    h.msg_controllen = sizeof ctrl;
    const ssize_t n = ::recvmsg(fd, &h, 0);
    if (n < 12) {  // the receive timeout, or a runt
      if (done && *done) ++idle;
      continue;
    }
    uint64_t t = 0;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
        timespec ts;
        std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
        t = uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
      }
    a.push_back({uint32_t(buf[4]) << 24 | uint32_t(buf[5]) << 16 | uint32_t(buf[6]) << 8 | buf[7], t});
  }
  return a;
}

int64_t tai_minus_realtime_ns() {
  timespec r{}, t{};
  clock_gettime(CLOCK_REALTIME, &r);
  clock_gettime(CLOCK_TAI, &t);
  return (int64_t(t.tv_sec) - r.tv_sec) * 1'000'000'000 + (t.tv_nsec - r.tv_nsec);
}

void to_tai(std::vector<netdaq::sensors::St2110Arrival>& a) {
  const int64_t off = tai_minus_realtime_ns();
  for (auto& x : a) x.tai_ns += static_cast<uint64_t>(off);
}

}  // namespace ndqtest
