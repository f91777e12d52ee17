// Bursts: zero-copy batches of packets. RxBurst and TxBurst are move-only; their buffers
// return to the pool when the burst is released or destroyed (ARCHITECTURE §3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace netdaq {

// Segments per packet: 1, or 2 with header-data split (segment 0 headers, 1 payload).
inline constexpr unsigned kMaxSegments = 2;

class Packet;
namespace detail {
struct BurstDesc;
class BurstOwner;
// Engine-side view of a packet's fields (src/core and engines only). One cache line: an
// engine filling a burst writes one line per packet, and a packet never straddles two.
struct alignas(64) PacketFields {
  std::byte* data[kMaxSegments] = {};
  uint32_t len[kMaxSegments] = {};
  uint32_t cap[kMaxSegments] = {};
  uint32_t buf[kMaxSegments] = {};  // buffer index in the pool of segment i
  uint8_t nseg = 0;
  uint8_t whole_frame = 0;          // RX: data[0] is the whole frame (dpdk raw_frames)
  uint16_t l2_len = 0;              // RX: header bytes (Ethernet..UDP) kept in front of data[0]
  uint32_t flow = 0;
  uint32_t immediate = 0;           // RX: the message's immediate data (rdma write_imm)
  uint8_t has_immediate = 0;
  uint64_t timestamp_ns = 0;
};
static_assert(sizeof(PacketFields) == 64, "a packet's fields are one cache line");
PacketFields& fields(Packet& p) noexcept;
}  // namespace detail

// One packet in a burst. Valid until its burst is released.
class Packet {
 public:
  unsigned segments() const noexcept { return f_.nseg; }
  std::span<const std::byte> segment(unsigned i) const noexcept {
    return i < f_.nseg ? std::span<const std::byte>(f_.data[i], f_.len[i]) : std::span<const std::byte>();
  }
  // The whole packet when it has one segment; segment 0 (headers) when split.
  std::span<const std::byte> data() const noexcept { return segment(0); }
  uint32_t size() const noexcept {
    uint32_t n = 0;
    for (unsigned i = 0; i < f_.nseg; ++i) n += f_.len[i];
    return n;
  }
  // The whole frame from its Ethernet header, when the engine receives frames (afxdp, dpdk);
  // empty for engines that only see payloads (socket).
  std::span<const std::byte> frame() const noexcept {
    if (f_.whole_frame && f_.nseg == 1) return segment(0);
    return f_.l2_len && f_.nseg == 1 ? std::span<const std::byte>(f_.data[0] - f_.l2_len, f_.l2_len + f_.len[0])
                                     : std::span<const std::byte>();
  }
  // From the Ethernet header to the end of segment 0, when the engine keeps the headers: the
  // whole frame() for a packet of one segment, the frame's first piece for one that came in
  // two buffers (afxdp multi-buffer, header-data split), whose rest is segment(1).
  std::span<const std::byte> frame_head() const noexcept {
    if (f_.whole_frame) return segment(0);
    return f_.l2_len && f_.nseg ? std::span<const std::byte>(f_.data[0] - f_.l2_len, f_.l2_len + f_.len[0])
                                : std::span<const std::byte>();
  }
  uint32_t flow() const noexcept { return f_.flow; }
  // The 32-bit immediate data the sender attached (rdma engine, op: write_imm: the message's
  // sequence number, modulo 2^32); nullopt for packets without one.
  std::optional<uint32_t> immediate() const noexcept {
    return f_.has_immediate ? std::optional<uint32_t>(f_.immediate) : std::nullopt;
  }
  uint64_t timestamp_ns() const noexcept { return f_.timestamp_ns; }

  // TX: the writable buffer of a segment (its full capacity) and the length to send.
  std::span<std::byte> buffer(unsigned i = 0) noexcept {
    return i < f_.nseg ? std::span<std::byte>(f_.data[i], f_.cap[i]) : std::span<std::byte>();
  }
  // Sets the length of segment i (clamped to its capacity).
  void set_size(uint32_t n, unsigned i = 0) noexcept {
    if (i < f_.nseg) f_.len[i] = n < f_.cap[i] ? n : f_.cap[i];
  }

 private:
  friend detail::PacketFields& detail::fields(Packet&) noexcept;
  detail::PacketFields f_;
};

namespace detail {
inline PacketFields& fields(Packet& p) noexcept { return p.f_; }

struct BurstDesc {
  Packet* pkts = nullptr;
  uint32_t count = 0;     // valid packets in pkts[first, count)
  uint32_t first = 0;     // TX: packets before this were sent
  uint32_t capacity = 0;
  BurstOwner* owner = nullptr;
  uint64_t bytes = 0;     // RX: the packets' bytes (sum of size()), counted by the engine
};

// The queue a burst came from; it takes the burst back.
class BurstOwner {
 public:
  virtual void release(BurstDesc* d) noexcept = 0;
  virtual uint32_t send(BurstDesc* d) noexcept { (void)d; return 0; }

 protected:
  ~BurstOwner() = default;
};
}  // namespace detail

// Received packets. Read them in place; release (or destroy) the burst to return buffers.
class RxBurst {
 public:
  RxBurst() noexcept = default;
  explicit RxBurst(detail::BurstDesc* d) noexcept : d_(d) {}
  RxBurst(RxBurst&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  RxBurst& operator=(RxBurst&& o) noexcept {
    if (this != &o) { release(); d_ = o.d_; o.d_ = nullptr; }
    return *this;
  }
  RxBurst(const RxBurst&) = delete;
  RxBurst& operator=(const RxBurst&) = delete;
  ~RxBurst() { release(); }

  explicit operator bool() const noexcept { return d_ != nullptr && d_->count > d_->first; }
  size_t size() const noexcept { return d_ ? d_->count - d_->first : 0; }
  bool empty() const noexcept { return size() == 0; }
  const Packet& operator[](size_t i) const noexcept { return d_->pkts[d_->first + i]; }
  const Packet* begin() const noexcept { return d_ ? d_->pkts + d_->first : nullptr; }
  const Packet* end() const noexcept { return d_ ? d_->pkts + d_->count : nullptr; }
  // The sum of the packets' size(): what a receiver that only counts needs, without a loop.
  uint64_t bytes() const noexcept { return d_ ? d_->bytes : 0; }

  // Returns the buffers to their pools. Idempotent.
  void release() noexcept {
    if (d_) { d_->owner->release(d_); d_ = nullptr; }
  }

 private:
  detail::BurstDesc* d_ = nullptr;
};

// Buffers from a TX queue's pool. Fill each packet's buffer(), set_size(), then send().
class TxBurst {
 public:
  TxBurst() noexcept = default;
  explicit TxBurst(detail::BurstDesc* d) noexcept : d_(d) {}
  TxBurst(TxBurst&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  TxBurst& operator=(TxBurst&& o) noexcept {
    if (this != &o) { release(); d_ = o.d_; o.d_ = nullptr; }
    return *this;
  }
  TxBurst(const TxBurst&) = delete;
  TxBurst& operator=(const TxBurst&) = delete;
  ~TxBurst() { release(); }

  explicit operator bool() const noexcept { return d_ != nullptr && d_->count > d_->first; }
  size_t size() const noexcept { return d_ ? d_->count - d_->first : 0; }
  bool empty() const noexcept { return size() == 0; }
  Packet& operator[](size_t i) noexcept { return d_->pkts[d_->first + i]; }
  Packet* begin() noexcept { return d_ ? d_->pkts + d_->first : nullptr; }
  Packet* end() noexcept { return d_ ? d_->pkts + d_->count : nullptr; }

  // Hands as many packets as the engine accepts now to the engine (ownership passes) and
  // removes them from the front of the burst. Returns how many were accepted; the rest stay
  // here so the caller can retry or release them (counted as tx_unsent).
  size_t send() noexcept {
    if (!d_) return 0;
    uint32_t n = d_->owner->send(d_);
    if (d_->first == d_->count) release();
    return n;
  }
  // Frees unsent buffers (counted as tx_unsent). Idempotent.
  void release() noexcept {
    if (d_) { d_->owner->release(d_); d_ = nullptr; }
  }

 private:
  detail::BurstDesc* d_ = nullptr;
};

}  // namespace netdaq
