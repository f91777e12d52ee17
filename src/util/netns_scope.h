// Network namespaces are per thread, and ifindexes and netdev names mean something only in
// one namespace. A Session may be destroyed by a thread in another namespace than the one
// that opened it (tests do this; so may applications), so the engines hold on to their
// namespace and tear down from inside it.
#pragma once

#include <functional>

#include "util/unique_fd.h"

namespace netdaq::detail {

// The calling thread's network namespace, held open; invalid when /proc is unavailable.
UniqueFd open_current_netns() noexcept;

// Whether the calling thread is in namespace `ns`; also true when ns is invalid or the
// question cannot be answered (then there is nothing to switch to).
bool in_netns(const UniqueFd& ns) noexcept;

// Moves the calling thread into namespace `ns` for the scope's lifetime and back after.
class NetnsScope {
 public:
  explicit NetnsScope(const UniqueFd& ns) noexcept;
  ~NetnsScope();
  NetnsScope(const NetnsScope&) = delete;
  NetnsScope& operator=(const NetnsScope&) = delete;

  // 0 when the thread is in `ns` now, else the errno of the failed switch.
  int error() const noexcept { return err_; }

 private:
  UniqueFd home_;  // where the thread was; invalid when it did not move
  int err_ = 0;
};

// Runs fn(err) in namespace `ns`: on the calling thread when it is there already, otherwise
// on a short-lived thread that enters it, so the caller's thread never changes namespace.
// err is 0 inside `ns`, or the errno of a failed switch (fn then runs outside it).
void run_in_netns(const UniqueFd& ns, const std::function<void(int err)>& fn) noexcept;

}  // namespace netdaq::detail
