// rdma engine ports (rx.cpp, tx.cpp) and the server side that hands connections to rx queues
// (listener.cpp).
//
//   rx queue  a completion queue and the queue pair of the connection the listener gave it;
//             send: pool buffers posted as receives (rdma.recv_depth), each completion a
//             packet of its real length; write_imm: a ring of rdma.recv_depth buffers the
//             sender writes into, the immediate naming the slot, credits written back
//   tx queue  its own rdma_cm connection to tx.destination; SENDs (or WRITEs with immediate
//             into the receiver's ring, within its credit) from pool buffers, inline up to
//             rdma.max_inline, a completion asked for every rdma.signal_every sends
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/engine.h"
#include "engines/rdma/device_memory.h"
#include "engines/rdma/manual.h"
#include "engines/rdma/verbs.h"
#include "engines/rdma/wire.h"
#include "net/endpoint.h"
#include "netdaq/engines/rdma.h"
#include "util/rate_limited_log.h"

namespace netdaq::detail::rdma {

// "rdma engine: interface 'a' rx queue 'a/rx0'"
std::string queue_context(const QueueResources& q, bool rx);

// An rx queue holding one rdma_cm connection at a time (given by the Listener). The two kinds
// differ in how messages arrive: SendRecvPort (rx.cpp) posts pool buffers as receives,
// RingRecvPort (rx_ring.cpp) lends a ring of buffers the sender writes into (write_imm).
class ConnectedRx : public RxPort, public ManualQueue {
 public:
  ConnectedRx(const QueueResources& q, const RdmaOptions& o, DeviceMemory& memory, uint32_t send_depth);
  ~ConnectedRx() override;

  const QueueResources& resources() const noexcept override { return q_; }

  // Listener thread: is this queue free for a new connection? (never connected, or its peer
  // went away and every receive of the old queue pair came back)
  bool idle() const noexcept { return !conn_.id() || drained_.load(std::memory_order_acquire); }
  // Listener thread: creates the queue pair on `id`, posts the receives, then accepts with
  // this queue's private data, and takes `id`. `peer_data`: the connecting side's private
  // data. Throws Error, leaving `id` to the caller (who rejects the request).
  void accept(CmId& id, const std::vector<uint8_t>& peer_data);
  // Listener thread: the peer went away; the queue pair's receives are flushed back.
  void disconnected() noexcept;
  rdma_cm_id* connection_id() const noexcept { return conn_.id(); }

  // connect: manual: the queue pair `link` made (INIT); the receives are posted on it now,
  // the queue starts once the link pairs it (peer_ready).
  void use_manual_qp(QueuePair qp, const ManualLink* link);
  ibv_qp* manual_qp() const noexcept { return manual_qp_.get(); }
  QueueParams local_params() const override;
  void peer_ready(const QueueParams& peer) override;
  ibv_cq* cq() const noexcept { return cq_.get(); }
  uint32_t send_depth() const noexcept { return send_depth_; }

 protected:
  // Before the accept: post the receives on `qp` (the first message finds one waiting).
  virtual void post_receives(ibv_qp* qp) = 0;
  // The ring this queue offers the sender (write_imm), and where the sender wants credits
  // (`required`: a netdaq sender through rdma_cm always offers a credit word; an FPGA does
  // not). Throws Error when a required offer is missing.
  virtual std::optional<RingOffer> ring() const { return std::nullopt; }
  virtual void credit(const std::optional<CreditOffer>& offer, bool required) { (void)offer, (void)required; }
  // Listener thread, before a new connection replaces a drained one: the queue's own state
  // back to a fresh start (SendRecv: a pool buffer in every slot; ring: sequence and credit
  // from 0). Throws Error (the request is rejected).
  virtual void restart() {}
  // The receiving thread: receives were posted / came back (completed or flushed); once the
  // peer is gone and none is left, the queue may take a new connection.
  void posted(uint32_t n) noexcept { posted_.fetch_add(n, std::memory_order_relaxed); }
  void returned(uint32_t n) noexcept {
    if (posted_.fetch_sub(n, std::memory_order_relaxed) == n && peer_gone_.load(std::memory_order_acquire))
      drained_.store(true, std::memory_order_release);
  }
  // Destroys the queue pair now (a derived port's destructor, before it frees its buffers).
  void release_queue_pair() noexcept {
    conn_.reset();
    manual_qp_.reset();
  }
  // Logs a failed completion (rate-limited) and counts it.
  void completion_error(const ibv_wc& wc) noexcept;
  std::string mode() const;

  QueueResources q_;
  RdmaOptions options_;
  std::string context_;
  ibv_mr* mr_ = nullptr;
  CompletionQueue cq_;
  std::atomic<ibv_qp*> qp_{nullptr};  // set once the receives are posted
  std::atomic<bool> peer_gone_{false};
  std::atomic<bool> drained_{false};   // peer gone and no receive left on its queue pair
  std::atomic<uint32_t> posted_{0};    // receives on the queue pair
  std::atomic<uint64_t> completion_errors_{0}, flushed_{0};

 private:
  CmConnection conn_;
  QueuePair manual_qp_;
  const ManualLink* link_ = nullptr;
  uint32_t send_depth_;
  RateLimitedLog error_log_;
};

std::unique_ptr<ConnectedRx> open_send_recv_port(const QueueResources& q, const RdmaOptions& o, DeviceMemory& memory);
std::unique_ptr<ConnectedRx> open_ring_recv_port(const QueueResources& q, const RdmaOptions& o, DeviceMemory& memory);

// A tx queue through rdma_cm, which connects again whenever its peer goes away, until
// stop_watching() (the session is closing: its own server may go first).
class CmTxPort : public TxPort {
 public:
  virtual void stop_watching() noexcept = 0;
};

// Connects from `source` (the interface's address, when set) to `destination`; blocks up to
// rdma.timeout_ms per step. Throws Error saying which step failed and why.
std::unique_ptr<CmTxPort> open_send_port(const QueueResources& q, const RdmaOptions& o,
                                       const std::optional<Endpoint>& source, const Endpoint& destination,
                                       std::vector<std::unique_ptr<DeviceMemory>>& devices);

// connect: manual: a tx queue with a queue pair `link` pairs from the peer file.
std::unique_ptr<TxPort> open_manual_send_port(const QueueResources& q, const RdmaOptions& o, ManualLink& link);

// The rdma_cm server of an interface: listens on its address and gives each connection
// request to an idle rx queue, from a thread of its own (setup work, never the data path).
class Listener {
 public:
  Listener(const Endpoint& address, const RdmaOptions& o, const std::string& context);
  ~Listener();
  ibv_context* device() const noexcept { return id_->verbs; }
  // Adds an rx queue to those connections go to; the first one starts the thread (a tx queue
  // of the same session may connect before the session has opened every queue).
  void add_queue(ConnectedRx* port);
  void stop() noexcept;

 private:
  void run() noexcept;
  void on_event(const CmEvent& e) noexcept;

  RdmaOptions options_;
  std::string context_;
  EventChannel channel_;
  CmId id_;
  std::mutex mu_;  // ports_: added by the opening thread, read by the listener's
  std::vector<ConnectedRx*> ports_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<std::thread> thread_;
};

}  // namespace netdaq::detail::rdma
