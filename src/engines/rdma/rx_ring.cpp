// rdma rx queue, op write_imm: the sender writes each message straight into a ring of this
// queue's buffers with RDMA WRITE with immediate; the immediate is the message's sequence
// number (mod 2^32) and picks its slot (seq % slots). The ring is rdma.recv_depth consecutive
// buffers of the queue's region, lent for the queue's life; each message consumes one posted
// zero-length receive, which only carries the completion.
//
// Credits: the sender may write seq < credit + slots, where credit counts the messages whose
// slots the application gave back, in order. The queue writes it into the sender's memory
// (an 8-byte inline RDMA WRITE) as bursts are released, so a slot is never overwritten while
// the application holds it. A sender without credits (an FPGA) can overwrite a held slot:
// that message is dropped, counted ring_full (slot_overruns). On UC a gap in the sequence is
// counted lost (kernel: lost before netdaq saw it; sequence_gaps).
#include <arpa/inet.h>

#include <algorithm>
#include <atomic>

#include "core/log.h"
#include "engines/rdma/ports.h"

namespace netdaq::detail::rdma {

namespace {

constexpr int kPollBatch = 64;
constexpr uint32_t kCreditDepth = 64;   // credit writes in flight
constexpr uint32_t kCreditSignal = 16;  // one signalled per this many
constexpr uint64_t kCreditWr = UINT64_MAX;

class RingRecvPort final : public ConnectedRx {
 public:
  RingRecvPort(const QueueResources& q, const RdmaOptions& o, DeviceMemory& memory)
      : ConnectedRx(q, o, memory, kCreditDepth), slots_(o.recv_depth), held_(o.recv_depth) {
    take_ring();
  }

  ~RingRecvPort() override {
    release_queue_pair();
    std::vector<Packet> ring(slots_);
    for (uint32_t i = 0; i < slots_; ++i) {
      fields(ring[i]).nseg = 1;
      fields(ring[i]).buf[0] = base_ + i;
    }
    return_buffers(q_, ring.data(), slots_);
  }

  uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept override {
    ibv_wc wcs[kPollBatch];
    const int got = ibv_poll_cq(cq_.get(), static_cast<int>(std::min<uint32_t>(max, kPollBatch)), wcs);
    uint32_t out = 0, consumed = 0;
    for (int i = 0; i < got; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.wr_id == kCreditWr) {  // a credit write completed (signalled ones only)
        if (wc.status != IBV_WC_SUCCESS) completion_error(wc);
        continue;
      }
      returned(1);
      if (wc.status != IBV_WC_SUCCESS) {
        completion_error(wc);
        continue;
      }
      ++consumed;
      if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM) {  // a SEND where a WRITE with immediate was due
        q_.counters->drop(DropReason::malformed);
        continue;
      }
      const uint32_t imm = ntohl(wc.imm_data);
      const uint64_t seq = sequence_of(imm);
      const uint32_t slot = static_cast<uint32_t>(seq % slots_);
      if (held_[slot].load(std::memory_order_acquire)) {  // overwritten while the application holds it
        q_.counters->drop(DropReason::ring_full);
        overruns_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      held_[slot].store(1, std::memory_order_relaxed);
      auto& f = fields(pkts[out++]);
      f.nseg = 1;
      f.buf[0] = base_ + slot;
      f.data[0] = q_.pools[0]->address(base_ + slot);
      f.cap[0] = q_.pools[0]->buf_size();
      f.len[0] = wc.byte_len;
      f.flow = 0;
      f.immediate = imm;
      f.has_immediate = 1;
      f.timestamp_ns = 0;
      bytes += wc.byte_len;
    }
    if (consumed) repost(consumed);
    if (credit_refused_.load(std::memory_order_relaxed)) send_credit();
    return out;
  }

  // The ring's buffers stay with the queue: released slots become credit for the sender.
  void release(Packet* pkts, uint32_t n) noexcept override {
    for (uint32_t i = 0; i < n; ++i) held_[fields(pkts[i]).buf[0] - base_].store(0, std::memory_order_release);
    advance_credit();
  }

  void add_details(QueueStats& s) const override {
    s.mode = mode() + ", ring of " + std::to_string(slots_) + " slots";
    s.engine_counters = {{"completion_errors", completion_errors_.load(std::memory_order_relaxed)},
                         {"flushed_receives", flushed_.load(std::memory_order_relaxed)},
                         {"sequence_gaps", gaps_.load(std::memory_order_relaxed)},
                         {"slot_overruns", overruns_.load(std::memory_order_relaxed)},
                         {"credit", credit_.load(std::memory_order_relaxed)}};
  }

 private:
  // rdma.recv_depth consecutive buffers of the queue's pool (a fresh pool hands them out in
  // order; a pool shared with another queue may not).
  void take_ring() {
    std::vector<uint32_t> idx(slots_);
    if (q_.pools[0]->alloc_bulk(idx.data(), slots_) != slots_)
      throw Error(Errc::resource, context_ + ": its pool has fewer than rdma.recv_depth = " + std::to_string(slots_) +
                                      " free buffers for the receive ring");
    std::sort(idx.begin(), idx.end());
    if (idx.back() - idx.front() + 1 != slots_) {
      q_.pools[0]->free_bulk(idx.data(), slots_);
      throw Error(Errc::resource, context_ + ": op write_imm needs rdma.recv_depth = " + std::to_string(slots_) +
                                      " consecutive buffers of region '" + q_.pools[0]->region().name() +
                                      "' for its ring: give the queue a region of its own");
    }
    base_ = idx.front();
    q_.counters->pool_in_use.fetch_add(slots_, std::memory_order_relaxed);
  }

  std::optional<RingOffer> ring() const override {
    RingOffer r;
    r.addr = reinterpret_cast<uintptr_t>(q_.pools[0]->address(base_));
    r.rkey = mr_->rkey;
    r.slots = slots_;
    r.stride = static_cast<uint32_t>(q_.pools[0]->stride());
    r.slot_size = q_.pools[0]->buf_size();
    return r;
  }

  void credit(const std::optional<CreditOffer>& offer, bool required) override {
    if (!offer && required)
      throw Error(Errc::invalid_config, context_ + ": the connecting side sent no credit address: it is not a netdaq "
                                                   "tx queue with rdma.op write_imm");
    peer_credit_ = offer;
  }

  // Every slot gets a zero-length receive: a WRITE with immediate consumes one.
  void post_receives(ibv_qp* qp) override {
    for (uint32_t posted = 0; posted < slots_;) {
      const uint32_t n = std::min<uint32_t>(kPollBatch, slots_ - posted);
      if (!post_empty(qp, n)) throw Error(Errc::system, context_ + ": ibv_post_recv: " + last_error());
      posted += n;
    }
  }

  bool post_empty(ibv_qp* qp, uint32_t n) noexcept {
    ibv_recv_wr wrs[kPollBatch];
    for (uint32_t i = 0; i < n; ++i) {
      wrs[i] = {};
      wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
    }
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_recv(qp, wrs, &bad) != 0) {
      uint32_t refused = 0;
      for (ibv_recv_wr* w = bad; w; w = w->next) ++refused;
      posted(n - refused);
      return false;
    }
    posted(n);
    return true;
  }

  // A new connection after a drained one: sequence and credit start again from 0 (slots the
  // application still holds stay held, and the credit stops at them until they come back).
  void restart() override {
    next_seq_ = 0;
    arrived_.store(0, std::memory_order_release);
    credit_.store(0, std::memory_order_release);
    sent_credit_.store(0, std::memory_order_relaxed);
    credit_refused_.store(false, std::memory_order_relaxed);
    peer_credit_.reset();
  }

  void repost(uint32_t n) noexcept {
    ibv_qp* qp = qp_.load(std::memory_order_acquire);
    if (qp && !peer_gone_.load(std::memory_order_relaxed) && !post_empty(qp, n))
      q_.counters->errors.fetch_add(1, std::memory_order_relaxed);
  }

  // The 64-bit sequence of a 32-bit immediate: the one nearest the next expected. A jump
  // forward on UC is messages lost on the way.
  uint64_t sequence_of(uint32_t imm) noexcept {
    const auto delta = static_cast<int32_t>(imm - static_cast<uint32_t>(next_seq_));
    const uint64_t seq = next_seq_ + static_cast<int64_t>(delta);
    if (delta > 0) {
      gaps_.fetch_add(static_cast<uint64_t>(delta), std::memory_order_relaxed);
      q_.counters->drop(DropReason::kernel, static_cast<uint64_t>(delta));
    }
    if (seq >= next_seq_) next_seq_ = seq + 1;
    arrived_.store(next_seq_, std::memory_order_release);
    return seq;
  }

  // Moves the credit over every slot given back in order and tells the sender.
  void advance_credit() noexcept {
    const uint64_t arrived = arrived_.load(std::memory_order_acquire);
    uint64_t c = credit_.load();
    uint64_t next = c;
    while (next < arrived && !held_[next % slots_].load(std::memory_order_acquire)) ++next;
    if (next != c) credit_.compare_exchange_strong(c, next);
    send_credit();
  }

  // Writes credit_ into the sender's word unless it went already. One thread posts at a time
  // (the values leave in order: the sender never sees its credit go back); a thread that
  // finds another posting leaves its newer value to it (re-read after each post). A write the
  // queue pair refuses (its send queue full, or not yet able to send: a new connection's
  // first messages can arrive before it is) is tried again at the next poll, so a sender
  // waiting for this credit is not left waiting once every slot has been given back.
  void send_credit() noexcept {
    for (;;) {
      if (posting_.test_and_set()) return;
      const uint64_t want = credit_.load();
      bool ok = true;
      if (want != sent_credit_.load(std::memory_order_relaxed)) {
        ok = post_credit(want);
        if (ok) sent_credit_.store(want, std::memory_order_relaxed);
      }
      credit_refused_.store(!ok, std::memory_order_relaxed);
      posting_.clear();
      if (!ok || credit_.load() == want) return;
    }
  }

  // True when the credit is where it belongs: posted, or nobody to tell.
  bool post_credit(uint64_t value) noexcept {
    if (peer_gone_.load(std::memory_order_acquire)) return true;  // a new connection restarts from 0
    ibv_qp* qp = qp_.load(std::memory_order_acquire);
    if (!qp || !peer_credit_) return true;  // an FPGA takes no credit
    ibv_sge sge{reinterpret_cast<uintptr_t>(&value), sizeof value, 0};
    ibv_send_wr wr{};
    wr.wr_id = kCreditWr;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_INLINE;
    if (credit_writes_.fetch_add(1, std::memory_order_relaxed) % kCreditSignal == kCreditSignal - 1)
      wr.send_flags |= IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = peer_credit_->addr;
    wr.wr.rdma.rkey = peer_credit_->rkey;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(qp, &wr, &bad) == 0) return true;
    if (!credit_refused_.load(std::memory_order_relaxed))  // counted once until one goes through
      q_.counters->errors.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

  const uint32_t slots_;
  uint32_t base_ = 0;                       // pool index of slot 0
  std::vector<std::atomic<uint8_t>> held_;  // the application holds the slot's buffer
  uint64_t next_seq_ = 0;                   // receiving thread: the next sequence expected
  std::atomic<uint64_t> arrived_{0};        // next_seq_, for the releasing thread
  std::atomic<uint64_t> credit_{0};
  std::atomic<uint64_t> sent_credit_{0};     // the last credit posted (send_credit's)
  std::atomic<bool> credit_refused_{false};  // the last post was refused: the next poll retries
  std::atomic_flag posting_ = ATOMIC_FLAG_INIT;
  std::atomic<uint64_t> credit_writes_{0};
  std::optional<CreditOffer> peer_credit_;  // set before qp_ is published
  std::atomic<uint64_t> gaps_{0}, overruns_{0};
};

}  // namespace

std::unique_ptr<ConnectedRx> open_ring_recv_port(const QueueResources& q, const RdmaOptions& o, DeviceMemory& memory) {
  return std::make_unique<RingRecvPort>(q, o, memory);
}

}  // namespace netdaq::detail::rdma
