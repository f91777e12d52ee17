#include "engines/dpdk/eal.h"

#include <pthread.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <vector>

#include "core/log.h"
#include "engines/dpdk/device.h"
#include "engines/dpdk/hugepages.h"
#include "netdaq/status.h"

namespace netdaq::detail::dpdk {

namespace {

constexpr const char* kPrefixStem = "netdaq-";

struct EalState {
  std::mutex mu;
  bool running = false;
  std::string failure;      // why the one init attempt failed
  std::string arguments;    // what it was started with
  EalConfig eal;            // the config it was started with
  std::string runtime_dir;  // removed at exit
  std::mutex errors_mu;              // DPDK logs from its own threads too
  std::deque<std::string> errors;    // DPDK's last error lines
};
EalState& state() {
  static EalState s;
  return s;
}

// Error lines DPDK prints although nothing is wrong for netdaq, shown at debug level instead:
// the tap driver asks secondary processes to start, and netdaq runs EAL without multi-process
// support (in-memory / no-shconf), so there are none to ask.
bool harmless_error(const std::string& line) {
  static constexpr const char* kHarmless[] = {"Failed to send start req to secondary"};
  for (const char* h : kHarmless)
    if (line.find(h) != std::string::npos) return true;
  return false;
}

// DPDK's log goes through spdlog (prefixed "dpdk:"), keeping the last error lines for error
// messages.
ssize_t log_write(void*, const char* buf, size_t size) {
  std::string line(buf, size);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.empty()) return static_cast<ssize_t>(size);
  const uint32_t level = rte_log_cur_msg_loglevel();
  if (level <= RTE_LOG_ERR && harmless_error(line)) {
    log()->debug("dpdk: {}", line);
  } else if (level <= RTE_LOG_ERR) {
    log()->error("dpdk: {}", line);
    auto& s = state();
    std::lock_guard lock(s.errors_mu);
    s.errors.push_back(line);
    if (s.errors.size() > 6) s.errors.pop_front();
  } else if (level <= RTE_LOG_WARNING) {
    log()->warn("dpdk: {}", line);
  } else if (level <= RTE_LOG_INFO) {
    log()->debug("dpdk: {}", line);
  } else {
    log()->trace("dpdk: {}", line);
  }
  return static_cast<ssize_t>(size);
}

int dpdk_log_level() {
  switch (log()->level()) {
    case spdlog::level::trace: return RTE_LOG_DEBUG;
    case spdlog::level::debug: return RTE_LOG_INFO;
    default: return RTE_LOG_WARNING;
  }
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

int first_allowed_cpu() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) return c;
  return 0;
}

std::string file_prefix(const EalConfig& e) {
  return e.file_prefix.empty() ? kPrefixStem + std::to_string(getpid()) : e.file_prefix;
}

std::vector<std::string> build_args(const Config& config) {
  const EalConfig& e = config.options.get<EalConfig>();
  std::vector<std::string> a{"netdaq"};
  const int main_core = e.main_core >= 0 ? e.main_core : !e.cores.empty() ? e.cores.front() : first_allowed_cpu();
  std::vector<int> cores = e.cores.empty() ? std::vector<int>{main_core} : e.cores;
  std::string list;
  for (int c : cores) list += (list.empty() ? "" : ",") + std::to_string(c);
  a.push_back("-l");
  a.push_back(list);
  a.push_back("--main-lcore=" + std::to_string(main_core));
  a.push_back("--file-prefix=" + file_prefix(e));
  a.push_back("-m");
  a.push_back(std::to_string(e.memory_mb));
  // No shared files: in-memory with hugepages (memfd, nothing in hugetlbfs), or plain memory.
  if (e.hugepages) {
    a.push_back("--in-memory");
  } else {
    a.push_back("--no-huge");
    a.push_back("--no-shconf");
  }
  a.push_back("--no-telemetry");
  std::vector<std::string> pci = e.allow;
  for (const auto& iface : config.interfaces)
    if (iface.engine == "dpdk" && !pci_device_name(iface.address).empty()) pci.push_back(iface.address);
  if (pci.empty()) {
    a.push_back("--no-pci");
    a.push_back("--iova-mode=va");  // virtual devices only: buffer addresses are their IOVAs
  }
  for (const auto& p : pci) a.push_back("--allow=" + p);
  for (const auto& v : e.vdevs) a.push_back("--vdev=" + v);
  for (const auto& x : e.args) a.push_back(x);
  return a;
}

// Runtime directories of earlier netdaq processes that are gone (SIGKILL, crash).
void remove_stale_runtime_dirs(const std::string& own_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::path(own_dir).parent_path();
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kPrefixStem, 0) != 0 || entry.path() == fs::path(own_dir)) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + std::strlen(kPrefixStem), &end, 10);
    if (!end || *end != '\0' || pid <= 0) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;  // still running
    fs::remove_all(entry.path(), ec);
    if (!ec) log()->info("dpdk: removed {} (left by netdaq process {}, which is gone)", entry.path().string(), pid);
  }
}

void remove_runtime_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

// The runtime directory EAL uses for a prefix when it did not get as far as saying so.
std::string expected_runtime_dir(const std::string& prefix) {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  const std::string base = getuid() == 0 || !xdg ? std::string("/var/run") : std::string(xdg);
  return base + "/dpdk/" + prefix;
}

void at_exit() {
  auto& s = state();
  if (!s.running) return;
  rte_eal_cleanup();
  remove_runtime_dir(s.runtime_dir);
  s.running = false;
}

}  // namespace

std::string eal_arguments(const Config& config) { return join(build_args(config)); }

std::string last_dpdk_errors() {
  auto& s = state();
  std::lock_guard lock(s.errors_mu);
  std::string r;
  for (const auto& e : s.errors) r += (r.empty() ? "" : "; ") + e;
  return r;
}

void acquire_eal(const Config& config) {
  auto& s = state();
  std::lock_guard lock(s.mu);
  if (s.running) {
    if (!(s.eal == config.options.get<EalConfig>()))
      throw Error(Errc::state, "eal: DPDK is already running in this process with other eal: settings (" +
                                   s.arguments + "); DPDK allows one EAL per process: give every config the same eal:");
    return;
  }
  if (!s.failure.empty())
    throw Error(Errc::state, "eal: DPDK failed to start earlier in this process and cannot be retried: " + s.failure);

  const EalConfig& e = config.options.get<EalConfig>();
  if (e.hugepages) check_hugepages(e.memory_mb);  // throws with how to reserve them

  static FILE* stream = [] {
    cookie_io_functions_t io{};
    io.write = log_write;
    return fopencookie(nullptr, "w", io);
  }();
  if (stream) {
    setvbuf(stream, nullptr, _IOLBF, 0);
    rte_openlog_stream(stream);
  }
  rte_log_set_global_level(static_cast<uint32_t>(dpdk_log_level()));

  const std::vector<std::string> args = build_args(config);
  s.arguments = join(args);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // EAL pins the calling thread to the main lcore; give the application its CPUs back.
  cpu_set_t saved;
  const bool have_saved = pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
  log()->info("dpdk: starting EAL: {}", s.arguments);
  const int rc = rte_eal_init(static_cast<int>(args.size()), argv.data());
  const int err = rte_errno;
  if (have_saved) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  const std::string prefix = file_prefix(e);
  if (rc < 0) {
    remove_runtime_dir(expected_runtime_dir(prefix));
    s.failure = std::string("rte_eal_init failed: ") + rte_strerror(err) + " (EAL arguments: " + s.arguments + ")";
    const std::string dpdk_says = last_dpdk_errors();
    if (!dpdk_says.empty()) s.failure += "; DPDK says: " + dpdk_says;
    throw Error(Errc::system, "eal: " + s.failure);
  }
  s.running = true;
  s.eal = e;
  s.runtime_dir = rte_eal_get_runtime_dir();
  remove_stale_runtime_dirs(s.runtime_dir);
  std::atexit(at_exit);
}

}  // namespace netdaq::detail::dpdk
