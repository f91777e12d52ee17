// build_frame's RoCEv2 frames (src/protocols/roce.h, the sensor emulator's packets) read back by
// Wireshark's InfiniBand dissector, which decodes UDP 4791 as RoCEv2: opcode, SE, M, pad count,
// header version, P_Key, destination QP, AckReq, PSN, RETH (VA, R_Key, DMA length), ImmDt, the
// data (payload and pad) and the invariant CRC, for every opcode and pad count, equal what was
// asked and what icrc() computes. Wireshark 4.0 shows the ICRC without checking it (scapy does:
// tests/protocols/roce_scapy_check.py); here it proves the 4 bytes sit where a dissector
// looks. Needs tshark (scripts/install-deps.sh): skipped without it, failed with CI=true.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "../require_env.h"
#include "protocols/roce.h"
#include "tshark_fields.h"

namespace {

namespace roce = netdaq::protocols::roce;
using roce::Opcode;
using Bytes = std::vector<std::byte>;
using namespace netdaq::test::tshark;

// The fields asked of tshark, in this order.
const std::vector<std::string> kFields = {
    "infiniband.bth.opcode", "infiniband.bth.se",    "infiniband.bth.m",        "infiniband.bth.padcnt",
    "infiniband.bth.tver",   "infiniband.bth.p_key", "infiniband.bth.destqp",   "infiniband.bth.a",
    "infiniband.bth.psn",    "infiniband.reth.va",   "infiniband.reth.r_key",   "infiniband.reth.dmalen",
    "infiniband.invariant.crc", "infiniband.immdt",  "data.data"};
constexpr size_t kNumbers = 13;  // the fields before immdt are numbers

// SEND payloads go to the heuristic sub-dissectors of RDMA protocols (RPC-over-RDMA takes
// them as malformed RPCs, hiding the ICRC): off, so that the payload shows as data.
std::string tshark_args() {
  std::string args;
  for (const char* p : {"rpcordma", "smc", "smb_direct", "nvme-rdma", "lnet", "iser", "infiniband_sdp", "fcoib"})
    args += std::string(" --disable-protocol ") + p;
  return args;
}

bool has_reth(uint8_t op) { return (op & 0x1F) == 0x06 || (op & 0x1F) == 0x0A || (op & 0x1F) == 0x0B; }
bool has_imm(uint8_t op) { return (op & 0x1F) == 0x09 || (op & 0x1F) == 0x0B; }

struct Case {
  roce::FrameSpec spec;
  Bytes payload;
  Bytes frame;
};

Case make_case(uint8_t op, uint32_t n, uint32_t seed) {
  Case c;
  roce::FrameSpec& s = c.spec;
  const uint8_t src[6] = {0x02, 0, 0, 0, 0, 1}, dst[6] = {0x02, 0, 0, 0, 0, 2};
  std::memcpy(s.src_mac, src, 6);
  std::memcpy(s.dst_mac, dst, 6);
  s.src_ip = 0x0A000001;
  s.dst_ip = 0x0A000002;
  s.src_port = static_cast<uint16_t>(49152 + seed);
  s.bth.opcode = op;
  s.bth.solicited = seed & 1;
  s.bth.migreq = seed & 2;
  s.bth.ack_req = seed & 4;
  s.bth.pkey = seed % 3 == 0 ? 0 : static_cast<uint16_t>(0x8000 + seed);
  s.bth.dest_qp = (seed * 0x9E3779u) & 0xFFFFFF;
  s.bth.psn = (seed * 0x7F4A7Cu + 0xFFFFF0) & roce::kPsnMask;
  s.reth = {0xFEDCBA9876543210ull + seed, 0xA5A50000u + seed, n * 3 + 1};
  s.imm = 0xC0DE0000u + seed;
  c.payload.resize(n);
  for (uint32_t i = 0; i < n; ++i) c.payload[i] = static_cast<std::byte>(seed + i * 13);
  c.frame.resize(roce::frame_bytes(static_cast<Opcode>(op), n));
  EXPECT_EQ(roce::build_frame(s, c.payload, c.frame), c.frame.size());
  return c;
}

// What tshark should say for a case: a number, or nullopt for an absent field.
std::vector<std::optional<uint64_t>> expected_numbers(const Case& c) {
  using N = std::optional<uint64_t>;
  const roce::FrameSpec& s = c.spec;
  const uint8_t op = s.bth.opcode;
  const auto n = static_cast<uint32_t>(c.payload.size());
  // Wireshark reads the ICRC's 4 wire bytes big-endian; icrc() reads them little-endian.
  const uint32_t icrc = roce::icrc(std::span(c.frame).subspan(14, c.frame.size() - 14 - 4));
  return {op,
          s.bth.solicited,
          s.bth.migreq,
          (4 - n % 4) % 4,
          0,
          s.bth.pkey ? s.bth.pkey : roce::kDefaultPkey,
          s.bth.dest_qp,
          s.bth.ack_req,
          s.bth.psn,
          has_reth(op) ? N(s.reth.va) : N(),
          has_reth(op) ? N(s.reth.rkey) : N(),
          has_reth(op) ? N(s.reth.length) : N(),
          __builtin_bswap32(icrc)};
}

std::string temp_pcap_path() {
  std::string path = ::testing::TempDir() + "roce_tshark_XXXXXX.pcap";
  const int fd = ::mkstemps(path.data(), 5);
  if (fd >= 0) ::close(fd);
  return path;
}

void expect_tshark_reads(const std::vector<Case>& cases) {
  NDQ_REQUIRE(installed(), "tshark is not installed (scripts/install-deps.sh installs it)");
  std::vector<Bytes> frames;
  for (const auto& c : cases) frames.push_back(c.frame);
  const std::string pcap = temp_pcap_path();
  write_pcap(pcap, frames);
  const Run r = run(pcap, tshark_args(), kFields);
  std::remove(pcap.c_str());
  ASSERT_EQ(r.status, 0) << r.err;
  std::string out = r.out;
  if (!out.empty() && out.back() == '\n') out.pop_back();
  const auto lines = split(out, '\n');
  ASSERT_EQ(lines.size(), cases.size()) << r.out << r.err;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(std::string(roce::to_string(static_cast<Opcode>(c.spec.bth.opcode))) + ", " +
                 std::to_string(c.payload.size()) + " bytes: tshark said " + lines[i]);
    const auto got = split(lines[i], '|');
    ASSERT_EQ(got.size(), kFields.size());
    const auto want = expected_numbers(c);
    for (size_t k = 0; k < kNumbers; ++k) EXPECT_EQ(number(got[k]), want[k]) << kFields[k] << " = '" << got[k] << "'";
    std::byte imm[4];
    for (int b = 0; b < 4; ++b) imm[b] = static_cast<std::byte>(c.spec.imm >> (24 - 8 * b));
    EXPECT_EQ(got[kNumbers], has_imm(c.spec.bth.opcode) ? hex(imm) : "") << "infiniband.immdt";
    // The dissector shows the payload with its pad as data.
    EXPECT_EQ(got[kNumbers + 1], hex(c.payload) + std::string(2 * ((4 - c.payload.size() % 4) % 4), '0')) << "data.data";
  }
}

const uint8_t kOps[] = {0x04, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x24, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B};

TEST(roce_sw_tshark, DecodesEveryOpcodeAndPad) {
  std::vector<Case> cases;
  uint32_t seed = 0;
  for (uint8_t op : kOps)
    for (uint32_t n : {0u, 1u, 2u, 3u, 4u, 257u}) cases.push_back(make_case(op, n, seed++));
  expect_tshark_reads(cases);
}

TEST(roce_sw_tshark, DecodesFullSizedWritesOfASensorFrame) {
  // A 3-packet message of 4096-byte packets as the emulator sends it: FIRST, MIDDLE, LAST imm.
  std::vector<Case> cases = {make_case(0x26, 4096, 101), make_case(0x27, 4096, 102), make_case(0x29, 4096, 103)};
  expect_tshark_reads(cases);
}

}  // namespace
