// Options of the rdma engine (rdma-core verbs: RoCE, InfiniBand, Soft-RoCE); docs/rdma-engine.md.
// The block `rdma:` of an interface; on another engine's interface, options that differ from
// these defaults are a validation error.
//
//   address: rdma://IP:PORT         rx queues accept connections there (rdma_cm), one each
//   tx.destination: rdma://IP:PORT  each tx queue connects its own queue pair there (and again
//                                   whenever the server goes away and comes back)
//   connect: manual                 no rdma_cm: queue pairs set up from the peer's parameters
//                                   (the FPGA pattern), address: rdma://IP names the device
#pragma once

#include <cstdint>
#include <string>

namespace netdaq {

inline constexpr const char* kRdmaEngine = "rdma";

enum class RdmaTransport : uint8_t {
  rc,  // reliable connected: acknowledged, retransmitted, nothing lost
  uc,  // unreliable connected: no acks; a lost message is a gap in the sequence (through
       // rdma_cm: port space RDMA_PS_IB, so both sides must say uc)
};
const char* to_string(RdmaTransport t) noexcept;

enum class RdmaConnect : uint8_t {
  cm,      // rdma_cm: a server listening on IP:PORT, clients connecting to it
  manual,  // queue pairs moved to RTS from the peer's QPN, PSN and GID (no rdma_cm either side)
};
const char* to_string(RdmaConnect c) noexcept;

enum class RdmaOp : uint8_t {
  send,       // SEND / RECV: the receiver's posted buffers take the messages
  write_imm,  // RDMA WRITE with immediate into the receiver's region; the immediate is the
              // message's sequence number and picks the slot it is written to
};
const char* to_string(RdmaOp o) noexcept;

struct RdmaOptions {
  static constexpr const char* kKey = "rdma";
  RdmaTransport transport = RdmaTransport::rc;
  RdmaConnect connect = RdmaConnect::cm;
  RdmaOp op = RdmaOp::send;     // how messages travel (both sides must agree)
  uint32_t send_depth = 256;    // work requests in flight per tx queue (counted in the pool budget)
  uint32_t recv_depth = 512;    // receives posted per rx queue (buffers lent to the NIC)
  uint32_t max_inline = 64;     // messages up to this many bytes go inline (0: never)
  uint32_t signal_every = 16;   // a completion asked for every N sends (1: each)
  uint32_t min_rnr_timer = 1;   // RC: 0.01 ms before the sender retries a receiver with no
                                // receive posted (IB encoding 1..31; DAQIRI's 12 is 0.64 ms)
  uint32_t timeout_ms = 5000;   // connection setup (address, route, connect, accept)
  // manual: this side's and the peer's queue-pair parameters.
  uint32_t gid_index = 1;       // local GID table entry (RoCEv2 for the IPv4 address on rxe: 1)
  uint32_t mtu = 1024;          // path MTU: 256, 512, 1024, 2048 or 4096
  uint32_t local_psn = 0;       // first packet sequence number this side sends
  std::string peer_file;        // JSON with the peer's qpn, psn, gid (and addr, rkey, slots for
                                // write_imm), e.g. written by the peer's local_file
  std::string local_file;       // JSON with this side's parameters, written when the QP exists
};

}  // namespace netdaq
