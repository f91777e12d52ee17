#include "util/libbpf_log.h"

#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>

#include "core/log.h"

namespace netdaq::detail {
namespace {

int libbpf_print(enum libbpf_print_level, const char* fmt, va_list args) {
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, args);
  std::string s(buf);
  while (!s.empty() && s.back() == '\n') s.pop_back();
  log()->debug("{}", s);
  return 0;
}

}  // namespace

void route_libbpf_logs_to_debug() {
  static std::once_flag once;
  std::call_once(once, [] { libbpf_set_print(libbpf_print); });
}

}  // namespace netdaq::detail
