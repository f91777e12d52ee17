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
#include "tshark_fields.h"

namespace {

using netdaq::testgen::make_vita49;
using netdaq::testgen::Vita49GenOptions;
using netdaq::testgen::vrt_prologue_words;
using netdaq::testgen::VrtPacketFields;
using netdaq::testgen::VrtTsf;
using netdaq::testgen::VrtTsi;

using namespace netdaq::test::tshark;

constexpr uint16_t kVrtPort = 4991;

void put_be16(std::string& out, uint16_t v) {
  out += static_cast<char>(v >> 8);
  out += static_cast<char>(v);
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

// The fields asked of tshark, in this order.
const std::vector<std::string> kFields = {
    "vrt.type", "vrt.cidflag", "vrt.tflag", "vrt.tsi", "vrt.tsf", "vrt.seq", "vrt.len", "vrt.sid", "vrt.cid",
    "vrt.oui", "vrt.icc", "vrt.pcc", "vrt.ts_int", "vrt.ts_frac_sample", "vrt.trailer", "vrt.data"};

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
  NDQ_REQUIRE(installed(), "tshark is not installed (scripts/install-deps.sh installs it)");
  std::vector<VrtPacketFields> fields;
  const auto traffic = make_vita49(g, &fields);
  ASSERT_EQ(fields.size(), traffic.packets.size());
  std::vector<std::string> frames;  // each packet as Ethernet/IPv4/UDP
  for (const auto& p : traffic.packets) frames.push_back(udp_frame(p.payload));
  const std::string pcap = temp_pcap_path();
  write_pcap(pcap, frames);
  const Run r = run(pcap, "-d udp.port==" + std::to_string(kVrtPort) + ",vrt", kFields);
  std::remove(pcap.c_str());
  ASSERT_EQ(r.status, 0) << r.err;

  std::string out = r.out;
  if (!out.empty() && out.back() == '\n') out.pop_back();
  const auto lines = split(out, '\n');
  ASSERT_EQ(lines.size(), frames.size()) << r.out << r.err;
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
