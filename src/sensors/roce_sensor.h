// A RoCEv2 sensor in software (issue 32): what an FPGA sensor (Holoscan Sensor Bridge and
// others) puts on the wire, as whole Ethernet frames for a TX queue that sends them as they
// are (EngineCapabilities::tx_whole_frames: afxdp.tx_raw_frames, dpdk.tx_raw_frames). UC RDMA
// WRITEs into a remote queue pair's ring, frame f into slot f % slots at va + slot * stride,
// the sensor test pattern as payload (netdaq/sensor_pattern.h, seq = frame number), the frame's
// last packet a WRITE with immediate (the frame number), the PSN +1 per packet (24 bits), a
// correct ICRC (or a wrong one every N packets, for tests). Pacing is the TX queue's
// (tx.rate_mbps / rate_pps). Only public headers here: the CLI uses it (netdaq roce-send).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "netdaq/burst.h"

namespace netdaq::sensors {

// The receiving queue pair and its ring, as the rdma engine's manual peer file declares it
// (rx[i]: qpn, psn, ring{addr, rkey, slots, stride, slot_size}; docs/rdma-engine.md).
struct RoceRemoteQp {
  uint32_t qpn = 0;
  uint32_t psn = 0;         // the first PSN sent
  uint64_t va = 0;          // ring.addr
  uint32_t rkey = 0;
  uint32_t slots = 0;
  uint64_t stride = 0;
  uint64_t slot_size = 0;
  uint32_t ipv4 = 0;        // from the file's gid when it is IPv4-mapped (::ffff:a.b.c.d), host order; 0 otherwise
};

// rx[index] of a manual QP file. Throws netdaq::Error naming the file and what is wrong.
RoceRemoteQp read_roce_peer_file(const std::string& path, size_t index = 0);

enum class RoceSendOp : uint8_t {
  write_only,  // each packet a UC WRITE ONLY with its own RETH (HSB style)
  message,     // each frame one UC WRITE message: FIRST (RETH), MIDDLE..., LAST
};

struct RoceSensorConfig {
  RoceRemoteQp qp;
  std::array<uint8_t, 6> src_mac{}, dst_mac{};
  uint32_t src_ip = 0, dst_ip = 0;  // IPv4, host order
  uint16_t src_port = 49152;
  uint16_t dst_port = 4791;
  uint32_t mtu = 1024;              // RoCE path MTU: payload bytes per packet (256, 512, 1024, 2048, 4096)
  uint32_t frame_bytes = 0;         // bytes per frame (message); at most the ring's slot_size
  RoceSendOp op = RoceSendOp::write_only;
  bool with_immediate = true;       // the frame's last packet carries the frame number
  uint32_t corrupt_icrc_every = 0;  // > 0: every Nth packet (N, 2N, ... counted from 1) gets a wrong ICRC
};

class RoceSensor {
 public:
  // Checks the config (throws netdaq::Error saying which value is wrong).
  explicit RoceSensor(const RoceSensorConfig& c);
  ~RoceSensor();
  RoceSensor(const RoceSensor&) = delete;
  RoceSensor& operator=(const RoceSensor&) = delete;

  // Fills every packet of `burst` with the next packets of the stream (whole frames from the
  // Ethernet header) and sets their sizes. Returns the packets filled: fewer when a buffer is
  // too small for a packet (the rest keep size 0). Never allocates.
  size_t fill(TxBurst& burst) noexcept;
  // Writes the next packet into out; returns its bytes, 0 (nothing advanced) when out is too
  // small for it.
  uint32_t next_packet(std::span<std::byte> out) noexcept;

  uint32_t packets_per_frame() const noexcept { return per_frame_; }
  // Bytes on the wire of one frame's packets (Ethernet header to ICRC).
  uint64_t wire_bytes_per_frame() const noexcept { return wire_per_frame_; }
  uint32_t max_packet_bytes() const noexcept;
  uint64_t frames_started() const noexcept { return frame_ + (packet_ ? 1 : 0); }
  uint64_t frames_done() const noexcept { return frame_; }  // frames whose last packet was filled
  uint64_t packets() const noexcept { return packets_; }
  uint64_t corrupted() const noexcept { return corrupted_; }
  uint32_t next_psn() const noexcept { return psn_; }
  const RoceSensorConfig& config() const noexcept { return c_; }

 private:
  RoceSensorConfig c_;
  uint32_t per_frame_ = 0;
  uint64_t wire_per_frame_ = 0;
  std::vector<std::byte> payload_;  // one packet's payload, built before it is framed
  uint64_t frame_ = 0;              // the frame being sent
  uint32_t packet_ = 0;             // its next packet
  uint32_t psn_ = 0;
  uint16_t ip_id_ = 0;
  uint64_t packets_ = 0, corrupted_ = 0;
};

}  // namespace netdaq::sensors
