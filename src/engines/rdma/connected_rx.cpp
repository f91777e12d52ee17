// What both kinds of rdma rx queue share: the completion queue, the queue pair made on the
// connection the listener hands over, and the accept.
#include "core/log.h"
#include "engines/rdma/ports.h"

namespace netdaq::detail::rdma {

std::string queue_context(const QueueResources& q, bool rx) {
  return "rdma engine: interface '" + q.iface->name + "' " + (rx ? "rx" : "tx") + " queue '" + q.name + "'";
}

ConnectedRx::ConnectedRx(const QueueResources& q, const RdmaOptions& o, DeviceMemory& memory, uint32_t send_depth)
    : q_(q), options_(o), context_(queue_context(q, true)), send_depth_(send_depth) {
  mr_ = memory.registration(q.pools[0]->region(), context_);
  const int cqe = static_cast<int>(o.recv_depth + send_depth + 1);
  cq_.reset(ibv_create_cq(memory.device(), cqe, nullptr, nullptr, 0));
  if (!cq_) throw Error(Errc::resource, context_ + ": ibv_create_cq(" + std::to_string(cqe) + "): " + last_error());
}

// The queue pair goes first (its receives stop being DMA targets), then the CQ.
ConnectedRx::~ConnectedRx() { conn_.reset(); }

void ConnectedRx::accept(CmId& id, const std::vector<uint8_t>& peer) {
  if (conn_.id()) {  // the old connection is drained: the receiving thread no longer uses it
    qp_.store(nullptr, std::memory_order_release);
    conn_.reset();
    restart();
  }
  credit(from_bytes<CreditOffer>(peer), true);
  ibv_qp_init_attr attr{};
  attr.send_cq = cq_.get();
  attr.recv_cq = cq_.get();
  attr.qp_type = qp_type_of(options_.transport);
  attr.cap.max_send_wr = send_depth_;
  attr.cap.max_recv_wr = options_.recv_depth;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = 8;  // credits (write_imm) go inline
  if (rdma_create_qp(id.get(), mr_->pd, &attr) != 0)
    throw Error(Errc::resource, context_ + ": rdma_create_qp (recv_depth " + std::to_string(options_.recv_depth) +
                                    "): " + last_error());
  struct QpGuard {  // the queue pair goes again when the accept fails (the id stays the caller's)
    rdma_cm_id* id;
    ~QpGuard() {
      if (id) rdma_destroy_qp(id);
    }
  } guard{id.get()};
  post_receives(id->qp);
  const auto offer = ring();
  const std::vector<uint8_t> data = offer ? to_bytes(*offer) : std::vector<uint8_t>();
  rdma_conn_param param{};
  param.private_data = data.empty() ? nullptr : data.data();
  param.private_data_len = static_cast<uint8_t>(data.size());
  param.rnr_retry_count = 7;
  if (rdma_accept(id.get(), &param) != 0) throw Error(Errc::system, context_ + ": rdma_accept: " + last_error());
  guard.id = nullptr;
  CmConnection conn(std::move(id));
  // How long the peer backs off when it finds no receive posted (rdma_cm set its own value
  // when it moved the queue pair to RTR); a short timer keeps an RC sender from stalling.
  ibv_qp_attr rnr{};
  rnr.min_rnr_timer = static_cast<uint8_t>(options_.min_rnr_timer);
  if (options_.transport == RdmaTransport::rc && ibv_modify_qp(conn.qp(), &rnr, IBV_QP_MIN_RNR_TIMER) != 0)
    log()->debug("{}: min_rnr_timer {} not applied: {}", context_, options_.min_rnr_timer, last_error());
  conn_ = std::move(conn);
  drained_.store(false, std::memory_order_relaxed);
  peer_gone_.store(false, std::memory_order_release);
  qp_.store(conn_.qp(), std::memory_order_release);
  q_.counters->connections.fetch_add(1, std::memory_order_relaxed);
}

void ConnectedRx::use_manual_qp(QueuePair qp, const ManualLink* link) {
  manual_qp_ = std::move(qp);
  link_ = link;
  post_receives(manual_qp_.get());
}

QueueParams ConnectedRx::local_params() const {
  const auto r = ring();
  return {.qpn = manual_qp_->qp_num, .psn = options_.local_psn, .ring = r, .credits = r.has_value(), .credit = std::nullopt};
}

void ConnectedRx::peer_ready(const QueueParams& peer) {
  credit(peer.credit, false);
  qp_.store(manual_qp_.get(), std::memory_order_release);
  q_.counters->connections.fetch_add(1, std::memory_order_relaxed);
}

void ConnectedRx::disconnected() noexcept {
  peer_gone_.store(true, std::memory_order_release);
  // rdma_disconnect moves the queue pair to the error state: its posted receives come back
  // as flushed completions, which receive() takes as "no packet"; once all are back the
  // queue takes the next connection.
  if (conn_.id()) rdma_disconnect(conn_.id());
  if (posted_.load(std::memory_order_acquire) == 0) drained_.store(true, std::memory_order_release);
}

void ConnectedRx::completion_error(const ibv_wc& wc) noexcept {
  if (wc.status == IBV_WC_WR_FLUSH_ERR) {  // the connection ended: nothing was lost here
    flushed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  completion_errors_.fetch_add(1, std::memory_order_relaxed);
  // A message longer than the buffer: lost, and the queue pair is now in the error state.
  q_.counters->drop(wc.status == IBV_WC_LOC_LEN_ERR ? DropReason::oversize : DropReason::malformed);
  error_log_.log([&](uint64_t suppressed) {
    log()->warn("{}: completion {} ({}){}", context_, ibv_wc_status_str(wc.status), int(wc.status),
                suppressed ? fmt::format(" ({} more since)", suppressed) : std::string());
  });
}

std::string ConnectedRx::mode() const {
  std::string s = std::string("rdma ") + to_string(options_.transport) + " " + to_string(options_.op);
  if (link_) return s + " manual, " + link_->state();
  return s + (qp_.load(std::memory_order_relaxed) ? " connected" : " waiting for a connection") +
         (peer_gone_.load(std::memory_order_relaxed) ? " (peer gone)" : "");
}

}  // namespace netdaq::detail::rdma
