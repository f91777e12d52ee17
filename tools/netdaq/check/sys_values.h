// The text formats of /proc and /sys the checks read, parsed once into typed values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace netdaq::cli::check {

using CpuSet = std::set<int>;
// "0-3,8,10-11" (cpulist format); malformed pieces are ignored.
CpuSet parse_cpu_list(const std::string& text);
std::string cpu_list_text(const CpuSet& cpus);

// /proc/cmdline: key -> value ("" for a bare flag); arguments after "--" belong to init.
std::map<std::string, std::string> parse_cmdline(const std::string& text);

// /proc/driver/nvidia/version, first line:
// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build ..." (open)
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..." (proprietary)
struct NvidiaDriver {
  std::string version;  // "550.54.15"
  int major = 0;
  bool open = false;  // the open GPU kernel modules (dma-buf export needs them)
};
std::optional<NvidiaDriver> parse_nvidia_version(const std::string& text);

// "0000:3b:00.0"; the CUDA driver's "00000000:3B:00.0" is normalized to it.
std::optional<std::string> normalize_bdf(const std::string& text);
// The PCI functions on a /sys/devices path, root port first.
std::vector<std::string> pci_chain(const std::string& device_path);

// One line of /proc/net/route (IPv4 routes of the main table, host byte order).
struct Route {
  std::string iface;
  uint32_t dest = 0, gateway = 0, mask = 0;
};
std::vector<Route> parse_routes(const std::vector<std::string>& lines);
std::optional<uint32_t> parse_ipv4(const std::string& text);  // host byte order
// The RoCE GID of an IPv4 address as sysfs writes it: 0000:...:ffff:0a00:0001.
std::string ipv4_gid(uint32_t addr);

// "CapEff:\t000001ffffffffff" of /proc/self/status.
std::optional<uint64_t> parse_cap_eff(const std::vector<std::string>& status_lines);
// "Max locked memory  65536  65536  bytes" of /proc/self/limits: the soft limit (nullopt: unlimited).
struct MemlockLimit {
  bool found = false;
  std::optional<uint64_t> bytes;
};
MemlockLimit parse_memlock(const std::vector<std::string>& limits_lines);
// Size of BAR `index` from a PCI device's sysfs `resource` file (0 when unused).
uint64_t bar_size(const std::vector<std::string>& resource_lines, size_t index);

std::string bytes_text(uint64_t bytes);  // "256 MiB", "80 GiB"

}  // namespace netdaq::cli::check
