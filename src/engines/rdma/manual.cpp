#include "engines/rdma/manual.h"

#include <chrono>
#include <cstring>

#include "core/log.h"
#include "netdaq/burst.h"

namespace netdaq::detail::rdma {

namespace {

constexpr auto kPeerFilePoll = std::chrono::milliseconds(20);
constexpr uint8_t kPort = 1;

ibv_mtu mtu_enum(uint32_t mtu) {
  switch (mtu) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default: return IBV_MTU_1024;
  }
}

// The GID an IP has on RoCE: IPv4 mapped into IPv6 (::ffff:a.b.c.d), or the IPv6 address.
ibv_gid gid_of(const IpAddress& ip) {
  ibv_gid g{};
  if (ip.is_v4()) {
    g.raw[10] = g.raw[11] = 0xff;
    std::memcpy(g.raw + 12, ip.bytes.data(), 4);
  } else {
    std::memcpy(g.raw, ip.bytes.data(), 16);
  }
  return g;
}

}  // namespace

ManualLink::ManualLink(const Endpoint& address, const RdmaOptions& o, const std::string& context)
    : options_(o), context_(context) {
  Endpoint any_port = address;
  any_port.port = 0;
  bound_ = bound_cm_id(nullptr, RdmaTransport::rc, to_sockaddr(any_port));  // only to find the device
  if (!bound_)
    throw Error(Errc::not_found, context_ + ": rdma_bind_addr " + address.host + ": " + last_error() +
                                     " (no local interface has that address?)");
  if (!bound_->verbs)
    throw Error(Errc::not_found, context_ + ": no RDMA device holds " + address.host +
                                     " (rdma link show; for Soft-RoCE: rdma link add rxe0 type rxe netdev <netdev>)");
  memory_ = std::make_unique<DeviceMemory>(bound_->verbs);
  if (ibv_query_gid(bound_->verbs, kPort, static_cast<int>(o.gid_index), &gid_) != 0)
    throw Error(Errc::invalid_config, context_ + ": rdma.gid_index " + std::to_string(o.gid_index) + " on " +
                                          device_name(bound_->verbs) + ": ibv_query_gid: " + last_error());
  const ibv_gid want = gid_of(*address.ip);
  if (std::memcmp(gid_.raw, want.raw, 16) != 0) {
    std::string where;
    ibv_port_attr port{};
    if (ibv_query_port(bound_->verbs, kPort, &port) == 0)
      for (int i = 0; i < port.gid_tbl_len && where.empty(); ++i) {
        ibv_gid g{};
        if (ibv_query_gid(bound_->verbs, kPort, i, &g) == 0 && std::memcmp(g.raw, want.raw, 16) == 0)
          where = "; " + gid_text(want) + " is at index " + std::to_string(i);
      }
    throw Error(Errc::invalid_config, context_ + ": rdma.gid_index " + std::to_string(o.gid_index) + " of " +
                                          device_name(bound_->verbs) + " holds " + gid_text(gid_) + ", not " +
                                          address.host + "'s GID" + where);
  }
  state_ = "waiting for rdma.peer_file " + o.peer_file;
}

ManualLink::~ManualLink() { stop(); }

QueuePair ManualLink::create_qp(ibv_cq* cq, uint32_t send_wr, uint32_t recv_wr, uint32_t max_inline,
                                const std::string& context) {
  const bool rc = options_.transport == RdmaTransport::rc;
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = rc ? IBV_QPT_RC : IBV_QPT_UC;
  init.cap.max_send_wr = send_wr;
  init.cap.max_recv_wr = recv_wr;
  init.cap.max_send_sge = kMaxSegments;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = max_inline;
  QueuePair qp(ibv_create_qp(memory_->pd(), &init));
  if (!qp)
    throw Error(Errc::resource, context + ": ibv_create_qp (" + to_string(options_.transport) + ", " +
                                    std::to_string(send_wr) + " sends, " + std::to_string(recv_wr) + " receives): " +
                                    last_error());
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = kPort;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  if (ibv_modify_qp(qp.get(), &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
    throw Error(Errc::system, context + ": queue pair to INIT: " + last_error());
  return qp;
}

void ManualLink::add(ManualQueue* q, ibv_qp* qp, bool rx) { (rx ? rx_ : tx_).push_back({q, qp}); }

void ManualLink::write_local(bool with_rx) {
  if (options_.local_file.empty()) return;
  LinkParams mine;
  mine.gid = gid_;
  if (with_rx)
    for (const auto& e : rx_) mine.rx.push_back(e.queue->local_params());
  for (const auto& e : tx_) mine.tx.push_back(e.queue->local_params());
  write_params(options_.local_file, mine);
}

void ManualLink::start() {
  rx_paired_ = rx_.empty();
  tx_paired_ = tx_.empty();
  write_local(false);  // the rx entries once the receiving queue pairs are in RTR
  std::string qps;
  for (const auto& e : rx_) qps += (qps.empty() ? "rx " : ", rx ") + std::to_string(e.qp->qp_num);
  for (const auto& e : tx_) qps += (qps.empty() ? "tx " : ", tx ") + std::to_string(e.qp->qp_num);
  log()->info("{}: queue pairs {} (gid {}); pairing from rdma.peer_file {}", context_, qps, gid_text(gid_),
              options_.peer_file);
  thread_ = std::make_unique<std::thread>([this] { run(); });
}

void ManualLink::stop() noexcept {
  stop_.store(true);
  if (thread_ && thread_->joinable()) thread_->join();
  thread_.reset();
}

std::string ManualLink::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

void ManualLink::set_state(std::string s) {
  std::lock_guard lock(mu_);
  state_ = std::move(s);
}

void ManualLink::run() noexcept {
  const auto warn_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  bool warned = false;
  std::string bad_file;  // what was wrong with the peer file last time (it may be rewritten)
  while (!stop_.load(std::memory_order_relaxed)) {
    std::optional<LinkParams> peer;
    try {
      peer = read_params(options_.peer_file);
    } catch (const std::exception& e) {
      if (e.what() != bad_file) log()->error("{}: {}", context_, e.what());
      bad_file = e.what();
      set_state("waiting for a valid rdma.peer_file: " + bad_file);
    }
    if (peer) {
      try {
        if (!rx_paired_) rx_paired_ = pair_rx(*peer);
        if (!tx_paired_) tx_paired_ = pair_tx(*peer);
      } catch (const std::exception& e) {
        log()->error("{}", e.what());
        set_state(std::string("failed: ") + e.what());
        return;
      }
      if (rx_paired_ && tx_paired_) {
        set_state("paired with " + gid_text(peer->gid));
        log()->info("{}: {} queue pairs paired with {} from rdma.peer_file {}", context_, rx_.size() + tx_.size(),
                    gid_text(peer->gid), options_.peer_file);
        return;
      }
    }
    if (!warned && std::chrono::steady_clock::now() > warn_at) {
      log()->warn("{}: still waiting for rdma.peer_file {} after {} ms", context_, options_.peer_file, options_.timeout_ms);
      warned = true;
    }
    std::this_thread::sleep_for(kPeerFilePoll);
  }
}

// Receiving queue pairs: as soon as the peer lists its senders; then this side's file gains
// its rx entries (the peer's senders wait for them).
bool ManualLink::pair_rx(const LinkParams& peer) {
  if (peer.tx.size() < rx_.size()) {
    set_state("waiting for " + std::to_string(rx_.size()) + " tx entries in rdma.peer_file " + options_.peer_file);
    return false;
  }
  for (size_t i = 0; i < rx_.size(); ++i) pair(rx_[i], peer.tx[i], peer.gid, "rx", i);
  write_local(true);
  return true;
}

// Sending queue pairs: once the peer lists its receivers (in RTR by then).
bool ManualLink::pair_tx(const LinkParams& peer) {
  if (peer.rx.size() < tx_.size()) {
    set_state("waiting for " + std::to_string(tx_.size()) + " rx entries in rdma.peer_file " + options_.peer_file);
    return false;
  }
  for (size_t i = 0; i < tx_.size(); ++i) pair(tx_[i], peer.rx[i], peer.gid, "tx", i);
  return true;
}

// RTR then RTS, paired with the peer's queue pair of the other direction.
void ManualLink::pair(const Entry& e, const QueueParams& remote, const ibv_gid& peer_gid, const char* dir, size_t i) {
  const bool rc = options_.transport == RdmaTransport::rc;
  const std::string what = context_ + ": " + dir + " queue pair " + std::to_string(i) + " (qpn " +
                           std::to_string(e.qp->qp_num) + ") with the peer's qpn " + std::to_string(remote.qpn);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = mtu_enum(options_.mtu);
  a.dest_qp_num = remote.qpn;
  a.rq_psn = remote.psn;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer_gid;
  a.ah_attr.grh.sgid_index = static_cast<uint8_t>(options_.gid_index);
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.port_num = kPort;
  int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
  if (rc) {
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = static_cast<uint8_t>(options_.min_rnr_timer);
    mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  }
  if (ibv_modify_qp(e.qp, &a, mask) != 0)
    throw Error(Errc::system, what + ": to RTR: " + last_error() + " (peer gid " + gid_text(peer_gid) + ")");
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = options_.local_psn;
  mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
  if (rc) {
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 1;
    mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
  }
  if (ibv_modify_qp(e.qp, &a, mask) != 0) throw Error(Errc::system, what + ": to RTS: " + last_error());
  e.queue->peer_ready(remote);
}

}  // namespace netdaq::detail::rdma
