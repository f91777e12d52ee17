// Ctrl-C handling: the first SIGINT/SIGTERM asks every loop to stop cleanly (the summary
// is still printed); a second one exits at once with status 130.
#pragma once

#include <atomic>

namespace netdaq::cli {

void install_stop_signals();
bool stop_requested() noexcept;
// The signal that asked to stop (0 if none).
int stop_signal() noexcept;

}  // namespace netdaq::cli
