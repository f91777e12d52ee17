#include "errors.h"

namespace netdaq::cli {

void print_config_error(const ConfigError& e, std::FILE* out, std::string_view prefix, std::string_view file) {
  for (const auto& issue : e.issues()) {
    const bool located = !issue.where.file.empty() && issue.where.file != "<c++>";
    const std::string where = file.empty() || located ? "" : std::string(file) + ": ";
    std::fprintf(out, "%.*s%s%s\n", int(prefix.size()), prefix.data(), where.c_str(), issue.to_string().c_str());
  }
}

}  // namespace netdaq::cli
