#include "util/netns_scope.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>

#include <cerrno>
#include <thread>

namespace netdaq::detail {

namespace {
constexpr const char* kOwnNetns = "/proc/thread-self/ns/net";  // the thread's, not the process's
}  // namespace

UniqueFd open_current_netns() noexcept { return UniqueFd(::open(kOwnNetns, O_RDONLY | O_CLOEXEC)); }

bool in_netns(const UniqueFd& ns) noexcept {
  struct stat mine{}, theirs{};
  if (!ns || ::fstat(ns.get(), &theirs) != 0 || ::stat(kOwnNetns, &mine) != 0) return true;
  return mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev;
}

NetnsScope::NetnsScope(const UniqueFd& ns) noexcept {
  if (in_netns(ns)) return;
  home_ = open_current_netns();
  if (!home_) {  // without a way back the thread must not leave
    err_ = errno;
    return;
  }
  if (::setns(ns.get(), CLONE_NEWNET) != 0) {
    err_ = errno;
    home_.reset();
  }
}

NetnsScope::~NetnsScope() {
  // Going back into the namespace the thread came from needs no more rights than leaving it.
  if (home_) ::setns(home_.get(), CLONE_NEWNET);
}

void run_in_netns(const UniqueFd& ns, const std::function<void(int err)>& fn) noexcept {
  if (in_netns(ns)) {
    fn(0);
    return;
  }
  std::thread([&] {
    NetnsScope scope(ns);
    fn(scope.error());
  }).join();
}

}  // namespace netdaq::detail
