// rdma rx queue, op send: SEND/RECV into pool buffers. Each slot of the queue pair's receive
// queue holds one pool buffer; a completion hands that buffer to the application as a packet
// of the message's length and the slot is posted again with a fresh buffer. With no free
// buffer the slot waits (RC: the sender's retries wait with it; nothing is lost).
#include <algorithm>

#include "engines/rdma/ports.h"

namespace netdaq::detail::rdma {

namespace {

constexpr uint32_t kEmpty = UINT32_MAX;
constexpr int kPollBatch = 64;

class SendRecvPort final : public ConnectedRx {
 public:
  SendRecvPort(const QueueResources& q, const RdmaOptions& o, DeviceMemory& memory)
      : ConnectedRx(q, o, memory, 1), slot_buf_(o.recv_depth, kEmpty) {
    Packet p;
    for (uint32_t s = 0; s < o.recv_depth; ++s) {
      if (attach_buffers(q_, &p, 1) != 1)
        throw Error(Errc::resource, context_ + ": its pool has fewer than rdma.recv_depth = " +
                                        std::to_string(o.recv_depth) + " free buffers to post as receives");
      slot_buf_[s] = fields(p).buf[0];
    }
    empty_slots_.reserve(o.recv_depth);
  }

  ~SendRecvPort() override {
    release_queue_pair();  // no buffer is a DMA target any more
    for (uint32_t& b : slot_buf_)
      if (b != kEmpty) give_back(b);
  }

  uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept override {
    ibv_wc wcs[kPollBatch];
    const int got = ibv_poll_cq(cq_.get(), static_cast<int>(std::min<uint32_t>(max, kPollBatch)), wcs);
    uint32_t out = 0;
    if (got > 0) returned(static_cast<uint32_t>(got));
    for (int i = 0; i < got; ++i) {
      const ibv_wc& wc = wcs[i];
      const auto s = static_cast<uint32_t>(wc.wr_id);
      const uint32_t b = slot_buf_[s];
      slot_buf_[s] = kEmpty;
      if (wc.status != IBV_WC_SUCCESS) {  // not a packet: the buffer goes back to the pool
        give_back(b);
        if (wc.status != IBV_WC_WR_FLUSH_ERR) empty_slots_.push_back(s);
        completion_error(wc);
        continue;
      }
      one_buffer_packet(pkts[out++], b, q_.pools[0]->address(b), q_.pools[0]->buf_size(), wc.byte_len);
      bytes += wc.byte_len;
      empty_slots_.push_back(s);
    }
    refill();
    return out;
  }

  void add_details(QueueStats& s) const override {
    s.mode = mode();
    s.engine_counters = {{"completion_errors", completion_errors_.load(std::memory_order_relaxed)},
                         {"flushed_receives", flushed_.load(std::memory_order_relaxed)}};
  }

 private:
  void post_receives(ibv_qp* qp) override {
    for (uint32_t s = 0; s < options_.recv_depth; s += kPollBatch) {
      const uint32_t n = std::min<uint32_t>(kPollBatch, options_.recv_depth - s);
      for (uint32_t i = 0; i < n; ++i) wr(i, s + i, slot_buf_[s + i], n);
      ibv_recv_wr* bad = nullptr;
      if (ibv_post_recv(qp, wrs_, &bad) != 0) throw Error(Errc::system, context_ + ": ibv_post_recv: " + last_error());
      posted(n);
    }
  }

  // A new connection after a drained one: every slot gets a pool buffer again.
  void restart() override {
    empty_slots_.clear();
    Packet p;
    for (uint32_t& b : slot_buf_) {
      if (b != kEmpty) continue;
      if (attach_buffers(q_, &p, 1) != 1)
        throw Error(Errc::resource, context_ + ": no free pool buffer to post for the new connection");
      b = fields(p).buf[0];
    }
  }

  // Work request i of a chain of n: slot s receives into buffer b.
  void wr(uint32_t i, uint32_t s, uint32_t b, uint32_t n) noexcept {
    sges_[i] = {reinterpret_cast<uintptr_t>(q_.pools[0]->address(b)), q_.pools[0]->buf_size(), mr_->lkey};
    wrs_[i] = {};
    wrs_[i].wr_id = s;
    wrs_[i].sg_list = &sges_[i];
    wrs_[i].num_sge = 1;
    wrs_[i].next = i + 1 < n ? &wrs_[i + 1] : nullptr;
  }

  // Posts a fresh buffer in each empty slot (as many as the pool gives).
  void refill() noexcept {
    ibv_qp* qp = qp_.load(std::memory_order_acquire);
    if (!qp || empty_slots_.empty() || peer_gone_.load(std::memory_order_relaxed)) return;
    uint32_t idx[kPollBatch];
    const uint32_t want = std::min<uint32_t>(kPollBatch, static_cast<uint32_t>(empty_slots_.size()));
    Packet pkts[kPollBatch];
    const uint32_t n = attach_buffers(q_, pkts, want);
    for (uint32_t i = 0; i < n; ++i) {
      idx[i] = empty_slots_.back();
      empty_slots_.pop_back();
      slot_buf_[idx[i]] = fields(pkts[i]).buf[0];
      wr(i, idx[i], slot_buf_[idx[i]], n);
    }
    ibv_recv_wr* bad = nullptr;
    posted(n);  // (those refused come straight back below)
    if (n && ibv_post_recv(qp, wrs_, &bad) != 0) {
      // Only a queue pair in the error state refuses: its peer is gone; the buffers go back.
      q_.counters->errors.fetch_add(1, std::memory_order_relaxed);
      uint32_t refused = 0;
      for (ibv_recv_wr* w = bad; w; w = w->next, ++refused) {
        const auto s = static_cast<uint32_t>(w->wr_id);
        give_back(slot_buf_[s]);
        slot_buf_[s] = kEmpty;
        empty_slots_.push_back(s);
      }
      returned(refused);
    }
  }

  void give_back(uint32_t b) noexcept {
    Packet p;
    fields(p).nseg = 1;
    fields(p).buf[0] = b;
    return_buffers(q_, &p, 1);
  }

  std::vector<uint32_t> slot_buf_;     // pool buffer posted in each slot (kEmpty: none)
  std::vector<uint32_t> empty_slots_;  // slots waiting for a pool buffer
  ibv_recv_wr wrs_[kPollBatch];
  ibv_sge sges_[kPollBatch];
};

}  // namespace

std::unique_ptr<ConnectedRx> open_send_recv_port(const QueueResources& q, const RdmaOptions& o, DeviceMemory& memory) {
  return std::make_unique<SendRecvPort>(q, o, memory);
}

}  // namespace netdaq::detail::rdma
