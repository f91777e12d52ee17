// netdaq's RoCEv2 ICRC and frame builder (src/protocols/roce.h) as a filter, for checks against
// independent implementations (roce_scapy_check.py). One request per stdin line, one answer
// per stdout line:
//   icrc <hex>   <hex> is an IP packet (IPv4 or IPv6) from its header through its ICRC; prints
//                the ICRC icrc() computes over all but the last 4 bytes, as its 4 wire bytes in hex
//   build <opcode> <qp> <psn> <va> <rkey> <dma_len> <imm> <pkey> <flags> <payload hex or ->
//                (numbers in hex; flags: bit0 SE, bit1 M, bit2 FECN, bit3 BECN, bit4 A) prints
//                build_frame's Ethernet frame in hex (10.0.0.1:49152 -> 10.0.0.2:4791)
// A malformed line prints "error ..." and the tool exits 1.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "protocols/roce.h"

namespace {

namespace roce = netdaq::protocols::roce;

bool from_hex(const std::string& hex, std::vector<std::byte>& out) {
  out.clear();
  if (hex == "-") return true;
  if (hex.size() % 2) return false;
  for (size_t i = 0; i < hex.size(); i += 2) {
    unsigned v = 0;
    if (std::sscanf(hex.c_str() + i, "%2x", &v) != 1) return false;
    out.push_back(static_cast<std::byte>(v));
  }
  return true;
}

std::string to_hex(std::span<const std::byte> bytes) {
  std::string s;
  char two[3];
  for (std::byte b : bytes) {
    std::snprintf(two, sizeof two, "%02x", static_cast<unsigned>(b));
    s += two;
  }
  return s;
}

bool answer(const std::string& line, std::string& out) {
  std::istringstream in(line);
  std::string what;
  in >> what;
  std::vector<std::byte> bytes;
  if (what == "icrc") {
    std::string hex;
    if (!(in >> hex) || !from_hex(hex, bytes) || bytes.size() < 4) return false;
    std::byte wire[4];
    roce::store_icrc(wire, roce::icrc(std::span(bytes).first(bytes.size() - 4)));
    out = to_hex(wire);
    return true;
  }
  if (what == "build") {
    uint64_t op, qp, psn, va, rkey, len, imm, pkey, flags;
    std::string payload;
    in >> std::hex >> op >> qp >> psn >> va >> rkey >> len >> imm >> pkey >> flags >> payload;
    if (!in || !from_hex(payload, bytes)) return false;
    roce::FrameSpec s;
    const uint8_t src[6] = {0x02, 0, 0, 0, 0, 1}, dst[6] = {0x02, 0, 0, 0, 0, 2};
    std::copy(src, src + 6, s.src_mac);
    std::copy(dst, dst + 6, s.dst_mac);
    s.src_ip = 0x0A000001;
    s.dst_ip = 0x0A000002;
    s.ip_id = static_cast<uint16_t>(psn);
    s.bth.opcode = static_cast<uint8_t>(op);
    s.bth.dest_qp = static_cast<uint32_t>(qp);
    s.bth.psn = static_cast<uint32_t>(psn);
    s.bth.pkey = static_cast<uint16_t>(pkey);
    s.bth.solicited = flags & 1;
    s.bth.migreq = flags & 2;
    s.bth.fecn = flags & 4;
    s.bth.becn = flags & 8;
    s.bth.ack_req = flags & 16;
    s.reth = {va, static_cast<uint32_t>(rkey), static_cast<uint32_t>(len)};
    s.imm = static_cast<uint32_t>(imm);
    std::vector<std::byte> frame(roce::frame_bytes(static_cast<roce::Opcode>(op), static_cast<uint32_t>(bytes.size())));
    if (frame.empty() || roce::build_frame(s, bytes, frame) != frame.size()) return false;
    out = to_hex(frame);
    return true;
  }
  return false;
}

}  // namespace

int main() {
  std::string line, out;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    if (!answer(line, out)) {
      std::cout << "error " << line.substr(0, 80) << std::endl;
      return 1;
    }
    std::cout << out << '\n';
  }
  return 0;
}
