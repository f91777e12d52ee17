// The periodic status line of `netdaq run` / `netdaq bench`.
#include "report.h"

namespace netdaq::cli {

void print_live(std::FILE* out, const LiveSample& s, bool has_rx, bool has_tx) {
  std::fprintf(out, "[%6.1fs]", s.t);
  if (has_rx)
    std::fprintf(out, " rx %10s %7.3f Gb/s | drops %s | out-of-order %s | lost %s", format_rate(s.rx_pps).c_str(),
                 s.rx_gbps, format_count(s.drops).c_str(), format_count(s.reordered).c_str(),
                 format_count(s.lost).c_str());
  if (has_rx && s.duplicates) std::fprintf(out, " | dup %s", format_count(s.duplicates).c_str());
  if (has_rx && s.malformed) std::fprintf(out, " | malformed %s", format_count(s.malformed).c_str());
  if (has_tx) {
    if (!has_rx) std::fprintf(out, " drops %s |", format_count(s.drops).c_str());
    std::fprintf(out, "%s tx %10s %7.3f Gb/s", has_rx ? " |" : "", format_rate(s.tx_pps).c_str(), s.tx_gbps);
  }
  std::fputc('\n', out);
  std::fflush(out);
}

}  // namespace netdaq::cli
