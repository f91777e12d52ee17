// A two-namespace network lab for integration tests: namespaces A and B (unique names with
// the test process's pid) joined by a veth pair carrying IPv4 and IPv6 addresses. Code runs
// "inside" a namespace on a thread of its own (setns on that thread), so sockets it opens
// live there. Everything is removed in the destructor, also when a test fails; labs left
// by a crashed test process are removed by the next lab.
//
//   NetnsLab lab;                                   // needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN)
//   auto rx = lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(cfg); });
//   lab.run_in(lab.b().ns, [&] { ... send to lab.a().ip4 ... });
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <span>
#include <string>
#include <vector>

namespace ndqtest {

class NetnsLab {
 public:
  struct Side {
    std::string ns;    // namespace name (/run/netns/<ns>)
    std::string veth;  // its end of the veth pair
    std::string ip4;   // e.g. 10.199.3.1 (/24)
    std::string ip6;   // e.g. fd00:199:3::1 (/64, nodad)
  };

  // Creates the namespaces, the veth pair (with `queues` rx and tx queues per end),
  // addresses, links up. Throws std::runtime_error (with the failing command and its
  // output) and removes what it made.
  explicit NetnsLab(unsigned queues = 1);
  ~NetnsLab();
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  const Side& a() const { return a_; }
  const Side& b() const { return b_; }

  // Runs f on a new thread inside namespace ns; returns its result, rethrows its exception.
  template <class F>
  auto run_in(const std::string& ns, F&& f) -> decltype(f()) {
    return async_in(ns, std::forward<F>(f)).get();
  }
  // The same, asynchronously (the future's destructor waits for the thread).
  template <class F>
  auto async_in(const std::string& ns, F f) -> std::future<decltype(f())> {
    return std::async(std::launch::async, [ns, f = std::move(f)]() mutable {
      enter(ns);
      return f();
    });
  }

  // Runs argv inside namespace ns (nsenter --net); returns the exit status, output in *out.
  int exec_in(const std::string& ns, const std::vector<std::string>& argv, std::string* out = nullptr) const;

  // The MAC address of a side's veth ("aa:bb:cc:dd:ee:ff").
  std::string mac(const Side& s) const;
  // Both veth ends at `mtu` (jumbo frames). Throws std::runtime_error.
  void set_mtu(int mtu) const;

  // Moves the calling thread into namespace ns. Throws std::runtime_error.
  static void enter(const std::string& ns);
  // True when labs can be made here (root, `ip` present); otherwise *why says what is missing.
  static bool supported(std::string* why);

 private:
  void teardown() noexcept;
  Side a_, b_;
  bool made_a_ = false, made_b_ = false;
};

// Runs argv (no shell), waits; returns the exit status (or -1), stdout+stderr in *out.
int run_command(const std::vector<std::string>& argv, std::string* out = nullptr);

// A MAC address's text ("aa:bb:cc:dd:ee:ff", as NetnsLab::mac gives it) as bytes. Throws
// std::runtime_error for text that is no MAC.
std::array<uint8_t, 6> mac_bytes(const std::string& text);

// A non-blocking AF_PACKET socket, made in side's namespace and bound to its veth, for frames
// of ethertype `protocol` (host order: ETH_P_IP, ETH_P_ALL), its receive buffer forced to
// `rcvbuf` bytes (SO_RCVBUFFORCE) so that every frame of a test can wait there. The caller
// closes it. Throws std::runtime_error.
int open_capture(NetnsLab& lab, const NetnsLab::Side& side, uint16_t protocol, int rcvbuf);

// Reads a capture socket (open_capture) until `count` frames that `keep` accepts came or
// `timeout` passed, then 50 ms more to catch extras. Returns the kept frames (up to 9000
// bytes each) in arrival order.
std::vector<std::vector<std::byte>> capture_frames(int fd, size_t count, std::chrono::milliseconds timeout,
                                                   const std::function<bool(std::span<const std::byte>)>& keep);

}  // namespace ndqtest
