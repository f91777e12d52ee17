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

// A PCI device's config space (sysfs `config`, binary): the PCI Express capability (id 0x10),
// found by walking the capability list from offset 0x34.
struct PcieConfig {
  bool complete = false;  // false: the list runs past the bytes read (64 without CAP_SYS_ADMIN)
  bool express = false;   // the PCI Express capability was found
  uint8_t cap = 0;        // its offset (setpci's CAP_EXP)
  uint32_t devcap = 0;    // Device Capabilities (cap + 4)
  uint16_t devctl = 0;    // Device Control (cap + 8)
  // Sizes in bytes (128 << the 3-bit field): devcap bits 2:0, devctl bits 7:5 and 14:12.
  uint32_t mps_supported() const { return 128u << (devcap & 7); }
  uint32_t mps() const { return 128u << ((devctl >> 5) & 7); }
  uint32_t mrrs() const { return 128u << ((devctl >> 12) & 7); }
};
PcieConfig parse_pcie_config(const std::vector<uint8_t>& config);
// The 3-bit size field of `bytes` (128 -> 0 ... 4096 -> 5).
uint16_t pcie_size_code(uint32_t bytes);
// Device Control with its MPS (bits 7:5) and MRRS (bits 14:12) set to these sizes, every other bit kept.
uint16_t pcie_devctl_with(uint16_t devctl, uint32_t mps, uint32_t mrrs);

std::string bytes_text(uint64_t bytes);  // "256 MiB", "80 GiB"

}  // namespace netdaq::cli::check
