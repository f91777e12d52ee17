#include "check/sys_values.h"

#include <arpa/inet.h>

#include <cstdio>
#include <regex>
#include <sstream>

namespace netdaq::cli::check {

CpuSet parse_cpu_list(const std::string& text) {
  CpuSet out;
  std::stringstream s(text);
  for (std::string part; std::getline(s, part, ',');) {
    int a = 0, b = 0;
    char dash = 0;
    std::stringstream p(part);
    if (!(p >> a)) continue;
    if (p >> dash && dash == '-' && p >> b) {
      for (int c = a; c <= b && c - a < 65536; ++c) out.insert(c);
    } else {
      out.insert(a);
    }
  }
  return out;
}

std::string cpu_list_text(const CpuSet& cpus) {
  std::string out;
  for (auto it = cpus.begin(); it != cpus.end();) {
    int first = *it, last = *it;
    for (++it; it != cpus.end() && *it == last + 1; ++it) last = *it;
    if (!out.empty()) out += ",";
    out += std::to_string(first) + (last != first ? "-" + std::to_string(last) : "");
  }
  return out;
}

std::map<std::string, std::string> parse_cmdline(const std::string& text) {
  std::map<std::string, std::string> out;
  std::stringstream s(text);
  for (std::string arg; s >> arg;) {
    if (arg == "--") break;
    const auto eq = arg.find('=');
    out[arg.substr(0, eq)] = eq == std::string::npos ? "" : arg.substr(eq + 1);
  }
  return out;
}

std::optional<NvidiaDriver> parse_nvidia_version(const std::string& text) {
  const std::string first = text.substr(0, text.find('\n'));
  std::smatch m;
  if (!std::regex_search(first, m, std::regex("\\b([0-9]{3,})\\.([0-9]+)(\\.[0-9]+)?\\b"))) return std::nullopt;
  NvidiaDriver d;
  d.version = m.str(0);
  d.major = std::stoi(m.str(1));
  d.open = first.find("Open Kernel Module") != std::string::npos;
  return d;
}

std::optional<std::string> normalize_bdf(const std::string& text) {
  std::smatch m;
  if (!std::regex_match(text, m, std::regex("(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\\.([0-7])")))
    return std::nullopt;
  std::string dom = m[1].matched ? m.str(1) : "0000";
  dom = dom.substr(dom.size() - 4);
  std::string s = dom + ":" + m.str(2) + ":" + m.str(3) + "." + m.str(4);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> pci_chain(const std::string& device_path) {
  std::vector<std::string> out;
  std::stringstream s(device_path);
  static const std::regex bdf("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");
  for (std::string part; std::getline(s, part, '/');)
    if (std::regex_match(part, bdf)) out.push_back(part);
  return out;
}

std::vector<Route> parse_routes(const std::vector<std::string>& lines) {
  std::vector<Route> out;
  for (size_t i = 1; i < lines.size(); ++i) {  // line 0: the column names
    std::stringstream s(lines[i]);
    Route r;
    std::string dest, gw, flags, refcnt, use, metric, mask;
    if (!(s >> r.iface >> dest >> gw >> flags >> refcnt >> use >> metric >> mask)) continue;
    try {
      // The kernel prints the addresses in network byte order as a native (little-endian) word.
      r.dest = ntohl(static_cast<uint32_t>(std::stoul(dest, nullptr, 16)));
      r.gateway = ntohl(static_cast<uint32_t>(std::stoul(gw, nullptr, 16)));
      r.mask = ntohl(static_cast<uint32_t>(std::stoul(mask, nullptr, 16)));
    } catch (const std::exception&) {
      continue;
    }
    out.push_back(r);
  }
  return out;
}

std::optional<uint32_t> parse_ipv4(const std::string& text) {
  in_addr a{};
  if (inet_pton(AF_INET, text.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
}

std::string ipv4_gid(uint32_t addr) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "0000:0000:0000:0000:0000:ffff:%04x:%04x", addr >> 16, addr & 0xffff);
  return buf;
}

std::optional<uint64_t> parse_cap_eff(const std::vector<std::string>& status_lines) {
  for (const auto& l : status_lines)
    if (l.rfind("CapEff:", 0) == 0) try {
        return std::stoull(l.substr(7), nullptr, 16);
      } catch (const std::exception&) {
        return std::nullopt;
      }
  return std::nullopt;
}

MemlockLimit parse_memlock(const std::vector<std::string>& limits_lines) {
  MemlockLimit out;
  for (const auto& l : limits_lines) {
    if (l.rfind("Max locked memory", 0) != 0) continue;
    out.found = true;
    std::stringstream s(l.substr(17));
    std::string soft;
    s >> soft;
    if (soft != "unlimited") try {
        out.bytes = std::stoull(soft);
      } catch (const std::exception&) {
        out.found = false;
      }
  }
  return out;
}

uint64_t bar_size(const std::vector<std::string>& resource_lines, size_t index) {
  if (index >= resource_lines.size()) return 0;
  std::stringstream s(resource_lines[index]);
  std::string a, b;
  if (!(s >> a >> b)) return 0;
  try {
    const uint64_t start = std::stoull(a, nullptr, 16), end = std::stoull(b, nullptr, 16);
    return start == 0 && end == 0 ? 0 : end - start + 1;
  } catch (const std::exception&) {
    return 0;
  }
}

PcieConfig parse_pcie_config(const std::vector<uint8_t>& config) {
  PcieConfig out;
  const size_t n = config.size();
  auto u16 = [&](size_t at) { return static_cast<uint16_t>(config[at] | config[at + 1] << 8); };
  if (n < 0x40) return out;  // not even the header
  out.complete = true;
  if (!(u16(0x06) & 0x10)) return out;  // Status: no capability list
  size_t at = config[0x34] & 0xfc;
  for (int hops = 0; at >= 0x40 && hops < 48; ++hops) {  // 48: more than fit in 192 bytes (a loop guard)
    if (at + 2 > n) return out.complete = false, out;
    if (config[at] == 0x10) {
      if (at + 0x0a > n) return out.complete = false, out;
      out.express = true;
      out.cap = static_cast<uint8_t>(at);
      out.devcap = u16(at + 4) | static_cast<uint32_t>(u16(at + 6)) << 16;
      out.devctl = u16(at + 8);
      return out;
    }
    at = config[at + 1] & 0xfc;
  }
  return out;
}

uint16_t pcie_size_code(uint32_t bytes) {
  uint16_t code = 0;
  while (code < 7 && (128u << (code + 1)) <= bytes) ++code;
  return code;
}

uint16_t pcie_devctl_with(uint16_t devctl, uint32_t mps, uint32_t mrrs) {
  const uint16_t kept = devctl & static_cast<uint16_t>(~((7u << 5) | (7u << 12)));
  return static_cast<uint16_t>(kept | pcie_size_code(mps) << 5 | pcie_size_code(mrrs) << 12);
}

std::string bytes_text(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v == static_cast<double>(static_cast<uint64_t>(v)) ? "%.0f %s" : "%.1f %s", v,
                units[u]);
  return buf;
}

}  // namespace netdaq::cli::check
