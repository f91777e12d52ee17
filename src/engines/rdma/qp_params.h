// Queue-pair parameters exchanged out of band with connect: manual (the FPGA pattern: no
// rdma_cm on either side): each side writes its own as JSON (rdma.local_file) and reads the
// peer's (rdma.peer_file). docs/rdma-engine.md shows the format:
//
//   {"gid": "::ffff:10.0.0.1",
//    "rx": [{"qpn": 17, "psn": 0, "ring": {"addr": ..., "rkey": ..., "slots": 64, "stride": 2048, "slot_size": 2048},
//            "credits": true}],
//    "tx": [{"qpn": 18, "psn": 0, "credit": {"addr": ..., "rkey": ...}}]}
//
// The peer's tx[i] sends to my rx[i]; my tx[i] sends to the peer's rx[i]. "ring": a receiver
// taking RDMA WRITE with immediate, "credits": it writes credits back (netdaq; an FPGA does not,
// and a sender to it is not held back); "credit": a sender's word for them (netdaq; an FPGA has none).
//
// Order (so that no message meets a queue pair not yet ready, which UC would lose): a side
// writes its tx entries when it starts; it adds its rx entries once the peer's tx entries came
// and its receiving queue pairs are in RTR; a sender starts when the peer's rx entries are there.
#pragma once

#include <infiniband/verbs.h>

#include <optional>
#include <string>
#include <vector>

#include "engines/rdma/wire.h"

namespace netdaq::detail::rdma {

struct QueueParams {
  uint32_t qpn = 0;
  uint32_t psn = 0;                   // the PSN this queue pair sends from (the peer's rq_psn)
  std::optional<RingOffer> ring;      // rx, write_imm: where the sender writes
  bool credits = false;               // rx, write_imm: writes credits into the sender's word
  std::optional<CreditOffer> credit;  // tx, write_imm: the word credits are written into
};

struct LinkParams {
  ibv_gid gid{};
  std::vector<QueueParams> rx, tx;
};

// Writes `p` to `path` (a temporary file renamed over it: a reader never sees half of it).
// Throws Error naming the file.
void write_params(const std::string& path, const LinkParams& p);
// Reads `path`: nullopt while it does not exist or is empty; throws Error saying what is wrong with it.
std::optional<LinkParams> read_params(const std::string& path);

std::string gid_text(const ibv_gid& gid);  // "::ffff:10.0.0.1"

}  // namespace netdaq::detail::rdma
