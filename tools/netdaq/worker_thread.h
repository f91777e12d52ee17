// Set-up shared by the sender and receiver threads.
#pragma once

namespace netdaq::cli {

// Pins the calling thread to cpu (>= 0); returns false on failure.
bool pin_thread(int cpu) noexcept;

// Names the calling thread (as top and perf show it), pins it to cpu (-1: anywhere) and makes
// its short sleeps short.
void setup_worker_thread(int cpu, const char* name) noexcept;

}  // namespace netdaq::cli
