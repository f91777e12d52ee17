#include "sensors/roce_sensor.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "netdaq/sensor_pattern.h"
#include "netdaq/status.h"
#include "protocols/roce.h"
#include "sensors/fill_burst.h"

namespace netdaq::sensors {

namespace roce = protocols::roce;
using nlohmann::json;

namespace {

[[noreturn]] void bad_file(const std::string& path, const std::string& what) {
  throw Error(Errc::invalid_config, "RoCE peer file '" + path + "': " + what);
}

// A JSON unsigned integer at obj[key] (key path for messages), at most max.
uint64_t number(const std::string& path, const json& obj, const char* key, const std::string& where, uint64_t max) {
  const auto it = obj.find(key);
  if (it == obj.end()) bad_file(path, where + "." + key + " is missing");
  if (!it->is_number_unsigned()) bad_file(path, where + "." + key + " = " + it->dump() + ": must be an unsigned integer");
  const uint64_t v = it->get<uint64_t>();
  if (v > max) bad_file(path, where + "." + key + " = " + std::to_string(v) + ": must be <= " + std::to_string(max));
  return v;
}

}  // namespace

RoceRemoteQp read_roce_peer_file(const std::string& path, size_t index) {
  std::ifstream in(path);
  if (!in) bad_file(path, std::string("cannot open it: ") + std::strerror(errno));
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    bad_file(path, std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object()) bad_file(path, "must be a JSON object {\"gid\": ..., \"rx\": [...]}");
  const auto rx = doc.find("rx");
  if (rx == doc.end() || !rx->is_array())
    bad_file(path, "has no \"rx\" array (the receiver's queue pairs; the receiver adds them once they are ready)");
  if (index >= rx->size())
    bad_file(path, "rx has " + std::to_string(rx->size()) + " entries; entry " + std::to_string(index) + " is needed");
  const std::string where = "rx[" + std::to_string(index) + "]";
  const json& e = (*rx)[index];
  if (!e.is_object()) bad_file(path, where + " must be an object");
  RoceRemoteQp qp;
  qp.qpn = static_cast<uint32_t>(number(path, e, "qpn", where, roce::kPsnMask));
  qp.psn = static_cast<uint32_t>(number(path, e, "psn", where, roce::kPsnMask));
  const auto ring = e.find("ring");
  if (ring == e.end() || !ring->is_object())
    bad_file(path, where + ".ring is missing: the receiver's ring {addr, rkey, slots, stride, slot_size}");
  const std::string rw = where + ".ring";
  qp.va = number(path, *ring, "addr", rw, UINT64_MAX);
  qp.rkey = static_cast<uint32_t>(number(path, *ring, "rkey", rw, UINT32_MAX));
  qp.slots = static_cast<uint32_t>(number(path, *ring, "slots", rw, UINT32_MAX));
  qp.stride = number(path, *ring, "stride", rw, UINT32_MAX);
  qp.slot_size = number(path, *ring, "slot_size", rw, UINT32_MAX);
  if (qp.slots == 0) bad_file(path, rw + ".slots = 0: must be >= 1");
  if (qp.slot_size > qp.stride && qp.slots > 1)
    bad_file(path, rw + ".slot_size = " + std::to_string(qp.slot_size) + ": must be <= stride " + std::to_string(qp.stride));
  if (const auto gid = doc.find("gid"); gid != doc.end() && gid->is_string()) {
    in6_addr a{};
    const std::string g = gid->get<std::string>();
    if (inet_pton(AF_INET6, g.c_str(), &a) != 1) bad_file(path, "gid = '" + g + "': not an IPv6 address in text form");
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
      uint32_t v4 = 0;
      std::memcpy(&v4, a.s6_addr + 12, 4);
      qp.ipv4 = ntohl(v4);
    }
  }
  return qp;
}

RoceSensor::RoceSensor(const RoceSensorConfig& c) : c_(c) {
  auto fail = [](const std::string& m) { throw Error(Errc::invalid_config, "RoCE sensor: " + m); };
  const uint32_t m = c.mtu;
  if (m != 256 && m != 512 && m != 1024 && m != 2048 && m != 4096)
    fail("mtu = " + std::to_string(m) + ": must be 256, 512, 1024, 2048 or 4096 (a RoCE path MTU)");
  if (c.frame_bytes == 0) fail("frame_bytes = 0: must be >= 1");
  if (c.frame_bytes > c.qp.slot_size)
    fail("frame_bytes = " + std::to_string(c.frame_bytes) + ": must be <= the receiver's slot_size " +
         std::to_string(c.qp.slot_size) + " (a frame fills one slot of its ring)");
  if (c.qp.slots == 0) fail("the receiver's ring has 0 slots");
  if (c.qp.qpn == 0 || c.qp.qpn > roce::kPsnMask) fail("qpn = " + std::to_string(c.qp.qpn) + ": must be 1..0xFFFFFF");
  if (c.dst_ip == 0) fail("no destination IPv4 address");
  per_frame_ = (c.frame_bytes + m - 1) / m;
  for (uint32_t p = 0; p < per_frame_; ++p) {
    const uint32_t bytes = std::min(m, c.frame_bytes - p * m);
    const bool last = p + 1 == per_frame_;
    roce::Opcode op;
    if (c.op == RoceSendOp::write_only || per_frame_ == 1)
      op = last && c.with_immediate ? roce::Opcode::uc_write_only_imm : roce::Opcode::uc_write_only;
    else
      op = p == 0 ? roce::Opcode::uc_write_first
                  : !last ? roce::Opcode::uc_write_middle
                          : c.with_immediate ? roce::Opcode::uc_write_last_imm : roce::Opcode::uc_write_last;
    wire_per_frame_ += roce::frame_bytes(op, bytes);
  }
  payload_.resize(m);
  psn_ = c.qp.psn & roce::kPsnMask;
}

RoceSensor::~RoceSensor() = default;

uint32_t RoceSensor::max_packet_bytes() const noexcept {
  return roce::frame_bytes(roce::Opcode::uc_write_only_imm, std::min(c_.mtu, c_.frame_bytes));
}

size_t RoceSensor::fill(TxBurst& burst) noexcept { return fill_burst(*this, burst); }

uint32_t RoceSensor::next_packet(std::span<std::byte> out) noexcept {
  const uint32_t m = c_.mtu;
  const uint32_t offset = packet_ * m;
  const uint32_t bytes = std::min(m, c_.frame_bytes - offset);
  const bool first = packet_ == 0, last = packet_ + 1 == per_frame_;
  roce::FrameSpec s;
  std::memcpy(s.src_mac, c_.src_mac.data(), 6);
  std::memcpy(s.dst_mac, c_.dst_mac.data(), 6);
  s.src_ip = c_.src_ip;
  s.dst_ip = c_.dst_ip;
  s.src_port = c_.src_port;
  s.dst_port = c_.dst_port;
  s.ip_id = ip_id_;
  s.bth.dest_qp = c_.qp.qpn;
  s.bth.psn = psn_;
  s.bth.pkey = roce::kDefaultPkey;
  const uint64_t slot_va = c_.qp.va + (frame_ % c_.qp.slots) * c_.qp.stride;
  roce::Opcode op;
  if (c_.op == RoceSendOp::write_only || per_frame_ == 1) {
    // HSB style: every packet a message of its own, with its own RETH.
    op = last && c_.with_immediate ? roce::Opcode::uc_write_only_imm : roce::Opcode::uc_write_only;
    s.reth = {slot_va + offset, c_.qp.rkey, bytes};
  } else {
    op = first ? roce::Opcode::uc_write_first
               : !last ? roce::Opcode::uc_write_middle
                       : c_.with_immediate ? roce::Opcode::uc_write_last_imm : roce::Opcode::uc_write_last;
    s.reth = {slot_va, c_.qp.rkey, c_.frame_bytes};  // written on FIRST only
  }
  s.bth.opcode = static_cast<uint8_t>(op);
  s.imm = static_cast<uint32_t>(frame_);
  const std::span<std::byte> payload(payload_.data(), bytes);
  write_sensor_pattern(payload, frame_, offset);
  const uint32_t len = roce::build_frame(s, payload, out);
  if (len == 0) return 0;
  ++packets_;
  if (c_.corrupt_icrc_every && packets_ % c_.corrupt_icrc_every == 0) {
    std::byte* icrc = out.data() + len - roce::kIcrcBytes;
    roce::store_icrc(icrc, roce::load_icrc(icrc) ^ 0x1u);  // one bit: the smallest error a CRC must catch
    ++corrupted_;
  }
  psn_ = (psn_ + 1) & roce::kPsnMask;
  ++ip_id_;
  if (last) {
    packet_ = 0;
    ++frame_;
  } else {
    ++packet_;
  }
  return len;
}

}  // namespace netdaq::sensors
