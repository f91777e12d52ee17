// The periodic status line of `netdaq run` / `netdaq bench`, and its JSON form (--stats).
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

nlohmann::ordered_json live_json(const LiveSample& s) {
  nlohmann::ordered_json drops = nlohmann::ordered_json::object();
  for (size_t i = 0; i < kDropReasons; ++i) drops[to_string(static_cast<DropReason>(i))] = s.drops_by_reason[i];
  return {{"t", s.t},
          {"rx_packets", s.rx_packets},
          {"tx_packets", s.tx_packets},
          {"rx_pps", s.rx_pps},
          {"tx_pps", s.tx_pps},
          {"rx_gbps", s.rx_gbps},
          {"tx_gbps", s.tx_gbps},
          {"drops", drops},
          {"lost", s.lost},
          {"reordered", s.reordered},
          {"duplicates", s.duplicates},
          {"malformed", s.malformed},
          {"rx_pool_in_use", s.rx_pool_in_use},
          {"tx_pool_in_use", s.tx_pool_in_use}};
}

}  // namespace netdaq::cli
