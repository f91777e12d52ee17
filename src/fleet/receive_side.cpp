// The shared receiving half of FrameReceiver and EventBuilder (see receive_side.h).
#include "fleet/receive_side.h"

#include "fleet/net_devices.h"

#include <netinet/in.h>

#include <cstring>

#include "netdaq/status.h"

namespace netdaq::fleet::detail {

namespace {
// n entries that know their side and index, all free (the lowest index handed out first).
template <class Entry, class Side>
void fill_pool(std::vector<Entry>& pool, std::vector<uint32_t>& free, uint32_t n, Side* side) {
  pool.resize(n);
  free.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    pool[i].side = side;
    pool[i].index = i;
    free.push_back(n - 1 - i);
  }
}
}  // namespace

ReceiveSide::ReceiveSide(const ReceiverConfig& cfg, Placer& placer, uint32_t max_receives)
    : placer_(placer), ucx_(cfg.transport, cfg.devices.empty() ? device_of(cfg.listen) : cfg.devices) {
  fill_pool(receives_, free_receives_, max_receives, this);
  fill_pool(messages_, free_messages_, kMessagePool, this);
  pending_.resize(kMessagePool);
  for (uint32_t i = 0; i < kMaxConnections; ++i) {
    conns_[i].side = this;
    conns_[i].index = i;
  }
  ucx_.set_handler(am_fragment, &ReceiveSide::on_fragment, this);
  ucx_.set_handler(am_hello, &ReceiveSide::on_hello, this);

  SockAddr sa = resolve(cfg.listen);
  ucp_listener_params_t lp{};
  lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  lp.sockaddr.addr = reinterpret_cast<const sockaddr*>(&sa.storage);
  lp.sockaddr.addrlen = sa.length;
  lp.conn_handler.cb = &ReceiveSide::on_connection;
  lp.conn_handler.arg = this;
  ucs_status_t s = ucp_listener_create(ucx_.worker(), &lp, &listener_);
  if (s != UCS_OK)
    throw Error(Errc::system, "fleet: cannot listen on " + cfg.listen.text() + ": " +
                                  ucs_status_string(s));
  ucp_listener_attr_t attr{};
  attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  if (ucp_listener_query(listener_, &attr) == UCS_OK) {
    if (attr.sockaddr.ss_family == AF_INET)
      port_ = ntohs(reinterpret_cast<const sockaddr_in*>(&attr.sockaddr)->sin_port);
    else if (attr.sockaddr.ss_family == AF_INET6)
      port_ = ntohs(reinterpret_cast<const sockaddr_in6*>(&attr.sockaddr)->sin6_port);
  }
}

ReceiveSide::~ReceiveSide() {
  if (listener_) ucp_listener_destroy(listener_);
  for (Conn& c : conns_) {
    if (c.state == ConnState::free) continue;
    // Flush mode for a live sender (its credits leave first), force for a failed one.
    close_endpoint(ucx_, c.ep, c.state == ConnState::failed);
    c.ep = nullptr;
    c.state = ConnState::free;
  }
  ucx_.progress();
}

void ReceiveSide::on_connection(ucp_conn_request_h request, void* arg) {
  auto* self = static_cast<ReceiveSide*>(arg);
  Conn* conn = nullptr;
  for (Conn& c : self->conns_)
    if (c.state == ConnState::free) {
      conn = &c;
      break;
    }
  if (!conn) {  // every connection slot taken: the sender sees its connect fail
    ucp_listener_reject(self->listener_, request);
    return;
  }
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                  UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.conn_request = request;
  ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  ep.err_handler.cb = &ReceiveSide::on_error;
  ep.err_handler.arg = conn;
  if (ucp_ep_create(self->ucx_.worker(), &ep, &conn->ep) != UCS_OK) return;
  conn->state = ConnState::open;
  ++conn->generation;
  ++self->stats_.connections;
  ++self->stats_.senders;
}

void ReceiveSide::on_error(void* arg, ucp_ep_h, ucs_status_t) {
  auto* conn = static_cast<Conn*>(arg);
  if (conn->state != ConnState::open) return;
  conn->state = ConnState::failed;  // closed in progress(), outside UCX's callback
  conn->side->any_failed_ = true;
}

void ReceiveSide::close_failed() noexcept {
  any_failed_ = false;
  for (Conn& c : conns_) {
    if (c.state != ConnState::failed) continue;
    ucp_ep_h ep = c.ep;
    c.ep = nullptr;
    c.state = ConnState::free;
    ++c.generation;  // credits for its fragments are not sent any more
    --stats_.senders;
    ++stats_.disconnects;
    close_endpoint(ucx_, ep, true);
  }
}

void ReceiveSide::progress() noexcept {
  ucx_.progress();
  if (any_failed_) close_failed();
  // Messages that found no free Message: tried again now.
  while (pending_count_ > 0 && !free_messages_.empty()) {
    Pending& p = pending_[pending_head_];
    pending_head_ = (pending_head_ + 1) % pending_.size();
    --pending_count_;
    send_message(p.to, p.am, p.bytes, p.length);
  }
}

bool ReceiveSide::find_conn(const ucp_am_recv_param_t* param, SenderRef& ref) const noexcept {
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)) return false;
  for (const Conn& c : conns_)
    if (c.state == ConnState::open && c.ep == param->reply_ep) {
      ref.conn = c.index;
      ref.generation = c.generation;
      return true;
    }
  return false;
}

void ReceiveSide::count_refusal(RefusalReason r) noexcept {
  switch (r) {
    case RefusalReason::no_buffer: ++stats_.no_buffer; break;
    case RefusalReason::too_big: ++stats_.too_big; break;
    case RefusalReason::malformed: ++stats_.malformed; break;
    case RefusalReason::late: ++stats_.late; break;
    case RefusalReason::duplicate: ++stats_.duplicate; break;
    case RefusalReason::failed: ++stats_.receive_failed; break;
    case RefusalReason::none: break;
  }
}

ucs_status_t ReceiveSide::on_fragment(void* arg, const void* header, size_t header_length,
                                      void* data, size_t length,
                                      const ucp_am_recv_param_t* param) {
  auto* self = static_cast<ReceiveSide*>(arg);
  ++self->stats_.fragments;
  SenderRef from;
  const bool known = self->find_conn(param, from);
  FragmentHeader h;
  Placement where;
  if (!decode_fragment(header, header_length, h) || h.meta.bytes != length) {
    where.refusal = RefusalReason::malformed;
    uint64_t seq = 0;
    if (!decode_seq(header, header_length, seq)) {
      ++self->stats_.malformed;  // not even a slot id: no credit can go back
      return UCS_OK;
    }
    h.seq = seq;
  } else if (!known) {
    where.refusal = RefusalReason::malformed;  // no reply endpoint: not one of our senders
  } else if (self->free_receives_.empty()) {
    where.refusal = RefusalReason::no_buffer;  // cannot happen while the placer keeps its bound
  } else {
    from.seq = h.seq;
    where = self->placer_.place(h, from);
  }
  from.seq = h.seq;
  if (where.refusal != RefusalReason::none) {
    self->count_refusal(where.refusal);
    if (known)
      self->send_credit(from, CreditStatus::refused, where.refusal, h.meta.frame, h.meta.bytes);
    return UCS_OK;
  }
  if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
    // Rendezvous: UCX pulls the bytes straight into the destination.
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.recv_am = &ReceiveSide::on_data;
    // At most one receive per placed fragment, and the placer holds at most max_receives.
    Receive& rx = self->receives_[self->free_receives_.back()];
    self->free_receives_.pop_back();
    rx.ticket = where.ticket;
    rx.length = length;
    p.user_data = &rx;
    ucs_status_ptr_t r = ucp_am_recv_data_nbx(self->ucx_.worker(), data, where.dest, length, &p);
    if (r == nullptr)
      self->finish(rx, UCS_OK);
    else if (UCS_PTR_IS_ERR(r))
      self->finish(rx, UCS_PTR_STATUS(r));
    // else: on_data finishes it.
    return UCS_OK;
  }
  if (length > 0) std::memcpy(where.dest, data, length);
  ++self->stats_.placed;
  self->stats_.bytes += length;
  self->placer_.arrived(where.ticket, true);
  return UCS_OK;
}

ucs_status_t ReceiveSide::on_hello(void* arg, const void* header, size_t header_length, void*,
                                   size_t, const ucp_am_recv_param_t* param) {
  auto* self = static_cast<ReceiveSide*>(arg);
  uint32_t value = 0;
  SenderRef from;
  if (!decode_hello(header, header_length, value) || !self->find_conn(param, from)) return UCS_OK;
  std::byte bytes[kHelloBytes];
  encode_hello(value, bytes);  // the welcome echoes the sender's value
  self->send_message(from, am_welcome, bytes, sizeof bytes);
  return UCS_OK;
}

void ReceiveSide::send_credit(const SenderRef& to, CreditStatus status, RefusalReason reason,
                              uint64_t frame, uint64_t bytes) noexcept {
  Credit c{status, reason, to.seq, frame, bytes};
  std::byte out[kCreditBytes];
  encode_credit(c, out);
  send_message(to, am_credit, out, sizeof out);
}

void ReceiveSide::send_message(const SenderRef& to, uint16_t am, const std::byte* bytes,
                               size_t n) noexcept {
  if (to.conn >= kMaxConnections) return;
  const Conn& c = conns_[to.conn];
  if (c.state != ConnState::open || c.generation != to.generation) return;  // sender gone
  if (free_messages_.empty()) {
    if (pending_count_ == pending_.size()) return;  // both full (8192 unsent): the sender's slot stays in flight until its connection ends
    Pending& p = pending_[(pending_head_ + pending_count_) % pending_.size()];
    ++pending_count_;
    p.to = to;
    p.am = am;
    p.length = static_cast<uint8_t>(n);
    std::memcpy(p.bytes, bytes, n);
    return;
  }
  Message& m = messages_[free_messages_.back()];
  free_messages_.pop_back();
  std::memcpy(m.bytes, bytes, n);
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  p.cb.send = &ReceiveSide::on_message_sent;
  p.user_data = &m;
  p.flags = UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t r = ucp_am_send_nbx(c.ep, am, m.bytes, n, nullptr, 0, &p);
  if (r == nullptr || UCS_PTR_IS_ERR(r)) free_messages_.push_back(m.index);
}

void ReceiveSide::finish(Receive& rx, ucs_status_t status) noexcept {
  const uint64_t ticket = rx.ticket;
  const bool ok = status == UCS_OK;
  if (ok) {
    ++stats_.placed;
    stats_.bytes += rx.length;
  } else {
    ++stats_.receive_failed;
  }
  free_receives_.push_back(rx.index);
  placer_.arrived(ticket, ok);
}

void ReceiveSide::on_data(void* request, ucs_status_t status, size_t, void* user_data) {
  auto* rx = static_cast<Receive*>(user_data);
  rx->side->finish(*rx, status);
  ucp_request_free(request);
}

void ReceiveSide::on_message_sent(void* request, ucs_status_t, void* user_data) {
  auto* m = static_cast<Message*>(user_data);
  m->side->free_messages_.push_back(m->index);
  ucp_request_free(request);
}

}  // namespace netdaq::fleet::detail
