// Shared by the tshark cross-checks (protocols_roce_tshark_test.cpp,
// protocols_vita49_tshark_test.cpp): frames written to a classic pcap file, read back by
// `tshark -T fields` as one '|'-separated line per frame, and the helpers that read those lines.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace netdaq::test::tshark {

inline bool installed() { return std::system("command -v tshark >/dev/null 2>&1") == 0; }

inline void put_le32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>(v >> (8 * i));
}

// A classic pcap file (microsecond, Ethernet) with one record per frame. Frames: a container
// of byte containers (std::vector<std::byte>, std::string, ...).
template <class Frames>
void write_pcap(const std::string& path, const Frames& frames) {
  std::string file;
  put_le32(file, 0xa1b2c3d4);
  file += std::string("\x02\x00\x04\x00", 4);  // version 2.4
  put_le32(file, 0);                           // thiszone
  put_le32(file, 0);                           // sigfigs
  put_le32(file, 65535);                       // snaplen
  put_le32(file, 1);                           // LINKTYPE_ETHERNET
  uint32_t i = 0;
  for (const auto& frame : frames) {
    put_le32(file, 1700000000);
    put_le32(file, i++);
    put_le32(file, static_cast<uint32_t>(frame.size()));
    put_le32(file, static_cast<uint32_t>(frame.size()));
    file.append(reinterpret_cast<const char*>(frame.data()), frame.size());
  }
  std::ofstream(path, std::ios::binary) << file;
}

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

// `tshark -r pcap <args> -T fields -E separator='|' -E occurrence=f -e <field>...`: its
// stdout, stderr and exit status.
inline Run run(const std::string& pcap, const std::string& args, const std::vector<std::string>& fields) {
  std::string cmd = "tshark -r '" + pcap + "' " + args + " -T fields -E separator='|' -E occurrence=f";
  for (const auto& f : fields) cmd += " -e " + f;
  const std::string err_path = pcap + ".err";
  cmd += " 2>'" + err_path + "'";
  Run r;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    r.status = ::pclose(p);
  }
  std::stringstream err;
  err << std::ifstream(err_path).rdbuf();
  r.err = err.str();
  std::remove(err_path.c_str());
  return r;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

// A tshark value as a number: decimal, 0x hex, or a boolean (1/0, True/False by version).
inline std::optional<uint64_t> number(const std::string& v) {
  if (v.empty()) return std::nullopt;
  if (v == "True" || v == "true") return 1;
  if (v == "False" || v == "false") return 0;
  return std::strtoull(v.c_str(), nullptr, 0);
}

inline std::string hex(std::span<const std::byte> bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (std::byte b : bytes) {
    s += digits[static_cast<uint8_t>(b) >> 4];
    s += digits[static_cast<uint8_t>(b) & 15];
  }
  return s;
}

}  // namespace netdaq::test::tshark
