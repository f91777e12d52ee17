// After a command's work is over its metrics server may go on serving the final counters for a
// while (--metrics-linger), so that a scraper reads them: run, ingest and build share this wait.
#pragma once

#include <cstdio>
#include <string>

namespace netdaq::cli {

// Says where and for how long on out, then waits seconds (0: returns at once) or until Ctrl-C.
void linger_serving(const std::string& url, double seconds, std::FILE* out);

}  // namespace netdaq::cli
