#include "format.h"

#include <cstdio>

namespace netdaq::cli {

std::string format_rate(double pps) {
  char b[32];
  if (pps >= 1e6)
    std::snprintf(b, sizeof b, "%.2f Mpps", pps / 1e6);
  else if (pps >= 1e3)
    std::snprintf(b, sizeof b, "%.1f kpps", pps / 1e3);
  else
    std::snprintf(b, sizeof b, "%.0f pps", pps);
  return b;
}

std::string format_count(uint64_t n) {
  std::string d = std::to_string(n), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

bool write_file(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return true;
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace netdaq::cli
