#include "signals.h"

#include <signal.h>
#include <unistd.h>

namespace netdaq::cli {

namespace {
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int sig) {
  if (g_signal.exchange(sig) != 0) {
    constexpr char msg[] = "\nnetdaq: second signal, exiting now\n";
    [[maybe_unused]] auto r = write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(130);
  }
}
}  // namespace

void install_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // TCP peers going away must not kill the process
}

bool stop_requested() noexcept { return g_signal.load(std::memory_order_relaxed) != 0; }
int stop_signal() noexcept { return g_signal.load(std::memory_order_relaxed); }

}  // namespace netdaq::cli
