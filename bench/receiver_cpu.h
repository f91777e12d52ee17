// What the receiver benchmarks that time drains of a preloaded queue share (bench/roce_sw.cpp,
// bench/st2110.cpp; the xsk_gpu_* benchmarks: clocks and lists): clocks, and a namespace's UDP counters for the kernel-socket receivers.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ndqbench {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline uint64_t clock_ns(clockid_t id) {
  timespec t{};
  clock_gettime(id, &t);
  return uint64_t(t.tv_sec) * 1'000'000'000ull + uint64_t(t.tv_nsec);
}
inline uint64_t mono_ns() { return clock_ns(CLOCK_MONOTONIC); }
// The calling thread's CPU time, user and system: a receiver's syscalls count.
inline uint64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }
inline double cpu_seconds(clockid_t id) { return double(clock_ns(id)) * 1e-9; }

// "a,b,c" -> {"a", "b", "c"}: the benchmarks' list options.
inline std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) out.push_back(x);
  return out;
}

// The Udp: line of a network namespace's snmp file (/proc/thread-self/net/snmp from a thread
// inside it, /proc/PID/net/snmp for a process's).
struct UdpCounters {
  uint64_t in = 0, in_errors = 0, rcvbuf_errors = 0, no_ports = 0;
};
inline UdpCounters read_udp(const std::string& snmp = "/proc/thread-self/net/snmp") {
  std::ifstream f(snmp);
  std::string line, names;
  UdpCounters c;
  while (std::getline(f, line)) {
    if (line.rfind("Udp: ", 0) != 0) continue;
    if (names.empty()) {
      names = line;
      continue;
    }
    std::istringstream n(names), v(line);
    std::string key, val;
    n >> key, v >> val;
    while (n >> key && v >> val) {
      const uint64_t x = std::stoull(val);
      if (key == "InDatagrams") c.in = x;
      else if (key == "InErrors") c.in_errors = x;
      else if (key == "RcvbufErrors") c.rcvbuf_errors = x;
      else if (key == "NoPorts") c.no_ports = x;
    }
    break;
  }
  return c;
}

}  // namespace ndqbench
