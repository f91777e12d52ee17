// connect: manual, the FPGA pattern: queue pairs made by hand on the device holding the
// interface's address, moved to RTR and RTS from the peer's parameters (rdma.peer_file), this
// side's written for the peer (rdma.local_file). No rdma_cm on either side.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engines/rdma/device_memory.h"
#include "engines/rdma/qp_params.h"
#include "engines/rdma/verbs.h"
#include "net/endpoint.h"
#include "netdaq/engines/rdma.h"

namespace netdaq::detail::rdma {

// What a port with a manual queue pair gives the link and takes from it.
class ManualQueue {
 public:
  virtual ~ManualQueue() = default;
  // This side's queue pair: its QPN, PSN and ring (rx, write_imm) or credit word (tx, write_imm).
  virtual QueueParams local_params() const = 0;
  // The queue pair is in RTS, paired with `peer`: take its ring or credit and start.
  // Throws Error when `peer` lacks what this queue needs (e.g. a ring for write_imm).
  virtual void peer_ready(const QueueParams& peer) = 0;
};

class ManualLink {
 public:
  // Finds the device holding address's IP and checks that rdma.gid_index is its GID there.
  ManualLink(const Endpoint& address, const RdmaOptions& o, const std::string& context);
  ~ManualLink();

  DeviceMemory& memory() noexcept { return *memory_; }
  // A queue pair of rdma.transport in INIT, on `cq`.
  QueuePair create_qp(ibv_cq* cq, uint32_t send_wr, uint32_t recv_wr, uint32_t max_inline, const std::string& context);
  void add(ManualQueue* q, ibv_qp* qp, bool rx);
  // Writes rdma.local_file, then pairs the queue pairs from rdma.peer_file on a thread of its
  // own as soon as that file is there (it may be written after this side starts).
  void start();
  void stop() noexcept;
  std::string state() const;  // for the queues' stats mode line

 private:
  struct Entry {
    ManualQueue* queue;
    ibv_qp* qp;
  };
  void run() noexcept;
  // Pairs the queue pairs of one direction whose peer entries are there; true once done.
  bool pair_rx(const LinkParams& peer);
  bool pair_tx(const LinkParams& peer);
  void pair(const Entry& e, const QueueParams& remote, const ibv_gid& peer_gid, const char* dir, size_t i);
  void write_local(bool with_rx);
  void set_state(std::string s);

  RdmaOptions options_;
  std::string context_;
  CmId bound_;  // keeps the device the address resolved to open
  std::unique_ptr<DeviceMemory> memory_;
  ibv_gid gid_{};
  std::vector<Entry> rx_, tx_;
  bool rx_paired_ = false, tx_paired_ = false;
  mutable std::mutex mu_;
  std::string state_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<std::thread> thread_;
};

}  // namespace netdaq::detail::rdma
