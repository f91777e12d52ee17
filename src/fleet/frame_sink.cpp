// FrameSink: frames (or the route's fragments of them) to receivers over UCX, at most
// `credits` fragments in flight per receiver; every fragment's fate counted exactly once.
#include <algorithm>
#include <bit>
#include <cstring>

#include "fleet/net_devices.h"
#include "fleet/ucx_context.h"
#include "fleet/wire.h"
#include "netdaq/fleet.h"
#include "netdaq/status.h"

namespace netdaq::fleet {

using namespace detail;

namespace {
constexpr uint32_t kDoneRing = 16384;      // tokens waiting for done()
constexpr uint64_t kConnectTimeoutNs = 2'000'000'000;
constexpr uint64_t kMs = 1'000'000;
}  // namespace

struct FrameSink::Impl {
  enum class Link : uint8_t { down, connecting, up };
  struct Dest;
  struct Slot {  // one credit: a fragment in flight and its header's bytes
    Impl* sink = nullptr;
    Dest* dest = nullptr;
    uint32_t index = 0;       // in slots
    uint32_t generation = 0;  // seq = generation << 32 | index
    uint32_t record = 0;      // the frame's token record
    bool awaiting_credit = false;
    bool send_pending = false;
    uint64_t frame = 0;
    std::byte header[kMaxFragmentHeaderBytes];
  };
  struct Dest {
    Impl* sink = nullptr;
    uint32_t index = 0;
    Address address;
    SockAddr sockaddr;
    ucp_ep_h ep = nullptr;
    Link link = Link::down;
    bool failed = false;
    uint16_t attempt = 0;
    uint64_t next_try_ns = 0, connect_deadline_ns = 0;
    std::vector<uint32_t> free_slots;
    SinkDestinationStats stats;
    std::byte hello[kHelloBytes];
  };
  struct Record {  // a frame whose UCX sends have not all completed
    uint64_t token = 0;
    uint32_t remaining = 0;
    bool armed = false;
  };

  explicit Impl(SinkConfig c);
  ~Impl();

  void connect(Dest& d) noexcept;
  void fail(Dest& d) noexcept;
  void progress() noexcept;
  void send_fragment(Dest& d, const OutFrame& f, uint64_t start, uint64_t len, uint32_t rec) noexcept;
  bool take_slot(Dest& d, uint32_t& slot) noexcept;
  void release_slot(Slot& s) noexcept;
  void complete_send(uint32_t rec) noexcept;
  void push_done(uint64_t token) noexcept;
  uint32_t presence_for(const OutFrame& f, uint64_t start, uint64_t len, std::byte* out) const noexcept;

  static void on_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  static void on_sent(void* request, ucs_status_t status, void* user_data);
  static void on_hello_sent(void* request, ucs_status_t status, void* user_data);
  static ucs_status_t on_credit(void* arg, const void* header, size_t header_length, void* data,
                                size_t length, const ucp_am_recv_param_t* param);
  static ucs_status_t on_welcome(void* arg, const void* header, size_t header_length, void* data,
                                 size_t length, const ucp_am_recv_param_t* param);

  SinkConfig cfg;
  uint32_t max_presence_words = 0;
  uint64_t frames = 0;
  bool any_failed = false;
  std::vector<Dest> dests;
  std::vector<Slot> slots;
  std::vector<Record> records;
  std::vector<uint32_t> free_records;
  std::vector<uint64_t> done_ring;
  size_t done_head = 0, done_count = 0;
  // Last, so destroyed first: UCX completes what is still under way (on_sent) while the
  // slots and records those callbacks touch still exist.
  UcxWorker ucx;
};

FrameSink::Impl::Impl(SinkConfig c)
    : cfg(std::move(c)),
      ucx(cfg.transport, cfg.devices.empty() ? devices_routing_to(cfg.destinations) : cfg.devices) {
  if (cfg.destinations.empty())
    throw Error(Errc::invalid_config, "fleet sink: destinations is empty (at least one receiver address)");
  if (cfg.credits == 0) throw Error(Errc::invalid_config, "fleet sink: credits must be at least 1");
  if (cfg.nodes == 0 || cfg.node >= cfg.nodes)
    throw Error(Errc::invalid_config, "fleet sink: node " + std::to_string(cfg.node) +
                                          " must be below nodes " + std::to_string(cfg.nodes));
  const size_t room = ucx.max_am_header() > kFragmentHeaderBytes ? ucx.max_am_header() - kFragmentHeaderBytes : 0;
  max_presence_words = static_cast<uint32_t>(std::min<size_t>(kMaxPresenceWords, room / 8));
  ucx.set_handler(am_credit, &Impl::on_credit, this);
  ucx.set_handler(am_welcome, &Impl::on_welcome, this);
  const size_t n = cfg.destinations.size();
  dests.resize(n);
  slots.resize(n * cfg.credits);
  records.resize(slots.size() + 1);
  free_records.reserve(records.size());
  for (uint32_t i = static_cast<uint32_t>(records.size()); i-- > 0;) free_records.push_back(i);
  done_ring.resize(kDoneRing);
  for (size_t i = 0; i < n; ++i) {
    Dest& d = dests[i];
    d.sink = this;
    d.index = static_cast<uint32_t>(i);
    d.address = cfg.destinations[i];
    d.stats.address = d.address.text();
    d.free_slots.reserve(cfg.credits);
    for (uint32_t k = cfg.credits; k-- > 0;) {
      const uint32_t si = static_cast<uint32_t>(i * cfg.credits + k);
      slots[si].sink = this;
      slots[si].dest = &d;
      slots[si].index = si;
      d.free_slots.push_back(si);
    }
  }
  // Connects what it can now (bounded): a receiver that is not up is tried again later.
  for (Dest& d : dests) connect(d);
  const uint64_t deadline = monotonic_ns() + 1000 * kMs;
  while (monotonic_ns() < deadline &&
         std::any_of(dests.begin(), dests.end(), [](const Dest& d) { return d.link == Link::connecting; }))
    progress();
}

FrameSink::Impl::~Impl() {
  for (Dest& d : dests) {
    if (!d.ep) continue;
    close_endpoint(ucx, d.ep, d.failed || d.link != Link::up);
    d.ep = nullptr;
  }
  ucx.progress();
}

void FrameSink::Impl::connect(Dest& d) noexcept {
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                 UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
  p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  p.err_handler.cb = &Impl::on_error;
  p.err_handler.arg = &d;
  const uint64_t now = monotonic_ns();
  d.next_try_ns = now + uint64_t(cfg.reconnect_ms) * kMs;
  d.failed = false;
  // Looked up at every attempt: a builder that comes back under its name at a new address (a
  // rescheduled Kubernetes pod), or whose name does not resolve yet, is found when it does.
  // A numeric address costs no lookup; a name costs one per reconnect_ms while it is down.
  // A name with several addresses (localhost: ::1 and 127.0.0.1) is tried one address per
  // attempt, in turn, until one answers.
  try {
    const std::vector<SockAddr> all = resolve_all(d.address);
    d.sockaddr = all[d.attempt % all.size()];
  } catch (const std::exception&) {
    d.ep = nullptr;
    d.link = Link::down;
    return;
  }
  p.sockaddr.addr = reinterpret_cast<const sockaddr*>(&d.sockaddr.storage);
  p.sockaddr.addrlen = d.sockaddr.length;
  if (ucp_ep_create(ucx.worker(), &p, &d.ep) != UCS_OK) {
    d.ep = nullptr;
    d.link = Link::down;
    return;
  }
  d.link = Link::connecting;
  d.connect_deadline_ns = now + kConnectTimeoutNs;
  ++d.attempt;
  // Up once the receiver answers the hello: until then its fragments count peer_down.
  encode_hello((d.index << 16) | d.attempt, d.hello);
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS;
  rp.cb.send = &Impl::on_hello_sent;
  rp.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t r = ucp_am_send_nbx(d.ep, am_hello, d.hello, sizeof d.hello, nullptr, 0, &rp);
  if (UCS_PTR_IS_ERR(r)) {
    d.failed = true;
    any_failed = true;
  }
}

void FrameSink::Impl::on_hello_sent(void* request, ucs_status_t, void*) { ucp_request_free(request); }

void FrameSink::Impl::on_error(void* arg, ucp_ep_h, ucs_status_t) {
  auto* d = static_cast<Dest*>(arg);
  d->failed = true;  // handled in progress(), outside UCX's callback
  d->sink->any_failed = true;
}

// The connection failed: every fragment still in flight is lost, the endpoint goes.
void FrameSink::Impl::fail(Dest& d) noexcept {
  d.failed = false;
  for (uint32_t k = 0; k < cfg.credits; ++k) {
    Slot& s = slots[size_t(d.index) * cfg.credits + k];
    if (!s.awaiting_credit) continue;
    s.awaiting_credit = false;
    --d.stats.in_flight;
    ++d.stats.in_flight_lost;
    if (!s.send_pending) d.free_slots.push_back(s.index);
  }
  if (d.link == Link::up) {
    ++d.stats.disconnects;
    d.stats.connected = false;
  }
  d.link = Link::down;
  ucp_ep_h ep = d.ep;
  d.ep = nullptr;
  close_endpoint(ucx, ep, true);  // force: its sends complete (failed) in on_sent
  d.next_try_ns = monotonic_ns() + uint64_t(cfg.reconnect_ms) * kMs;
}

void FrameSink::Impl::progress() noexcept {
  ucx.progress();
  if (any_failed) {
    any_failed = false;
    for (Dest& d : dests)
      if (d.failed) fail(d);
  }
  const uint64_t now = monotonic_ns();
  for (Dest& d : dests) {
    if (d.link == Link::connecting && now >= d.connect_deadline_ns) {
      fail(d);  // no answer to the hello
    } else if (d.link == Link::down && now >= d.next_try_ns) {
      connect(d);
    }
  }
}

ucs_status_t FrameSink::Impl::on_welcome(void* arg, const void* header, size_t header_length,
                                         void*, size_t, const ucp_am_recv_param_t*) {
  auto* self = static_cast<Impl*>(arg);
  uint32_t value = 0;
  if (!decode_hello(header, header_length, value)) return UCS_OK;
  const uint32_t index = value >> 16;
  if (index >= self->dests.size()) return UCS_OK;
  Dest& d = self->dests[index];
  if (d.link != Link::connecting || (value & 0xffff) != d.attempt || d.failed) return UCS_OK;
  d.link = Link::up;
  d.stats.connected = true;
  ++d.stats.connects;
  d.stats.acked_connection = 0;
  return UCS_OK;
}

ucs_status_t FrameSink::Impl::on_credit(void* arg, const void* header, size_t header_length,
                                        void*, size_t, const ucp_am_recv_param_t*) {
  auto* self = static_cast<Impl*>(arg);
  Credit c;
  if (!decode_credit(header, header_length, c)) return UCS_OK;
  const uint64_t index = c.seq & 0xffffffffu;
  if (index >= self->slots.size()) return UCS_OK;
  Slot& s = self->slots[index];
  // A credit for a fragment whose connection already failed (counted lost) is ignored.
  if (!s.awaiting_credit || s.generation != (c.seq >> 32)) return UCS_OK;
  SinkDestinationStats& st = s.dest->stats;
  s.awaiting_credit = false;
  --st.in_flight;
  if (c.status == CreditStatus::placed) {
    ++st.acked;
    ++st.acked_connection;
    st.bytes_acked += c.bytes;
  } else {
    ++st.refused;
  }
  if (!s.send_pending) s.dest->free_slots.push_back(s.index);
  return UCS_OK;
}

void FrameSink::Impl::on_sent(void* request, ucs_status_t status, void* user_data) {
  auto* s = static_cast<Slot*>(user_data);
  Impl& self = *s->sink;
  if (request) ucp_request_free(request);
  s->send_pending = false;
  if (status != UCS_OK && s->dest->ep && s->dest->link != Link::down) {
    s->dest->failed = true;  // the endpoint is broken: its error handler says so too
    self.any_failed = true;
  }
  self.complete_send(s->record);
  if (!s->awaiting_credit) s->dest->free_slots.push_back(s->index);
}

void FrameSink::Impl::complete_send(uint32_t rec) noexcept {
  Record& r = records[rec];
  if (--r.remaining == 0 && r.armed) {
    push_done(r.token);
    free_records.push_back(rec);
  }
}

void FrameSink::Impl::push_done(uint64_t token) noexcept {
  if (done_count == done_ring.size()) {  // the application does not call done(): oldest dropped
    done_head = (done_head + 1) % done_ring.size();
    --done_count;
  }
  done_ring[(done_head + done_count) % done_ring.size()] = token;
  ++done_count;
}

bool FrameSink::Impl::take_slot(Dest& d, uint32_t& slot) noexcept {
  if (d.free_slots.empty() && cfg.when_full == WhenFull::wait) {
    const uint64_t deadline = monotonic_ns() + uint64_t(cfg.wait_ms) * kMs;
    while (d.free_slots.empty() && d.link == Link::up && monotonic_ns() < deadline) progress();
  }
  if (d.free_slots.empty()) return false;
  slot = d.free_slots.back();
  d.free_slots.pop_back();
  return true;
}

// The presence bits of [start, start+len) of f, shifted to start at bit 0, into out.
uint32_t FrameSink::Impl::presence_for(const OutFrame& f, uint64_t start, uint64_t len,
                                       std::byte* out) const noexcept {
  if (f.presence.empty() || f.granule == 0 || len == 0) return 0;
  const uint64_t first = start / f.granule;
  const uint64_t count = (start + len + f.granule - 1) / f.granule - first;
  const uint64_t words = (count + 63) / 64;
  if (words > max_presence_words) return 0;  // too many to travel: none do (docs/fleet.md)
  for (uint64_t w = 0; w < words; ++w) {
    uint64_t v = 0;
    for (uint64_t b = 0; b < 64 && w * 64 + b < count; ++b) {
      const uint64_t g = first + w * 64 + b;
      if (g / 64 < f.presence.size() && ((f.presence[g / 64] >> (g % 64)) & 1)) v |= uint64_t(1) << b;
    }
    std::memcpy(out + w * 8, &v, 8);
  }
  return static_cast<uint32_t>(words);
}

void FrameSink::Impl::send_fragment(Dest& d, const OutFrame& f, uint64_t start, uint64_t len,
                                    uint32_t rec) noexcept {
  SinkDestinationStats& st = d.stats;
  if (d.link != Link::up) {
    ++st.fragments;
    ++st.peer_down;
    return;
  }
  uint32_t si = 0;
  if (!take_slot(d, si)) {
    ++st.fragments;
    if (d.link != Link::up)
      ++st.peer_down;  // it went down while waiting
    else
      ++st.no_credit;
    return;
  }
  Slot& s = slots[si];
  ++s.generation;
  const uint64_t range = cfg.route == Route::bytes
                             ? (f.bytes.size() + dests.size() - 1) / dests.size()
                             : f.bytes.size();
  FrameMeta m;
  m.stream = f.stream;
  m.frame = f.frame;
  m.offset = uint64_t(cfg.node) * range;
  m.frame_offset = start;
  m.built_bytes = uint64_t(cfg.nodes) * range;
  m.bytes = len;
  m.first_ns = f.first_ns;
  m.last_ns = f.last_ns;
  m.sent_ns = realtime_ns();
  m.node = cfg.node;
  const uint32_t words = presence_for(f, start, len, s.header + kFragmentHeaderBytes);
  m.granule = words ? f.granule : 0;
  if (len == f.bytes.size()) {
    m.bytes_present = std::min<uint64_t>(f.bytes_present, len);
  } else if (f.complete) {
    m.bytes_present = len;
  } else if (f.granule && !f.presence.empty()) {  // the present granules' bytes in the range
    uint64_t present = 0;
    for (uint64_t g = start / f.granule; g * f.granule < start + len; ++g) {
      if (g / 64 >= f.presence.size() || !((f.presence[g / 64] >> (g % 64)) & 1)) continue;
      const uint64_t lo = std::max(start, g * f.granule), hi = std::min(start + len, (g + 1) * f.granule);
      present += hi - lo;
    }
    m.bytes_present = present;
  } else {
    m.bytes_present = f.bytes.empty() ? 0 : f.bytes_present * len / f.bytes.size();
  }
  m.complete = f.complete || m.bytes_present == len;
  const size_t hlen = encode_fragment(m, (uint64_t(s.generation) << 32) | s.index, words, s.header);
  s.record = rec;
  s.frame = f.frame;
  s.awaiting_credit = true;
  s.send_pending = true;
  ++st.fragments;
  ++st.in_flight;
  ++records[rec].remaining;
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  p.cb.send = &Impl::on_sent;
  p.user_data = &s;
  p.flags = UCP_AM_SEND_FLAG_REPLY;
  ucs_status_ptr_t r = ucp_am_send_nbx(d.ep, am_fragment, s.header, hlen, f.bytes.data() + start, len, &p);
  if (r == nullptr) {
    on_sent(nullptr, UCS_OK, &s);
  } else if (UCS_PTR_IS_ERR(r)) {
    on_sent(nullptr, UCS_PTR_STATUS(r), &s);  // the endpoint failed: fail() counts it lost
  }
}

FrameSink::FrameSink(SinkConfig cfg) : impl_(std::make_unique<Impl>(std::move(cfg))) {}
FrameSink::~FrameSink() = default;

void FrameSink::send(const OutFrame& f) noexcept {
  Impl& m = *impl_;
  ++m.frames;
  const uint32_t rec = m.free_records.back();  // records outnumber slots: never empty here
  m.free_records.pop_back();
  Impl::Record& r = m.records[rec];
  r.token = f.token;
  r.remaining = 0;
  r.armed = false;
  const size_t n = m.dests.size();
  switch (m.cfg.route) {
    case Route::frame:
      m.send_fragment(m.dests[f.frame % n], f, 0, f.bytes.size(), rec);
      break;
    case Route::stream:
      m.send_fragment(m.dests[f.stream % n], f, 0, f.bytes.size(), rec);
      break;
    case Route::bytes: {
      const uint64_t len = f.bytes.size(), range = (len + n - 1) / n;
      for (size_t i = 0; i < n; ++i) {
        const uint64_t start = std::min<uint64_t>(len, i * range);
        m.send_fragment(m.dests[i], f, start, std::min<uint64_t>(len - start, range), rec);
      }
      break;
    }
  }
  r.armed = true;
  if (r.remaining == 0) {
    m.push_done(r.token);
    m.free_records.push_back(rec);
  }
}

void FrameSink::progress() noexcept { impl_->progress(); }

bool FrameSink::done(uint64_t& token) noexcept {
  Impl& m = *impl_;
  if (m.done_count == 0) return false;
  token = m.done_ring[m.done_head];
  m.done_head = (m.done_head + 1) % m.done_ring.size();
  --m.done_count;
  return true;
}

bool FrameSink::drain(uint32_t timeout_ms) noexcept {
  Impl& m = *impl_;
  const uint64_t deadline = monotonic_ns() + uint64_t(timeout_ms) * kMs;
  auto busy = [&] {
    if (m.free_records.size() != m.records.size()) return true;
    for (const auto& d : m.dests)
      if (d.stats.in_flight) return true;
    return false;
  };
  while (busy()) {
    if (monotonic_ns() >= deadline) return false;
    m.progress();
  }
  return true;
}

SinkStats FrameSink::stats() const {
  const Impl& m = *impl_;
  SinkStats s;
  s.frames = m.frames;
  s.total.address = "total";
  for (const auto& d : m.dests) {
    s.destinations.push_back(d.stats);
    SinkDestinationStats& t = s.total;
    t.connected = t.connected || d.stats.connected;
    t.fragments += d.stats.fragments;
    t.acked += d.stats.acked;
    t.acked_connection += d.stats.acked_connection;
    t.bytes_acked += d.stats.bytes_acked;
    t.refused += d.stats.refused;
    t.no_credit += d.stats.no_credit;
    t.peer_down += d.stats.peer_down;
    t.in_flight_lost += d.stats.in_flight_lost;
    t.in_flight += d.stats.in_flight;
    t.connects += d.stats.connects;
    t.disconnects += d.stats.disconnects;
  }
  return s;
}

const SinkConfig& FrameSink::config() const noexcept { return impl_->cfg; }

}  // namespace netdaq::fleet
