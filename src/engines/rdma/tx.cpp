// rdma tx queue: its own rdma_cm connection (RC) to tx.destination and SENDs, or RDMA WRITEs
// with immediate into the receiver's ring (op write_imm: message seq to slot seq % slots,
// the immediate carrying seq, never beyond the credit the receiver writes back), from the
// application's pool buffers. The buffers stay with the port until the device is done with
// them: a completion is asked for every rdma.signal_every sends (and for the send that fills
// the queue), and it releases every send before it, in order. A full send queue, or a ring
// with no credit left, refuses the packet for now (the caller retries; counted in the engine
// counters refused_send_queue_full / refused_no_credit); nothing blocks.
//
// Through rdma_cm a thread of the port's own watches the connection: when the peer goes away
// (DISCONNECTED, or a failed send), the sending thread stops posting (transmit takes nothing)
// and collects every send back from the old queue pair; then the watcher connects anew, with
// back-off, and hands the new queue pair over. The application only sees transmit take
// nothing for a while; `connections` counts each connection made.
#include <arpa/inet.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/log.h"
#include "engines/rdma/ports.h"
#include "engines/rdma/wire.h"
#include "util/errno_text.h"

namespace netdaq::detail::rdma {

namespace {

constexpr int kPollBatch = 32;
constexpr int kWatchMs = 100;  // how often the watcher looks at the stop flag and the link
constexpr uint64_t kMarker = UINT64_MAX;  // wr_id of the send that marks a broken link drained
constexpr std::chrono::milliseconds kFirstRetry{100}, kLastRetry{2000};  // reconnect back-off

// Where a cm tx queue's connection stands. Only the watcher moves it from up or to up; only
// the sending thread moves it from broken to drained.
enum class Link : uint8_t {
  up,       // sends go to qp_
  broken,   // the peer is gone: nothing is posted; the sending thread collects the sends back
  drained,  // every send came back: the watcher owns the queue pair and the CQ, and reconnects
};

class SendPort final : public CmTxPort, public ManualQueue {
 public:
  SendPort(const QueueResources& q, const RdmaOptions& o) : q_(q), options_(o), context_(queue_context(q, false)) {
    inflight_.resize(o.send_depth);
  }
  ~SendPort() override {
    stop_watching();
    if (conn_.id()) rdma_disconnect(conn_.id());
    conn_.reset();
    manual_qp_.reset();
    release_up_to(posted_);  // the queue pair is gone: the device holds no buffer any more
  }

  // connect: manual: a queue pair made by `link`, paired later (peer_ready).
  void use_manual(ManualLink& link) {
    link_ = &link;
    DeviceMemory& memory = link.memory();
    mr_ = memory.registration(q_.pools[0]->region(), context_);
    cq_.reset(ibv_create_cq(memory.device(), static_cast<int>(options_.send_depth + 1), nullptr, nullptr, 0));
    if (!cq_) throw Error(Errc::resource, context_ + ": ibv_create_cq: " + last_error());
    manual_qp_ = link.create_qp(cq_.get(), options_.send_depth, 1, options_.max_inline, context_);
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    max_inline_ = ibv_query_qp(manual_qp_.get(), &attr, IBV_QP_CAP, &init) == 0 ? init.cap.max_inline_data : 0;
    limit_inline();
    if (options_.op == RdmaOp::write_imm) credit_offer(memory.pd());
    link.add(this, manual_qp_.get(), false);
  }

  QueueParams local_params() const override {
    QueueParams p{.qpn = manual_qp_->qp_num, .psn = options_.local_psn};
    if (credit_mr_) p.credit = CreditOffer{.addr = reinterpret_cast<uintptr_t>(credit_word_), .rkey = credit_mr_->rkey};
    return p;
  }

  void peer_ready(const QueueParams& peer) override {
    if (options_.op == RdmaOp::write_imm) {
      if (!peer.ring)
        throw Error(Errc::invalid_config, context_ + ": the peer's rx queue pair " + std::to_string(peer.qpn) +
                                              " offers no ring (\"ring\" in rdma.peer_file): rdma.op write_imm writes "
                                              "into one");
      ring_ = *peer.ring;
      credit_limited_ = peer.credits;  // an FPGA receiver writes none: its ring is simply overwritten in turn
    }
    qp_.store(manual_qp_.get(), std::memory_order_release);
    q_.counters->connections.fetch_add(1, std::memory_order_relaxed);
  }

  // rdma_cm: connects now (throws Error saying which step failed), then watches the
  // connection from a thread of its own and connects anew whenever the peer goes away.
  void connect(const std::optional<Endpoint>& source, const Endpoint& dest,
               std::vector<std::unique_ptr<DeviceMemory>>& devices) {
    source_ = source;
    destination_ = dest;
    where_ = " to " + dest.to_string() + (source ? " from " + source->host : "");
    channel_.reset(rdma_create_event_channel());
    if (!channel_) throw Error(Errc::system, context_ + ": rdma_create_event_channel: " + last_error());
    adopt(establish([&](ibv_context* d) -> DeviceMemory& { return device_memory(d, devices); }));
    watcher_ = std::thread([this] { watch(); });
  }

  void stop_watching() noexcept override {
    stop_.store(true, std::memory_order_relaxed);
    if (watcher_.joinable()) watcher_.join();
  }

  TxResult transmit(Packet* pkts, uint32_t n) noexcept override {
    if (!link_up()) return {};  // reconnecting: the caller keeps the packets
    reap();
    TxResult r;
    ibv_send_wr wrs[kPollBatch];
    ibv_sge sges[kPollBatch][kMaxSegments];
    while (r.taken < n) {
      uint32_t batch = 0;
      while (batch < kPollBatch && r.taken + batch < n && posted_ + batch - completed_ < options_.send_depth) {
        Packet& p = pkts[r.taken + batch];
        auto& f = fields(p);
        const uint64_t slot = posted_ + batch;
        if (ring_.slots && credit_limited_ && slot >= credit() + ring_.slots) break;  // the receiver's ring is full
        if (ring_.slots && p.size() > ring_.slot_size) {  // would overrun the receiver's slot
          if (batch) break;                                // post the ones before it first
          return_buffers(q_, &p, 1);
          q_.counters->drop(DropReason::oversize);
          ++r.taken;
          continue;
        }
        auto& entry = inflight_[slot % options_.send_depth];
        entry.nseg = f.nseg;
        entry.size = p.size();
        for (unsigned s = 0; s < f.nseg; ++s) {
          entry.buf[s] = f.buf[s];
          sges[batch][s] = {reinterpret_cast<uintptr_t>(f.data[s]), f.len[s], mr_->lkey};
        }
        ibv_send_wr& w = wrs[batch];
        w = {};
        w.wr_id = slot;
        w.sg_list = sges[batch];
        w.num_sge = f.nseg;
        const uint32_t size = p.size();
        if (ring_.slots) {
          w.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
          w.imm_data = htonl(static_cast<uint32_t>(slot));
          w.wr.rdma.remote_addr = ring_.addr + (slot % ring_.slots) * ring_.stride;
          w.wr.rdma.rkey = ring_.rkey;
        } else {
          w.opcode = IBV_WR_SEND;
        }
        if (size <= max_inline_) w.send_flags |= IBV_SEND_INLINE;
        // Signalled: every signal_every-th send, and the one that fills the queue (else
        // nothing would ever complete and free it).
        if (++unsignalled_ >= options_.signal_every || slot + 1 - completed_ == options_.send_depth) {
          w.send_flags |= IBV_SEND_SIGNALED;
          unsignalled_ = 0;
        }
        if (batch) wrs[batch - 1].next = &w;
        r.sent_bytes += size;
        ++batch;
      }
      if (batch == 0) break;
      ibv_send_wr* bad = nullptr;
      ibv_qp* qp = qp_.load(std::memory_order_acquire);
      if (!qp) break;  // not connected yet (manual: not paired): the caller keeps the packets
      const int rc = ibv_post_send(qp, wrs, &bad);
      uint32_t ok = batch;
      if (rc != 0) {
        ok = 0;
        for (ibv_send_wr* w = wrs; w && w != bad; w = w->next) ++ok;
        // The rest are taken and dropped: a queue pair that refuses a post is in the error
        // state (peer gone); retrying would not help.
        const uint32_t failed = batch - ok;
        return_buffers(q_, pkts + r.taken + ok, failed);
        q_.counters->drop(DropReason::tx_error, failed);
        for (uint32_t i = ok; i < batch; ++i) r.sent_bytes -= pkts[r.taken + i].size();
        error_log_.log([&](uint64_t suppressed) {
          log()->warn("{}: ibv_post_send: {}{}", context_, errno_text(rc),
                      suppressed ? fmt::format(" ({} more since)", suppressed) : std::string());
        });
      }
      posted_ += ok;
      r.sent += ok;
      r.taken += batch;
      if (rc != 0) break;
    }
    if (r.taken < n) count_refused(n - r.taken);
    return r;
  }

  void poll_completions() noexcept override {
    if (state_.load(std::memory_order_acquire) != Link::drained) reap();
  }

  void add_details(QueueStats& s) const override {
    s.mode = std::string("rdma ") + to_string(options_.transport) + " " + to_string(options_.op) +
             (link_ ? " manual, " + link_->state() : "") + ", inline <= " + std::to_string(max_inline_) + " B" +
             (ring_.slots ? ", ring of " + std::to_string(ring_.slots) + " slots" : "") +
             (state_.load(std::memory_order_relaxed) != Link::up ? ", reconnecting" + where_ : "");
    s.engine_counters = {{"completion_errors", completion_errors_.load(std::memory_order_relaxed)},
                         {"sends_completed", completed_published_.load(std::memory_order_relaxed)},
                         {"refused_send_queue_full", refused_full_.load(std::memory_order_relaxed)},
                         {"refused_no_credit", refused_credit_.load(std::memory_order_relaxed)}};
  }

 private:
  // The sending thread: collects completions, giving back the buffers of every send done.
  void reap() noexcept {
    ibv_wc wcs[kPollBatch];
    const int got = ibv_poll_cq(cq_.get(), kPollBatch, wcs);
    for (int i = 0; i < got; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.wr_id == kMarker) {  // completions come in order: every send before it is done
        release_up_to(posted_);
        continue;
      }
      if (wc.status != IBV_WC_SUCCESS) {
        // This send failed and, the queue pair now in the error state, so does each one after
        // it (each comes back flushed, signalled or not): through rdma_cm, the watcher makes a
        // new connection. It was counted sent (`packets`, `bytes`) when posted: it moves to
        // tx_error, so that a flushed send counts once (offered == packets + tx_error + tx_unsent).
        const Inflight& e = inflight_[wc.wr_id % options_.send_depth];
        q_.counters->packets.fetch_sub(1, std::memory_order_relaxed);
        q_.counters->bytes.fetch_sub(e.size, std::memory_order_relaxed);
        q_.counters->drop(DropReason::tx_error);
        Link up = Link::up;
        if (channel_) state_.compare_exchange_strong(up, Link::broken, std::memory_order_acq_rel);
        completion_errors_.fetch_add(1, std::memory_order_relaxed);
        if (wc.status != IBV_WC_WR_FLUSH_ERR)
          error_log_.log([&](uint64_t suppressed) {
            log()->warn("{}: send completion {} ({}){}", context_, ibv_wc_status_str(wc.status), int(wc.status),
                        suppressed ? fmt::format(" ({} more since)", suppressed) : std::string());
          });
      }
      release_up_to(wc.wr_id + 1);
    }
    if (got > 0) completed_published_.store(completed_, std::memory_order_relaxed);
  }

  // The sending thread: `n` packets not taken now (the caller keeps them), and why.
  void count_refused(uint32_t n) noexcept {
    auto add = [n](std::atomic<uint64_t>& c) { c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); };
    if (posted_ - completed_ >= options_.send_depth) add(refused_full_);
    else if (ring_.slots && credit_limited_ && posted_ >= credit() + ring_.slots) add(refused_credit_);
  }

  // The sending thread: may it post? While the link is broken it collects the old queue
  // pair's sends; once all are back the watcher may replace the queue pair.
  bool link_up() noexcept {
    const Link s = state_.load(std::memory_order_acquire);
    if (s == Link::up) return true;
    if (s == Link::broken) {
      if (!marker_posted_) post_marker();
      reap();
      if (completed_ == posted_) state_.store(Link::drained, std::memory_order_release);
    }
    return false;
  }

  // The sending thread, the queue pair in the error state: sends that completed unsignalled
  // leave no completion, so a signalled empty send after them (flushed at once) tells when all
  // are back. A full queue needs none: its last send is signalled.
  void post_marker() noexcept {
    marker_posted_ = true;
    if (posted_ - completed_ == options_.send_depth) return;
    ibv_send_wr w{};
    w.wr_id = kMarker;
    w.opcode = IBV_WR_SEND;
    w.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(qp_.load(std::memory_order_relaxed), &w, &bad) == 0) return;
    // The device takes nothing more: in the error state it reads no buffer any more.
    log()->debug("{}: no marker send on the broken queue pair ({}): its sends are taken as done", context_,
                 last_error());
    release_up_to(posted_);
  }

  struct Connected {
    CmConnection conn;
    RingOffer ring{.slots = 0};
    uint32_t max_inline = 0;
  };

  // Setup (the opening thread, then the watcher): a new connection to destination_ on
  // channel_, its queue pair on cq_ (made on the first call, on the device `pick_memory`
  // accepts). Throws Error naming the step that failed.
  template <class PickMemory>
  Connected establish(PickMemory&& pick_memory) {
    const int timeout = static_cast<int>(options_.timeout_ms);
    sockaddr_storage to = to_sockaddr(destination_);
    sockaddr_storage from{};  // any address of the destination's family, any port
    from.ss_family = to.ss_family;
    if (source_) {
      Endpoint any_port = *source_;
      any_port.port = 0;
      from = to_sockaddr(any_port);
    }
    CmId id = bound_cm_id(channel_.get(), options_.transport, from);
    if (!id) throw Error(Errc::system, context_ + ": rdma_bind_addr" + where_ + ": " + last_error());
    // With its own address as the source the route (and device) is the one that reaches the
    // peer, not the peer's device when both live in one host.
    if (rdma_resolve_addr(id.get(), nullptr, reinterpret_cast<sockaddr*>(&to), timeout) != 0)
      throw Error(Errc::system, context_ + ": rdma_resolve_addr" + where_ + ": " + last_error());
    expect_event(channel_.get(), RDMA_CM_EVENT_ADDR_RESOLVED, timeout, context_,
                 "resolving " + destination_.to_string() + " (no RDMA device routes there?)");
    if (rdma_resolve_route(id.get(), timeout) != 0)
      throw Error(Errc::system, context_ + ": rdma_resolve_route" + where_ + ": " + last_error());
    expect_event(channel_.get(), RDMA_CM_EVENT_ROUTE_RESOLVED, timeout, context_, "resolving the route" + where_);

    DeviceMemory& memory = pick_memory(id->verbs);
    memory_ = &memory;
    if (!mr_) mr_ = memory.registration(q_.pools[0]->region(), context_);
    if (!cq_) {
      cq_.reset(ibv_create_cq(id->verbs, static_cast<int>(options_.send_depth + 1), nullptr, nullptr, 0));
      if (!cq_) throw Error(Errc::resource, context_ + ": ibv_create_cq: " + last_error());
    }
    ibv_qp_init_attr attr{};
    attr.send_cq = cq_.get();
    attr.recv_cq = cq_.get();
    attr.qp_type = qp_type_of(options_.transport);
    attr.sq_sig_all = 0;
    attr.cap.max_send_wr = options_.send_depth;
    attr.cap.max_recv_wr = 1;
    attr.cap.max_send_sge = kMaxSegments;
    attr.cap.max_recv_sge = 1;
    attr.cap.max_inline_data = options_.max_inline;
    if (rdma_create_qp(id.get(), memory.pd(), &attr) != 0)
      throw Error(Errc::resource, context_ + ": rdma_create_qp (send_depth " + std::to_string(options_.send_depth) +
                                      ", max_inline " + std::to_string(options_.max_inline) + ") on " +
                                      device_name(id->verbs) + ": " + last_error());
    Connected c{.conn = CmConnection(std::move(id)), .max_inline = attr.cap.max_inline_data};  // what the device granted

    std::vector<uint8_t> offer;
    if (options_.op == RdmaOp::write_imm) offer = to_bytes(credit_offer(memory.pd()));
    rdma_conn_param param{};
    param.private_data = offer.empty() ? nullptr : offer.data();
    param.private_data_len = static_cast<uint8_t>(offer.size());
    param.retry_count = 7;
    param.rnr_retry_count = 7;  // retry a receiver with no receive posted for ever (RC loses nothing)
    if (rdma_connect(c.conn.id(), &param) != 0)
      throw Error(Errc::system, context_ + ": rdma_connect" + where_ + ": " + last_error());
    const auto e = next_established(timeout);
    if (options_.op == RdmaOp::write_imm) {
      const auto ring = from_bytes<RingOffer>(e.private_data);
      if (!ring || ring->slots == 0)
        throw Error(Errc::invalid_config, context_ + ": connected" + where_ +
                                              ", but the peer offered no receive ring: it is not a netdaq rx queue "
                                              "with rdma.op write_imm");
      c.ring = *ring;
    }
    return c;
  }

  // A new connection takes over (the sending thread posts nothing meanwhile): counts from 0.
  void adopt(Connected c) noexcept {
    conn_ = std::move(c.conn);
    ring_ = c.ring;
    max_inline_ = c.max_inline;
    limit_inline();
    posted_ = completed_ = 0;
    unsignalled_ = 0;
    marker_posted_ = false;
    qp_.store(conn_.qp(), std::memory_order_release);
    q_.counters->connections.fetch_add(1, std::memory_order_relaxed);
  }

  // The watcher thread: rdma_cm events of the connection, and a new connection once the old
  // one is drained.
  void watch() noexcept {
    auto backoff = kFirstRetry;
    auto next_try = std::chrono::steady_clock::now();
    while (!stop_.load(std::memory_order_relaxed)) {
      try {
        const auto e = next_event(channel_.get(), kWatchMs);
        if (e && conn_.id() && e->id == conn_.id()) {
          if (e->type == RDMA_CM_EVENT_DISCONNECTED || e->type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
            log()->warn("{}: {}{}: the peer went away; connecting again (transmit takes nothing until then)",
                        context_, event_text(*e), where_);
            rdma_disconnect(conn_.id());  // the queue pair to the error state first (post_marker)
            disconnected_ = true;
            Link up = Link::up;
            state_.compare_exchange_strong(up, Link::broken, std::memory_order_acq_rel);
          } else if (e->type != RDMA_CM_EVENT_ESTABLISHED && e->type != RDMA_CM_EVENT_TIMEWAIT_EXIT) {
            log()->info("{}: {}", context_, event_text(*e));
          }
        }
      } catch (const std::exception& ex) {
        log()->error("{}: {}", context_, ex.what());
        std::this_thread::sleep_for(std::chrono::milliseconds(kWatchMs));
      }
      const Link s = state_.load(std::memory_order_acquire);
      if (s == Link::broken && !disconnected_) {
        // The queue pair to the error state: every send still posted comes back flushed.
        if (conn_.id()) rdma_disconnect(conn_.id());
        disconnected_ = true;
      }
      if (s != Link::drained || std::chrono::steady_clock::now() < next_try) continue;
      try {
        reconnect();
        backoff = kFirstRetry;
      } catch (const std::exception& ex) {
        retry_log_.log([&](uint64_t suppressed) {
          log()->warn("{}; trying again{}", ex.what(),
                      suppressed ? fmt::format(" ({} more tries since)", suppressed) : std::string());
        });
        next_try = std::chrono::steady_clock::now() + backoff;
        backoff = std::min(backoff * 2, kLastRetry);
      }
    }
  }

  // The watcher, the link drained: the old queue pair goes, a new connection takes its place
  // on the same device (its memory is registered there) and CQ.
  void reconnect() {
    qp_.store(nullptr, std::memory_order_relaxed);
    conn_.reset();
    DeviceMemory* const memory = memory_;
    adopt(establish([&](ibv_context* d) -> DeviceMemory& {
      if (d != memory->device())
        throw Error(Errc::system, context_ + ": the route" + where_ + " now goes through " + device_name(d) +
                                      ", not " + device_name(memory->device()) + " where the queue's memory is registered");
      return *memory;
    }));
    disconnected_ = false;
    state_.store(Link::up, std::memory_order_release);
    log()->info("{}: connected again{} (connection {})", context_, where_,
                q_.counters->connections.load(std::memory_order_relaxed));
  }

  struct Inflight {
    uint32_t buf[kMaxSegments];
    uint32_t size;  // bytes, counted sent when posted (taken back when the send fails)
    uint8_t nseg;
  };
  struct alignas(64) CreditWord {
    uint64_t value = 0;
  };

  // Inline sends are copied by the CPU: none from device memory (the NIC reads it itself).
  void limit_inline() noexcept {
    if (!q_.pools[0]->region().cpu_accessible()) max_inline_ = 0;
  }

  // The receiver's credit (it writes the word); write_imm only.
  uint64_t credit() const noexcept { return std::atomic_ref<uint64_t>(*credit_word_).load(std::memory_order_acquire); }

  // A registered word the receiver writes its credit into, and where it is.
  // A registered word the receiver writes its credit into (made once, 0 for each new
  // receiver), and where it is.
  CreditOffer credit_offer(ibv_pd* pd) {
    if (!credit_mr_) {
      credit_mem_ = std::make_unique<CreditWord>();
      credit_word_ = &credit_mem_->value;
      credit_mr_.reset(ibv_reg_mr(pd, credit_mem_.get(), sizeof(CreditWord), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
      if (!credit_mr_) throw Error(Errc::resource, context_ + ": registering the credit word: " + last_error());
    }
    std::atomic_ref<uint64_t>(*credit_word_).store(0, std::memory_order_relaxed);
    CreditOffer c;
    c.addr = reinterpret_cast<uintptr_t>(credit_word_);
    c.rkey = credit_mr_->rkey;
    return c;
  }

  // Sends before `end` (a count of posted sends) are done: their buffers go back.
  void release_up_to(uint64_t end) noexcept {
    Packet p;
    auto& f = fields(p);
    for (; completed_ < end; ++completed_) {
      const Inflight& e = inflight_[completed_ % options_.send_depth];
      f.nseg = e.nseg;
      std::copy_n(e.buf, e.nseg, f.buf);
      return_buffers(q_, &p, 1);
    }
  }

  CmEvent next_established(int timeout) {
    const std::string& where = where_;
    const auto e = next_event(channel_.get(), timeout);
    if (!e) throw Error(Errc::system, context_ + ": connecting" + where + ": no answer within " + std::to_string(timeout) +
                                          " ms (rdma.timeout_ms)");
    if (e->type == RDMA_CM_EVENT_ESTABLISHED) return *e;
    std::string why = e->type == RDMA_CM_EVENT_REJECTED     ? "the peer refused (nobody listens there, every rx queue is taken, or its rdma.transport differs)"
                      : e->type == RDMA_CM_EVENT_UNREACHABLE ? "the peer is unreachable"
                                                             : "the connection failed";
    throw Error(Errc::system, context_ + ": connecting" + where + ": " + event_text(*e) + ": " + why);
  }

  static DeviceMemory& device_memory(ibv_context* device, std::vector<std::unique_ptr<DeviceMemory>>& devices) {
    for (auto& d : devices)
      if (d->device() == device) return *d;
    return *devices.emplace_back(std::make_unique<DeviceMemory>(device));
  }

  QueueResources q_;
  RdmaOptions options_;
  std::string context_;
  // rdma_cm: where it connects, the connection and its watcher.
  std::optional<Endpoint> source_;
  Endpoint destination_;
  std::string where_;  // " to rdma://IP:PORT from IP"
  EventChannel channel_;
  CmConnection conn_;
  DeviceMemory* memory_ = nullptr;
  std::atomic<Link> state_{Link::up};
  bool disconnected_ = false;  // the watcher's: rdma_disconnect called on the broken link
  std::atomic<bool> stop_{false};
  RateLimitedLog retry_log_{10'000'000'000};  // a failed reconnect, every 10 s at most
  std::thread watcher_;
  std::atomic<ibv_qp*> qp_{nullptr};  // set once connected (manual: once paired)
  QueuePair manual_qp_;
  const ManualLink* link_ = nullptr;
  ibv_mr* mr_ = nullptr;
  CompletionQueue cq_;
  uint32_t max_inline_ = 0;
  RingOffer ring_{.slots = 0};  // write_imm: the receiver's ring (slots 0: op send)
  bool credit_limited_ = true;  // the receiver writes credits (a netdaq one always does)
  std::unique_ptr<CreditWord> credit_mem_;
  uint64_t* credit_word_ = nullptr;
  MemoryRegistration credit_mr_;
  std::vector<Inflight> inflight_;
  uint64_t posted_ = 0, completed_ = 0;  // sends posted / given back (the sending thread's)
  uint32_t unsignalled_ = 0;
  bool marker_posted_ = false;  // the broken link's marker send (the sending thread's)
  RateLimitedLog error_log_;
  std::atomic<uint64_t> completion_errors_{0};
  std::atomic<uint64_t> completed_published_{0};  // completed_, for the stats reader
  std::atomic<uint64_t> refused_full_{0}, refused_credit_{0};  // packets refused for now, summed over calls
};

}  // namespace

std::unique_ptr<TxPort> open_manual_send_port(const QueueResources& q, const RdmaOptions& o, ManualLink& link) {
  auto port = std::make_unique<SendPort>(q, o);
  port->use_manual(link);
  return port;
}

std::unique_ptr<CmTxPort> open_send_port(const QueueResources& q, const RdmaOptions& o,
                                       const std::optional<Endpoint>& source, const Endpoint& destination,
                                       std::vector<std::unique_ptr<DeviceMemory>>& devices) {
  auto port = std::make_unique<SendPort>(q, o);
  port->connect(source, destination, devices);
  return port;
}

}  // namespace netdaq::detail::rdma
