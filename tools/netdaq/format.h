// Number formats shared by every subcommand's text output, and writing a result file.
#pragma once

#include <cstdint>
#include <string>

namespace netdaq::cli {

std::string format_rate(double pps);     // "84.9 kpps"
std::string format_count(uint64_t n);    // "1,234,567"
bool write_file(const std::string& path, const std::string& text);  // "-" = stdout

}  // namespace netdaq::cli
