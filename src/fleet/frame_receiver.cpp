// FrameReceiver: fragments from many senders into `buffers` preallocated buffers, handed out in
// arrival order; release() returns the buffer and the sender's credit.
#include <cstring>
#include <memory>

#include "fleet/receive_side.h"
#include "netdaq/fleet.h"
#include "netdaq/status.h"

namespace netdaq::fleet {

using namespace detail;

struct FrameReceiver::Impl final : Placer {
  enum class State : uint8_t { free, receiving, ready, held };
  struct Buffer {
    State state = State::free;
    FrameMeta meta;
    SenderRef from;
    uint32_t presence_words = 0;
  };

  explicit Impl(const ReceiverConfig& c) : cfg(c) {
    if (cfg.buffers == 0 || cfg.max_bytes == 0)
      throw Error(Errc::invalid_config, "fleet receiver: buffers and max_bytes must be at least 1");
    storage = std::make_unique<std::byte[]>(size_t(cfg.buffers) * cfg.max_bytes);
    presence = std::make_unique<uint64_t[]>(size_t(cfg.buffers) * kMaxPresenceWords);
    buffers.resize(cfg.buffers);
    free.reserve(cfg.buffers);
    for (uint32_t i = cfg.buffers; i-- > 0;) free.push_back(i);
    ready.resize(cfg.buffers);
    side = std::make_unique<ReceiveSide>(cfg, *this, cfg.buffers);
  }
  ~Impl() { side.reset(); }  // endpoints close (and their receives end) while buffers exist

  std::byte* data(uint32_t b) { return storage.get() + size_t(b) * cfg.max_bytes; }

  Placement place(const FragmentHeader& h, const SenderRef& from) noexcept override {
    Placement p;
    if (h.meta.bytes > cfg.max_bytes) {
      p.refusal = RefusalReason::too_big;
      return p;
    }
    if (free.empty()) {
      p.refusal = RefusalReason::no_buffer;
      return p;
    }
    const uint32_t b = free.back();
    free.pop_back();
    Buffer& buf = buffers[b];
    buf.state = State::receiving;
    buf.meta = h.meta;
    buf.from = from;
    buf.presence_words = static_cast<uint32_t>(h.presence.size());
    if (!h.presence.empty())  // may be unaligned inside UCX's buffer
      std::memcpy(presence.get() + size_t(b) * kMaxPresenceWords, h.presence.data(), h.presence.size_bytes());
    p.dest = data(b);
    p.ticket = b;
    return p;
  }

  void arrived(uint64_t ticket, bool ok) noexcept override {
    const auto b = static_cast<uint32_t>(ticket);
    Buffer& buf = buffers[b];
    if (!ok) {
      if (side)  // null while it is being destroyed (its receives end failed)
        side->send_credit(buf.from, CreditStatus::refused, RefusalReason::failed, buf.meta.frame,
                        buf.meta.bytes);
      buf.state = State::free;
      free.push_back(b);
      return;
    }
    buf.state = State::ready;
    ready[(ready_head + ready_count) % ready.size()] = b;
    ++ready_count;
  }

  ReceiverConfig cfg;
  std::unique_ptr<std::byte[]> storage;
  std::unique_ptr<uint64_t[]> presence;
  std::vector<Buffer> buffers;
  std::vector<uint32_t> free;
  std::vector<uint32_t> ready;  // ring, arrival order
  size_t ready_head = 0, ready_count = 0;
  std::unique_ptr<ReceiveSide> side;  // last: destroyed first
};

FrameReceiver::FrameReceiver(ReceiverConfig cfg) : impl_(std::make_unique<Impl>(cfg)) {}
FrameReceiver::~FrameReceiver() = default;

uint16_t FrameReceiver::port() const noexcept { return impl_->side->port(); }
void FrameReceiver::progress() noexcept { impl_->side->progress(); }

bool FrameReceiver::pop(InFrame& out) noexcept {
  Impl& m = *impl_;
  if (m.ready_count == 0) return false;
  const uint32_t b = m.ready[m.ready_head];
  m.ready_head = (m.ready_head + 1) % m.ready.size();
  --m.ready_count;
  Impl::Buffer& buf = m.buffers[b];
  buf.state = Impl::State::held;
  out.meta = buf.meta;
  out.bytes = {m.data(b), buf.meta.bytes};
  out.presence = {m.presence.get() + size_t(b) * kMaxPresenceWords, buf.presence_words};
  out.buffer = b;
  return true;
}

void FrameReceiver::release(const InFrame& f) noexcept {
  Impl& m = *impl_;
  if (f.buffer >= m.buffers.size() || m.buffers[f.buffer].state != Impl::State::held) return;
  Impl::Buffer& buf = m.buffers[f.buffer];
  m.side->send_credit(buf.from, CreditStatus::placed, RefusalReason::none, buf.meta.frame,
                      buf.meta.bytes);
  buf.state = Impl::State::free;
  m.free.push_back(f.buffer);
}

ReceiverStats FrameReceiver::stats() const { return impl_->side->stats(); }

}  // namespace netdaq::fleet
