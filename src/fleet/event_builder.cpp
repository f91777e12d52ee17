// EventBuilder: each node's fragment of a frame placed at its offset in one built-frame buffer;
// handed out when every node's came, or timeout_ms after the first (incomplete).
#include <algorithm>
#include <cstring>
#include <memory>

#include "fleet/receive_side.h"
#include "netdaq/fleet.h"
#include "netdaq/status.h"

namespace netdaq::fleet {

using namespace detail;

struct EventBuilder::Impl final : Placer {
  enum class State : uint8_t { free, open, ready, held };
  struct Slot {
    State state = State::free;
    bool timed_out = false;  // hand out once its receives under way are in
    uint64_t stream = 0, frame = 0, built_bytes = 0;
    uint64_t present = 0;   // nodes whose fragment was placed (or is arriving)
    uint32_t arriving = 0;  // fragments whose bytes are still coming
    uint64_t first_mono_ns = 0;
  };
  struct Key {
    uint64_t stream = 0, frame = 0;
  };

  explicit Impl(const BuilderConfig& c) : cfg(c) {
    const ReceiverConfig& r = cfg.receiver;
    if (r.buffers == 0 || r.max_bytes == 0)
      throw Error(Errc::invalid_config, "fleet event builder: buffers and max_bytes must be at least 1");
    if (cfg.nodes == 0 || cfg.nodes > 64)
      throw Error(Errc::invalid_config, "fleet event builder: nodes " + std::to_string(cfg.nodes) +
                                            " is not 1..64");
    storage = std::make_unique<std::byte[]>(size_t(r.buffers) * r.max_bytes);
    slots.resize(r.buffers);
    metas.resize(size_t(r.buffers) * cfg.nodes);
    refs.resize(size_t(r.buffers) * cfg.nodes);
    free.reserve(r.buffers);
    for (uint32_t i = r.buffers; i-- > 0;) free.push_back(i);
    ready.resize(r.buffers);
    handed.resize(size_t(r.buffers) * 4 + 64);
    node_stats.resize(cfg.nodes);
    for (uint32_t n = 0; n < cfg.nodes; ++n) node_stats[n].node = n;
    side = std::make_unique<ReceiveSide>(r, *this, r.buffers * cfg.nodes);
  }
  ~Impl() { side.reset(); }

  std::byte* data(uint32_t b) { return storage.get() + size_t(b) * cfg.receiver.max_bytes; }

  bool was_handed_out(uint64_t stream, uint64_t frame) const noexcept {
    for (size_t i = 0; i < handed_count; ++i)
      if (handed[i].stream == stream && handed[i].frame == frame) return true;
    return false;
  }

  Placement place(const FragmentHeader& h, const SenderRef& from) noexcept override {
    Placement p;
    const FrameMeta& m = h.meta;
    if (m.node >= cfg.nodes) {
      p.refusal = RefusalReason::malformed;  // not a node this builder builds from
      return p;
    }
    BuilderNodeStats& ns = node_stats[m.node];
    uint32_t b = UINT32_MAX;
    for (uint32_t i = 0; i < slots.size(); ++i)
      if (slots[i].state != State::free && slots[i].stream == m.stream && slots[i].frame == m.frame) {
        b = i;
        break;
      }
    if (b != UINT32_MAX && slots[b].state != State::open) {
      p.refusal = RefusalReason::late;
    } else if (b == UINT32_MAX && was_handed_out(m.stream, m.frame)) {
      p.refusal = RefusalReason::late;
    } else if (b != UINT32_MAX && (slots[b].present >> m.node) & 1) {
      p.refusal = RefusalReason::duplicate;
    } else {
      const uint64_t built = b == UINT32_MAX ? m.built_bytes : slots[b].built_bytes;
      if (built > cfg.receiver.max_bytes || m.offset > built || m.bytes > built - m.offset)
        p.refusal = RefusalReason::too_big;
      else if (b == UINT32_MAX && free.empty())
        p.refusal = RefusalReason::no_buffer;
    }
    if (p.refusal == RefusalReason::late) ++ns.late;
    if (p.refusal == RefusalReason::duplicate) ++ns.duplicate;
    if (p.refusal != RefusalReason::none) return p;
    if (b == UINT32_MAX) {
      b = free.back();
      free.pop_back();
      Slot& s = slots[b];
      s = Slot{};
      s.state = State::open;
      s.stream = m.stream;
      s.frame = m.frame;
      s.built_bytes = m.built_bytes;
      s.first_mono_ns = monotonic_ns();
    }
    Slot& s = slots[b];
    s.present |= uint64_t(1) << m.node;
    ++s.arriving;
    metas[size_t(b) * cfg.nodes + m.node] = m;
    refs[size_t(b) * cfg.nodes + m.node] = from;
    p.dest = data(b) + m.offset;
    p.ticket = uint64_t(b) * 64 + m.node;
    return p;
  }

  void arrived(uint64_t ticket, bool ok) noexcept override {
    const auto b = static_cast<uint32_t>(ticket / 64);
    const auto node = static_cast<uint32_t>(ticket % 64);
    Slot& s = slots[b];
    --s.arriving;
    const FrameMeta& m = metas[size_t(b) * cfg.nodes + node];
    if (ok) {
      BuilderNodeStats& ns = node_stats[node];
      ++ns.fragments;
      ns.bytes += m.bytes;
      if (!m.complete) ++ns.incomplete;
    } else {  // the transfer failed: as if the fragment never came
      if (side)  // null while it is being destroyed (its receives end failed)
        side->send_credit(refs[size_t(b) * cfg.nodes + node], CreditStatus::refused,
                        RefusalReason::failed, m.frame, m.bytes);
      s.present &= ~(uint64_t(1) << node);
    }
    if (s.arriving == 0 && (s.timed_out || s.present == all_nodes())) hand_out(b);
    else if (s.arriving == 0 && s.present == 0) release_slot(b);
  }

  uint64_t all_nodes() const noexcept { return cfg.nodes == 64 ? ~uint64_t(0) : (uint64_t(1) << cfg.nodes) - 1; }

  void release_slot(uint32_t b) noexcept {
    slots[b].state = State::free;
    free.push_back(b);
  }

  // Zeroes the bytes no placed fragment covers, so a missing node's range reads zero.
  void zero_gaps(uint32_t b) noexcept {
    const Slot& s = slots[b];
    std::pair<uint64_t, uint64_t> ranges[64];
    size_t n = 0;
    for (uint32_t node = 0; node < cfg.nodes; ++node)
      if ((s.present >> node) & 1) {
        const FrameMeta& m = metas[size_t(b) * cfg.nodes + node];
        ranges[n++] = {m.offset, m.offset + m.bytes};
      }
    std::sort(ranges, ranges + n);
    uint64_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      if (ranges[i].first > at) std::memset(data(b) + at, 0, ranges[i].first - at);
      at = std::max(at, ranges[i].second);
    }
    if (s.built_bytes > at) std::memset(data(b) + at, 0, s.built_bytes - at);
  }

  void hand_out(uint32_t b) noexcept {
    Slot& s = slots[b];
    s.state = State::ready;
    const bool all = s.present == all_nodes();
    bool complete = all;
    for (uint32_t node = 0; node < cfg.nodes; ++node) {
      if ((s.present >> node) & 1)
        complete = complete && metas[size_t(b) * cfg.nodes + node].complete;
      else
        ++node_stats[node].missing;
    }
    if (!all) {
      zero_gaps(b);
      ++frames_timed_out;
    }
    ++frames;
    if (complete)
      ++frames_complete;
    else
      ++frames_incomplete;
    handed[handed_next] = {s.stream, s.frame};
    handed_next = (handed_next + 1) % handed.size();
    handed_count = std::min(handed_count + 1, handed.size());
    ready[(ready_head + ready_count) % ready.size()] = b;
    ++ready_count;
  }

  void expire(bool all) noexcept {
    const uint64_t now = monotonic_ns();
    const uint64_t timeout = uint64_t(cfg.timeout_ms) * 1'000'000;
    for (uint32_t b = 0; b < slots.size(); ++b) {
      Slot& s = slots[b];
      if (s.state != State::open || s.timed_out) continue;
      if (!all && now - s.first_mono_ns < timeout) continue;
      s.timed_out = true;
      if (s.arriving == 0) hand_out(b);
    }
  }

  BuilderConfig cfg;
  std::unique_ptr<std::byte[]> storage;
  std::vector<Slot> slots;
  std::vector<FrameMeta> metas;  // [slot][node]
  std::vector<SenderRef> refs;   // [slot][node]
  std::vector<uint32_t> free;
  std::vector<uint32_t> ready;  // ring, hand-out order
  size_t ready_head = 0, ready_count = 0;
  std::vector<Key> handed;  // frames handed out lately: a fragment for one is late
  size_t handed_next = 0, handed_count = 0;
  std::vector<BuilderNodeStats> node_stats;
  uint64_t frames = 0, frames_complete = 0, frames_incomplete = 0, frames_timed_out = 0;
  std::unique_ptr<ReceiveSide> side;  // last: destroyed first
};

EventBuilder::EventBuilder(BuilderConfig cfg) : impl_(std::make_unique<Impl>(cfg)) {}
EventBuilder::~EventBuilder() = default;

uint16_t EventBuilder::port() const noexcept { return impl_->side->port(); }

void EventBuilder::progress() noexcept {
  impl_->side->progress();
  impl_->expire(false);
}

bool EventBuilder::pop(BuiltFrame& out) noexcept {
  Impl& m = *impl_;
  if (m.ready_count == 0) return false;
  const uint32_t b = m.ready[m.ready_head];
  m.ready_head = (m.ready_head + 1) % m.ready.size();
  --m.ready_count;
  Impl::Slot& s = m.slots[b];
  s.state = Impl::State::held;
  out.stream = s.stream;
  out.frame = s.frame;
  out.bytes = {m.data(b), s.built_bytes};
  out.nodes_present = s.present;
  out.fragments = {m.metas.data() + size_t(b) * m.cfg.nodes, m.cfg.nodes};
  out.complete = s.present == m.all_nodes();
  out.first_ns = UINT64_MAX;
  out.last_ns = 0;
  for (uint32_t n = 0; n < m.cfg.nodes; ++n) {
    if (!((s.present >> n) & 1)) continue;
    const FrameMeta& f = out.fragments[n];
    out.complete = out.complete && f.complete;
    out.first_ns = std::min(out.first_ns, f.first_ns);
    out.last_ns = std::max(out.last_ns, f.last_ns);
  }
  if (out.first_ns == UINT64_MAX) out.first_ns = 0;
  out.buffer = b;
  return true;
}

void EventBuilder::release(const BuiltFrame& f) noexcept {
  Impl& m = *impl_;
  if (f.buffer >= m.slots.size() || m.slots[f.buffer].state != Impl::State::held) return;
  const Impl::Slot& s = m.slots[f.buffer];
  for (uint32_t n = 0; n < m.cfg.nodes; ++n) {
    if (!((s.present >> n) & 1)) continue;
    const FrameMeta& meta = m.metas[size_t(f.buffer) * m.cfg.nodes + n];
    m.side->send_credit(m.refs[size_t(f.buffer) * m.cfg.nodes + n], CreditStatus::placed,
                        RefusalReason::none, meta.frame, meta.bytes);
  }
  m.release_slot(f.buffer);
}

void EventBuilder::flush() noexcept { impl_->expire(true); }

BuilderStats EventBuilder::stats() const {
  const Impl& m = *impl_;
  BuilderStats s;
  s.frames = m.frames;
  s.frames_complete = m.frames_complete;
  s.frames_incomplete = m.frames_incomplete;
  s.frames_timed_out = m.frames_timed_out;
  s.receiver = m.side->stats();
  s.nodes = m.node_stats;
  return s;
}

}  // namespace netdaq::fleet
