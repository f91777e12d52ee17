// A receiver that goes away mid-stream, destroyed in-process or a forked receiver process
// killed with SIGKILL: the sink counts what was in flight as in_flight_lost and what it is then
// given as peer_down, and reconnects by itself to a new receiver on the same port.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "fleet_test_util.h"

namespace {

using namespace fleettest;

class fleet_reconnect : public Transports {};

// Sends frames until `count` of them are in flight or acked; returns how many it sent.
void send_frames(FrameSink& sink, uint64_t first, uint64_t count, std::span<const std::byte> bytes) {
  for (uint64_t f = first; f < first + count; ++f) sink.send({.frame = f, .bytes = bytes, .token = f});
}

TEST_P(fleet_reconnect, ReceiverDestroyedMidStreamThenANewOneOnTheSamePort) {
  auto rx = std::make_unique<FrameReceiver>(ReceiverConfig{.listen = loopback(0), .max_bytes = 1 << 17,
                                                           .buffers = 8, .transport = GetParam()});
  const uint16_t port = rx->port();
  FrameSink sink({.destinations = {loopback(port)}, .credits = 4, .reconnect_ms = 100, .transport = GetParam()});
  auto step = [&] {
    sink.progress();
    if (rx) rx->progress();
  };
  ASSERT_TRUE(pump_until(step, [&] { return sink.stats().total.connected; }));
  auto bytes = pattern(0, 100000);
  send_frames(sink, 0, 3, bytes);  // held by the application: never released
  ASSERT_TRUE(pump_until(step, [&] { return rx->stats().placed == 3; }));
  rx.reset();
  ASSERT_TRUE(pump_until(step, [&] { return sink.stats().total.disconnects == 1; }, 5000));
  SinkStats s = sink.stats();
  expect_invariant(s);
  EXPECT_FALSE(s.total.connected);
  EXPECT_EQ(s.total.in_flight_lost, 3u);
  EXPECT_EQ(s.total.in_flight, 0u);
  send_frames(sink, 3, 2, bytes);
  s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.peer_down, 2u);
  uint64_t token;
  int tokens = 0;
  while (sink.done(token)) ++tokens;
  EXPECT_EQ(tokens, 5);  // every frame's bytes are free again
  // A new receiver on the same port: the sink finds it on its own.
  rx = std::make_unique<FrameReceiver>(ReceiverConfig{.listen = loopback(port), .max_bytes = 1 << 17,
                                                      .buffers = 8, .transport = GetParam()});
  ASSERT_TRUE(pump_until(step, [&] { return sink.stats().total.connected; }, 5000));
  send_frames(sink, 5, 3, bytes);
  InFrame in;
  int got = 0;
  ASSERT_TRUE(pump_until(step, [&] {
    while (rx->pop(in)) {
      EXPECT_EQ(std::memcmp(in.bytes.data(), bytes.data(), bytes.size()), 0);
      rx->release(in);
      ++got;
    }
    return got == 3;
  }));
  ASSERT_TRUE(sink.drain(3000));
  s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.connects, 2u);
  EXPECT_EQ(s.total.acked, 3u);
  EXPECT_EQ(s.total.fragments, 8u);
}

// A receiver in a child process: reports its port on `fd`, then takes frames (releasing them
// when `release`) until killed or 10 s passed.
[[noreturn]] void receiver_process(Transport t, uint16_t port, bool release, int fd) {
  int rc = 0;
  try {
    FrameReceiver rx({.listen = loopback(port), .max_bytes = 1 << 17, .buffers = 8, .transport = t});
    const uint16_t p = rx.port();
    if (write(fd, &p, sizeof p) != sizeof p) _exit(3);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < end) {
      rx.progress();
      InFrame in;
      while (release && rx.pop(in)) rx.release(in);
    }
  } catch (...) {
    rc = 2;
  }
  _exit(rc);
}

// Receiver processes are forked by a helper process forked before this process has a UCX
// worker: a child forked beside a live worker (its async thread) cannot use UCX.
class Zygote {
 public:
  explicit Zygote(Transport t) {
    int cmd[2], reply[2];
    if (pipe(cmd) != 0 || pipe(reply) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(cmd[1]);
      close(reply[0]);
      serve(t, cmd[0], reply[1]);
    }
    close(cmd[0]);
    close(reply[1]);
    cmd_ = cmd[1];
    reply_ = reply[0];
  }
  ~Zygote() {
    close(cmd_);  // the helper ends when its command pipe closes
    close(reply_);
    int status;
    if (pid_ > 0) waitpid(pid_, &status, 0);
  }
  // A receiver process on `port`; pid and bound port, or pid -1.
  pid_t spawn(uint16_t port, bool release, uint16_t& bound) {
    uint32_t req = port | (release ? 0x10000u : 0u);
    if (write(cmd_, &req, sizeof req) != sizeof req) return -1;
    int32_t answer[2] = {-1, 0};
    if (read(reply_, answer, sizeof answer) != sizeof answer) return -1;
    bound = static_cast<uint16_t>(answer[1]);
    return answer[0];
  }

 private:
  [[noreturn]] static void serve(Transport t, int cmd, int reply) {
    uint32_t req;
    while (read(cmd, &req, sizeof req) == sizeof req) {
      int fds[2];
      int32_t answer[2] = {-1, 0};
      if (pipe(fds) == 0) {
        const pid_t pid = fork();
        if (pid == 0) {
          close(fds[0]);
          receiver_process(t, uint16_t(req & 0xffff), (req & 0x10000u) != 0, fds[1]);
        }
        close(fds[1]);
        uint16_t bound = 0;
        if (pid > 0 && read(fds[0], &bound, sizeof bound) == sizeof bound) answer[0] = pid;
        answer[1] = bound;
        close(fds[0]);
      }
      if (write(reply, answer, sizeof answer) != sizeof answer) break;
      while (waitpid(-1, nullptr, WNOHANG) > 0) {
      }
    }
    while (waitpid(-1, nullptr, 0) > 0) {  // the receivers were killed by the test (or time out)
    }
    _exit(0);
  }
  pid_t pid_ = -1;
  int cmd_ = -1, reply_ = -1;
};

TEST_P(fleet_reconnect, ReceiverProcessKilledThenRestarted) {
  Zygote zygote(GetParam());
  uint16_t port = 0;
  pid_t first = zygote.spawn(0, false, port);
  ASSERT_GT(first, 0);
  FrameSink sink({.destinations = {loopback(port)}, .credits = 4, .reconnect_ms = 100, .transport = GetParam()});
  auto step = [&] { sink.progress(); };
  ASSERT_TRUE(pump_until(step, [&] { return sink.stats().total.connected; }));
  auto bytes = pattern(1, 100000);
  send_frames(sink, 0, 6, bytes);  // 4 in flight (never released), 2 without credit
  ASSERT_TRUE(sink.drain(300) == false);
  SinkStats s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.in_flight, 4u);
  EXPECT_EQ(s.total.no_credit, 2u);
  kill(first, SIGKILL);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(pump_until(step, [&] { return sink.stats().total.disconnects == 1; }, 5000));
  const auto noticed = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(noticed, std::chrono::seconds(2));
  s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.in_flight_lost, 4u);
  send_frames(sink, 6, 1, bytes);
  EXPECT_EQ(sink.stats().total.peer_down, 1u);

  uint16_t again = 0;
  pid_t second = zygote.spawn(port, true, again);
  ASSERT_GT(second, 0);
  EXPECT_EQ(again, port);
  ASSERT_TRUE(pump_until(step, [&] { return sink.stats().total.connected; }, 5000));
  send_frames(sink, 7, 3, bytes);
  EXPECT_TRUE(sink.drain(5000));
  s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.acked, 3u);
  EXPECT_EQ(s.total.connects, 2u);
  kill(second, SIGKILL);
}

// A builder named by a host name is looked up at every attempt: one whose name does not resolve
// (yet) is down, counted peer_down, and not a setup error; a name that resolves connects.
TEST_P(fleet_reconnect, ADestinationNameIsLookedUpAtEveryAttempt) {
  FrameSink sink({.destinations = {Address{"builder-not-there-yet.invalid", 13337}}, .credits = 2,
                  .reconnect_ms = 50, .transport = GetParam()});
  auto bytes = pattern(0, 4096);
  send_frames(sink, 0, 3, bytes);
  SinkStats s = sink.stats();
  expect_invariant(s);
  EXPECT_EQ(s.total.peer_down, 3u);
  EXPECT_EQ(s.total.connects, 0u);
  FrameReceiver rx(ReceiverConfig{.listen = loopback(0), .max_bytes = 1 << 16, .buffers = 4, .transport = GetParam()});
  FrameSink named({.destinations = {Address{"localhost", rx.port()}}, .credits = 2, .reconnect_ms = 50,
                   .transport = GetParam()});
  auto step = [&] {
    named.progress();
    rx.progress();
  };
  ASSERT_TRUE(pump_until(step, [&] { return named.stats().total.connected; }));
  send_frames(named, 0, 1, bytes);
  InFrame in;
  ASSERT_TRUE(pump_until(step, [&] { return rx.pop(in); }));
  EXPECT_EQ(in.meta.frame, 0u);
  rx.release(in);
}

INSTANTIATE_TEST_SUITE_P(fleet, fleet_reconnect, ::testing::Values(Transport::tcp, Transport::shm), transport_name);

}  // namespace
