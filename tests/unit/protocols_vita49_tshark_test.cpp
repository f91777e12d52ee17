// The VITA-49 generator (tests/protocols/vita49_generator) checked against Wireshark's VRT
// dissector: its packets, written into a pcap file as Ethernet/IPv4/UDP to port 4991, read back
// by tshark field by field (type, class id flag and fields, trailer flag and word, TSI, TSF,
// packet count, size in words, stream id, integer and fractional timestamps, payload) equal
// what the generator encoded. So the decoder's tests rest on a reading of the spec that is
// not only ours. Needs tshark (scripts/install-deps.sh): skipped without it, failed with CI=true.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../require_env.h"
#include "protocols/vita49_generator.h"

namespace {

using netdaq::testgen::make_vita49;
using netdaq::testgen::Vita49GenOptions;
using netdaq::testgen::vrt_prologue_words;
using netdaq::testgen::VrtPacketFields;
using netdaq::testgen::VrtTsf;
using netdaq::testgen::VrtTsi;

constexpr uint16_t kVrtPort = 4991;

bool tshark_installed() { return std::system("command -v tshark >/dev/null 2>&1") == 0; }

void put_be16(std::string& out, uint16_t v) {
  out += static_cast<char>(v >> 8);
  out += static_cast<char>(v);
}
void put_le32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>(v >> (8 * i));
}

uint16_t ipv4_checksum(const std::string& header) {
  uint32_t sum = 0;
  for (size_t i = 0; i < header.size(); i += 2)
    sum += (uint32_t{static_cast<uint8_t>(header[i])} << 8) | static_cast<uint8_t>(header[i + 1]);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// An Ethernet frame carrying `payload` as UDP 10.0.0.1:4991 -> 10.0.0.2:4991 (no UDP checksum,
// which IPv4 allows).
std::string udp_frame(const std::vector<std::byte>& payload) {
  std::string udp;
  put_be16(udp, kVrtPort);
  put_be16(udp, kVrtPort);
  put_be16(udp, static_cast<uint16_t>(8 + payload.size()));
  put_be16(udp, 0);
  for (std::byte b : payload) udp += static_cast<char>(b);
  std::string ip;
  ip += '\x45';  // version 4, 5 words
  ip += '\0';
  put_be16(ip, static_cast<uint16_t>(20 + udp.size()));
  put_be16(ip, 0);     // id
  put_be16(ip, 0);     // flags, fragment
  ip += '\x40';        // ttl
  ip += '\x11';        // udp
  put_be16(ip, 0);     // checksum, below
  ip += std::string("\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
  const uint16_t sum = ipv4_checksum(ip);
  ip[10] = static_cast<char>(sum >> 8);
  ip[11] = static_cast<char>(sum);
  return std::string("\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00", 14) + ip + udp;
}

// A classic pcap file (microsecond, Ethernet) with one record per packet.
void write_pcap(const std::string& path, const std::vector<std::vector<std::byte>>& packets) {
  std::string file;
  put_le32(file, 0xa1b2c3d4);
  file += std::string("\x02\x00\x04\x00", 4);  // version 2.4
  put_le32(file, 0);                           // thiszone
  put_le32(file, 0);                           // sigfigs
  put_le32(file, 65535);                       // snaplen
  put_le32(file, 1);                           // LINKTYPE_ETHERNET
  for (size_t i = 0; i < packets.size(); ++i) {
    const std::string frame = udp_frame(packets[i]);
    put_le32(file, 1700000000);
    put_le32(file, static_cast<uint32_t>(i));
    put_le32(file, static_cast<uint32_t>(frame.size()));
    put_le32(file, static_cast<uint32_t>(frame.size()));
    file += frame;
  }
  std::ofstream(path, std::ios::binary) << file;
}

// The fields asked of tshark, in this order.
const std::vector<std::string> kFields = {
    "vrt.type", "vrt.cidflag", "vrt.tflag", "vrt.tsi", "vrt.tsf", "vrt.seq", "vrt.len", "vrt.sid", "vrt.cid",
    "vrt.oui", "vrt.icc", "vrt.pcc", "vrt.ts_int", "vrt.ts_frac_sample", "vrt.trailer", "vrt.data"};

struct Run {
  int status = -1;
  std::string out;
  std::string err;
};

Run run_tshark(const std::string& pcap) {
  std::string cmd = "tshark -r '" + pcap + "' -d udp.port==" + std::to_string(kVrtPort) +
                    ",vrt -T fields -E separator='|' -E occurrence=f";
  for (const auto& f : kFields) cmd += " -e " + f;
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

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  if (!s.empty() && s.back() == sep) parts.emplace_back();
  return parts;
}

// A tshark value as a number: decimal, 0x hex, or a boolean (1/0, True/False by version).
std::optional<uint64_t> number(const std::string& v) {
  if (v.empty()) return std::nullopt;
  if (v == "True" || v == "true") return 1;
  if (v == "False" || v == "false") return 0;
  return std::strtoull(v.c_str(), nullptr, 0);
}

std::string hex(const std::vector<std::byte>& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (std::byte b : bytes) {
    s += digits[static_cast<uint8_t>(b) >> 4];
    s += digits[static_cast<uint8_t>(b) & 15];
  }
  return s;
}

bool type_has_stream_id(uint8_t type) { return type == 1 || type == 3 || type >= 4; }
bool is_data(uint8_t type) { return type <= 3; }

// What tshark should say for a packet encoded from f: a number, or nullopt for an absent field.
std::vector<std::optional<uint64_t>> expected_numbers(const VrtPacketFields& f) {
  using N = std::optional<uint64_t>;
  const uint64_t words = vrt_prologue_words(f) + (f.payload.size() + 3) / 4 + (f.trailer ? 1 : 0);
  const bool tsf_samples = f.tsf == VrtTsf::sample_count || f.tsf == VrtTsf::free_running;
  return {
      f.type,
      f.class_id,
      is_data(f.type) ? N(f.trailer) : N(),  // bit 26 is another flag in context packets
      static_cast<uint64_t>(f.tsi),
      static_cast<uint64_t>(f.tsf),
      f.packet_count,
      words,
      type_has_stream_id(f.type) ? N(f.stream_id) : N(),
      f.class_id ? N(uint64_t{f.oui} << 32 | uint64_t{f.info_class} << 16 | f.packet_class) : N(),
      f.class_id ? N(f.oui) : N(),
      f.class_id ? N(f.info_class) : N(),
      f.class_id ? N(f.packet_class) : N(),
      f.tsi != VrtTsi::none ? N(f.integer_timestamp) : N(),
      tsf_samples ? N(f.fractional_timestamp) : N(),
      f.trailer && is_data(f.type) ? N(f.trailer_word) : N(),
  };
}

// The first packet, as tshark read it and as generated (vrt.data cut short), for the log.
void print_first(const char* label, const std::vector<std::string>& got, const std::vector<std::optional<uint64_t>>& want,
                 const std::string& data) {
  std::printf("[%s] first packet, field: tshark / generator\n", label);
  for (size_t k = 0; k < want.size(); ++k)
    std::printf("  %-20s %-20s %s\n", kFields[k].c_str(), got[k].c_str(), want[k] ? std::to_string(*want[k]).c_str() : "");
  std::printf("  %-20s %.24s... / %.24s...\n", kFields.back().c_str(), got.back().c_str(), data.c_str());
}

std::string temp_pcap_path() {
  std::string path = ::testing::TempDir() + "vita49_tshark_XXXXXX.pcap";
  const int fd = ::mkstemps(path.data(), 5);
  if (fd >= 0) ::close(fd);
  return path;
}

// Generates traffic with g, has tshark read it, and checks every packet's fields.
void expect_tshark_reads_generator(const Vita49GenOptions& g, const char* label) {
  NDQ_REQUIRE(tshark_installed(), "tshark is not installed (scripts/install-deps.sh installs it)");
  std::vector<VrtPacketFields> fields;
  const auto traffic = make_vita49(g, &fields);
  ASSERT_EQ(fields.size(), traffic.packets.size());
  std::vector<std::vector<std::byte>> packets;
  for (const auto& p : traffic.packets) packets.push_back(p.payload);
  const std::string pcap = temp_pcap_path();
  write_pcap(pcap, packets);
  const Run r = run_tshark(pcap);
  std::remove(pcap.c_str());
  ASSERT_EQ(r.status, 0) << r.err;

  std::string out = r.out;
  if (!out.empty() && out.back() == '\n') out.pop_back();
  const auto lines = split(out, '\n');
  ASSERT_EQ(lines.size(), packets.size()) << r.out << r.err;
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(std::string(label) + ", packet " + std::to_string(i) + ": tshark said " + lines[i]);
    const auto got = split(lines[i], '|');
    ASSERT_EQ(got.size(), kFields.size());
    const auto want = expected_numbers(fields[i]);
    for (size_t k = 0; k < want.size(); ++k) {
      if (k == 2 && !is_data(fields[i].type)) continue;  // tflag: tshark shows TSM there, or nothing
      EXPECT_EQ(number(got[k]), want[k]) << kFields[k] << " = '" << got[k] << "'";
    }
    EXPECT_EQ(got.back(), hex(fields[i].payload)) << "vrt.data";
    if (i == 0) print_first(label, got, want, hex(fields[i].payload));
  }
}

TEST(vita49_tshark, StreamIdClassIdTrailerUtcSampleCount) {
  Vita49GenOptions g;
  g.streams = {0x00C0FFEE, 0x12345678};
  g.class_id = true;
  g.trailer = true;
  g.tsi = VrtTsi::utc;
  g.sample_rate = 1000;
  g.samples_per_frame = 300;
  g.first_frame = 1'700'000'000ull * g.sample_rate / g.samples_per_frame;
  g.samples_per_packet = {128, 72, 250};
  g.frames = 8;
  g.context_every = 5;  // context packets too
  g.first_packet_count = 13;
  expect_tshark_reads_generator(g, "sid+cid+trailer+utc");
}

TEST(vita49_tshark, NoStreamIdFreeRunningCount) {
  Vita49GenOptions g;
  g.streams = {};
  g.tsf = VrtTsf::free_running;
  g.first_frame = uint64_t{1} << 40;  // a fractional timestamp above 32 bits
  g.samples_per_packet = {64, 20};
  g.sample_bytes = 8;
  expect_tshark_reads_generator(g, "no sid, free running");
}

TEST(vita49_tshark, GpsSecondsWithoutClassIdOrTrailer) {
  Vita49GenOptions g;
  g.streams = {1};
  g.tsi = VrtTsi::gps;
  g.sample_rate = 256;
  g.samples_per_packet = {100};
  g.first_frame = 1'400'000'000ull;  // with 256 samples a frame: second 1.4e9
  g.frames = 6;
  expect_tshark_reads_generator(g, "gps");
}

}  // namespace
