// The kernel's part of a UDP socket receive alone, a floor for any socket receiver: recvmmsg of
// 16 messages of 64 KiB with UDP_GRO (coalesced datagrams land back to back), datagrams counted,
// nothing else done. Shared by bench/st2110.cpp's (k) and bench/gro_drain.cpp's (k).
#pragma once

#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#ifndef UDP_GRO
#define UDP_GRO 104
#endif

namespace ndqbench {

class GroFloor {
 public:
  explicit GroFloor(int fd) : fd_(fd), buf_(size_t(kMsgs) * kMsgBytes) {  // takes fd
    const int one = 1;
    setsockopt(fd_, SOL_UDP, UDP_GRO, &one, sizeof one);
    for (unsigned i = 0; i < kMsgs; ++i) {
      iov_[i] = {buf_.data() + size_t(i) * kMsgBytes, kMsgBytes};
      msgs_[i] = {};
      msgs_[i].msg_hdr.msg_iov = &iov_[i];
      msgs_[i].msg_hdr.msg_iovlen = 1;
      msgs_[i].msg_hdr.msg_control = ctrl_[i];
    }
  }
  ~GroFloor() { close(fd_); }
  GroFloor(const GroFloor&) = delete;
  GroFloor& operator=(const GroFloor&) = delete;
  int fd() const { return fd_; }

  // One recvmmsg: the datagrams it took (0: none waiting).
  uint64_t receive() {
    for (unsigned i = 0; i < kMsgs; ++i) msgs_[i].msg_hdr.msg_controllen = sizeof ctrl_[i];
    const int r = recvmmsg(fd_, msgs_, kMsgs, MSG_DONTWAIT, nullptr);
    uint64_t datagrams = 0;
    if (r > 0) messages_ += uint64_t(r);
    for (int i = 0; i < r; ++i) {
      int gso = 0;
      for (cmsghdr* h = CMSG_FIRSTHDR(&msgs_[i].msg_hdr); h; h = CMSG_NXTHDR(&msgs_[i].msg_hdr, h))
        if (h->cmsg_level == SOL_UDP && h->cmsg_type == UDP_GRO) std::memcpy(&gso, CMSG_DATA(h), sizeof gso);
      const uint32_t len = msgs_[i].msg_len;
      datagrams += gso > 0 ? (len + uint32_t(gso) - 1) / uint32_t(gso) : 1;
    }
    datagrams_ += datagrams;
    return datagrams;
  }
  // Messages and datagrams received so far: datagrams / messages is how much GRO coalesced.
  uint64_t messages() const { return messages_; }
  uint64_t datagrams() const { return datagrams_; }

  // Receives until n datagrams came or none for `idle`: the datagrams received.
  uint64_t drain(uint64_t n, std::chrono::milliseconds idle) {
    uint64_t received = 0;
    auto last = std::chrono::steady_clock::now();
    while (received < n) {
      const uint64_t got = receive();
      if (got == 0) {
        if (std::chrono::steady_clock::now() - last > idle) break;
        continue;
      }
      received += got;
      last = std::chrono::steady_clock::now();
    }
    return received;
  }

 private:
  static constexpr unsigned kMsgs = 16;
  static constexpr size_t kMsgBytes = 65536;
  int fd_;
  uint64_t messages_ = 0, datagrams_ = 0;
  std::vector<std::byte> buf_;
  iovec iov_[kMsgs]{};
  mmsghdr msgs_[kMsgs]{};
  alignas(cmsghdr) char ctrl_[kMsgs][64]{};
};

}  // namespace ndqbench
