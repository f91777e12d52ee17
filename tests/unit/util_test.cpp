// src/util: the fd owner closes exactly once, the netns scope really switches namespaces and
// back, the hot-path log never runs (formats) its line when it suppresses, errno wording.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

#include "../require_env.h"
#include "core/counters.h"
#include "engines/socket/socket_options.h"
#include "util/errno_text.h"
#include "util/netns_scope.h"
#include "util/rate_limited_log.h"
#include "util/unique_fd.h"

using netdaq::detail::errno_name;
using netdaq::detail::errno_text;
using netdaq::detail::in_netns;
using netdaq::detail::NetnsScope;
using netdaq::detail::open_current_netns;
using netdaq::detail::QueueCounters;
using netdaq::detail::RateLimitedLog;
using netdaq::detail::run_in_netns;
using netdaq::detail::UniqueFd;

namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }
bool is_closed(int fd) { return ::fcntl(fd, F_GETFD) == -1 && errno == EBADF; }
int open_null() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

ino_t inode(const UniqueFd& fd) {
  struct stat st{};
  return ::fstat(fd.get(), &st) == 0 ? st.st_ino : 0;
}

// Runs body on a thread of its own that first moves into a new, empty network namespace
// (unshare), so the test process's own threads never change namespace. Skips (fails with
// CI=true) where namespaces cannot be made: not root, or no CAP_SYS_ADMIN in a container.
void in_fresh_netns_thread(const std::function<void(const UniqueFd& home, const UniqueFd& fresh)>& body) {
  const bool ci = ndqtest::in_ci();
  if (geteuid() != 0) {
    if (ci) FAIL() << "network namespaces need root; CI=true makes this a failure";
    GTEST_SKIP() << "network namespaces need root";
  }
  int unshare_err = 0;
  std::thread([&] {
    UniqueFd home = open_current_netns();
    ASSERT_TRUE(home) << errno_text(errno);
    if (::unshare(CLONE_NEWNET) != 0) {
      unshare_err = errno;
      return;
    }
    UniqueFd fresh = open_current_netns();
    ASSERT_TRUE(fresh);
    body(home, fresh);
  }).join();
  if (unshare_err) {
    if (ci) FAIL() << "unshare(CLONE_NEWNET): " << errno_text(unshare_err);
    GTEST_SKIP() << "cannot make a network namespace: " << errno_text(unshare_err);
  }
}

}  // namespace

// ---- UniqueFd ----

static_assert(!std::is_copy_constructible_v<UniqueFd> && !std::is_copy_assignable_v<UniqueFd>);
static_assert(std::is_nothrow_move_constructible_v<UniqueFd> && std::is_nothrow_move_assignable_v<UniqueFd>);

TEST(UniqueFd, ClosesOnDestruction) {
  int raw;
  {
    UniqueFd fd(open_null());
    raw = fd.get();
    ASSERT_GE(raw, 0);
    EXPECT_TRUE(fd.valid());
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_TRUE(is_closed(raw));
}

TEST(UniqueFd, DefaultHoldsNothing) {
  UniqueFd fd;
  EXPECT_FALSE(fd);
  EXPECT_EQ(fd.get(), -1);
  fd.reset();  // closing nothing is fine
}

TEST(UniqueFd, MoveConstructionTransfersOwnership) {
  UniqueFd a(open_null());
  const int raw = a.get();
  {
    UniqueFd b(std::move(a));
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): checking the moved-from state
    EXPECT_EQ(b.get(), raw);
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_TRUE(is_closed(raw));  // closed once, by the new owner
}

TEST(UniqueFd, MoveAssignmentClosesWhatTheTargetHeld) {
  UniqueFd a(open_null()), b(open_null());
  const int ra = a.get(), rb = b.get();
  b = std::move(a);
  EXPECT_TRUE(is_closed(rb));
  EXPECT_TRUE(is_open(ra));
  EXPECT_EQ(b.get(), ra);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move)
  UniqueFd& same = b;
  b = std::move(same);  // self-move keeps the fd open
  EXPECT_TRUE(is_open(ra));
  b = UniqueFd();
  EXPECT_TRUE(is_closed(ra));
}

TEST(UniqueFd, ResetAndRelease) {
  UniqueFd fd(open_null());
  const int first = fd.get();
  const int second = open_null();
  fd.reset(second);
  EXPECT_TRUE(is_closed(first));
  EXPECT_EQ(fd.get(), second);
  const int given = fd.release();
  EXPECT_EQ(given, second);
  EXPECT_FALSE(fd);
  EXPECT_TRUE(is_open(given));  // released: no longer ours to close
  ::close(given);
}

// ---- errno_text / errno_name ----

TEST(ErrnoText, SystemTextForPositiveAndNegativeErrno) {
  EXPECT_EQ(errno_text(EADDRINUSE), std::string(std::strerror(EADDRINUSE)));
  EXPECT_EQ(errno_text(-EADDRINUSE), errno_text(EADDRINUSE));  // libbpf / DPDK style
  EXPECT_NE(errno_text(99999).find("99999"), std::string::npos);
}

TEST(ErrnoText, SymbolicNameOrNumber) {
  EXPECT_EQ(errno_name(EADDRINUSE), "EADDRINUSE");
  EXPECT_EQ(errno_name(EPERM), "EPERM");
  EXPECT_EQ(errno_name(99999), "errno 99999");
}

// ---- RateLimitedLog ----

static_assert(std::atomic<uint64_t>::is_always_lock_free, "the hot-path log must not lock");

TEST(RateLimitedLog, OneLinePerIntervalCountingTheRest) {
  RateLimitedLog lim(1000);
  uint64_t suppressed = 99;
  EXPECT_TRUE(lim.should_log(&suppressed, 5000));
  EXPECT_EQ(suppressed, 0u);
  for (uint64_t t = 5001; t < 6000; t += 100) EXPECT_FALSE(lim.should_log(&suppressed, t));  // 10 calls
  EXPECT_TRUE(lim.should_log(&suppressed, 6000));
  EXPECT_EQ(suppressed, 10u);
  EXPECT_FALSE(lim.should_log(&suppressed, 6999));
  EXPECT_TRUE(lim.should_log(&suppressed, 1'000'000));
  EXPECT_EQ(suppressed, 1u);
}

TEST(RateLimitedLog, OnceLogsOnlyTheFirst) {
  RateLimitedLog lim(RateLimitedLog::kOnce);
  uint64_t suppressed = 0;
  EXPECT_TRUE(lim.should_log(&suppressed, 123));
  EXPECT_FALSE(lim.should_log(&suppressed, 124));
  EXPECT_FALSE(lim.should_log(&suppressed, UINT64_MAX - 1));  // no overflow back to "now"
  EXPECT_FALSE(lim.should_log(&suppressed));
}

TEST(RateLimitedLog, CallsTheLineOnlyWhenAllowedAndSwallowsItsExceptions) {
  RateLimitedLog lim(3'600'000'000'000ULL);  // an hour: everything after the first is suppressed
  int lines = 0;
  lim.log([&](uint64_t) {
    ++lines;
    throw std::runtime_error("a logger that throws must not escape a noexcept hot path");
  });
  for (int i = 0; i < 100; ++i) lim.log([&](uint64_t) { ++lines; });
  EXPECT_EQ(lines, 1);
}

// The socket engine's error log on the receive/send paths goes through the same limiter.
TEST(RateLimitedLog, SocketErrorsAreCountedEveryTimeAndLoggedOnce) {
  RateLimitedLog lim(3'600'000'000'000ULL);
  QueueCounters counters;
  const std::string queue = "util_test/rx0";
  for (int i = 0; i < 1000; ++i)
    netdaq::detail::socket_engine::log_os_error(lim, &counters, queue, "recvmmsg failed (expected by the test)", EIO);
  EXPECT_EQ(counters.errors.load(), 1000u);
  uint64_t suppressed = 0;
  EXPECT_TRUE(lim.should_log(&suppressed, UINT64_MAX - 1));  // an hour later
  EXPECT_EQ(suppressed, 999u);  // all but the first went by unlogged
}

// ---- network namespaces ----

TEST(NetnsScope, NotANamespaceIsAnErrorAndTheThreadStays) {
  UniqueFd here = open_current_netns();
  ASSERT_TRUE(here);
  UniqueFd null(open_null());
  {
    NetnsScope scope(null);
    EXPECT_EQ(scope.error(), EINVAL);
    EXPECT_TRUE(in_netns(here));
  }
  EXPECT_TRUE(in_netns(here));
}

TEST(NetnsScope, InvalidFdMeansStayHere) {
  UniqueFd none;
  EXPECT_TRUE(in_netns(none));
  NetnsScope scope(none);
  EXPECT_EQ(scope.error(), 0);
}

TEST(NetnsScope, EntersAndRestores) {
  in_fresh_netns_thread([](const UniqueFd& home, const UniqueFd& fresh) {
    ASSERT_NE(inode(home), inode(fresh));
    EXPECT_TRUE(in_netns(fresh));
    EXPECT_FALSE(in_netns(home));
    {
      NetnsScope scope(home);
      EXPECT_EQ(scope.error(), 0);
      EXPECT_TRUE(in_netns(home));
      EXPECT_EQ(inode(open_current_netns()), inode(home));
      {
        NetnsScope nested(home);  // already there: no switch
        EXPECT_EQ(nested.error(), 0);
      }
      EXPECT_TRUE(in_netns(home));
    }
    EXPECT_TRUE(in_netns(fresh));  // back where it was
    EXPECT_EQ(inode(open_current_netns()), inode(fresh));
  });
}

TEST(NetnsScope, RunInNetnsLeavesTheCallerWhereItIs) {
  in_fresh_netns_thread([](const UniqueFd& home, const UniqueFd& fresh) {
    const auto caller = std::this_thread::get_id();
    int calls = 0;
    run_in_netns(home, [&](int err) {
      ++calls;
      EXPECT_EQ(err, 0);
      EXPECT_TRUE(in_netns(home));
      EXPECT_NE(std::this_thread::get_id(), caller);  // another thread did the switching
    });
    EXPECT_TRUE(in_netns(fresh));
    run_in_netns(fresh, [&](int err) {
      ++calls;
      EXPECT_EQ(err, 0);
      EXPECT_EQ(std::this_thread::get_id(), caller);  // already there: runs right here
    });
    run_in_netns(UniqueFd(), [&](int err) {
      ++calls;
      EXPECT_EQ(err, 0);
      EXPECT_EQ(std::this_thread::get_id(), caller);
    });
    EXPECT_EQ(calls, 3);
    EXPECT_TRUE(in_netns(fresh));
  });
}

TEST(NetnsScope, RunInNetnsReportsAFailedSwitch) {
  UniqueFd null(open_null());
  UniqueFd here = open_current_netns();
  int seen = -1;
  run_in_netns(null, [&](int err) {
    seen = err;
    EXPECT_TRUE(in_netns(here));
  });
  EXPECT_EQ(seen, EINVAL);
}
