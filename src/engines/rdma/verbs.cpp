#include "engines/rdma/verbs.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "netdaq/status.h"
#include "util/errno_text.h"

namespace netdaq::detail::rdma {

std::string last_error() { return errno_text(errno) + " (" + errno_name(errno) + ")"; }

void require_rdma_device(const std::string& context) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  const int err = errno;
  if (list) ibv_free_device_list(list);
  if (list && n > 0) return;
  throw Error(Errc::not_found,
              context + ": no RDMA device on this host (ibv_get_device_list: " +
                  (list ? std::string("none found") : errno_text(err)) +
                  "); load the NIC's RDMA driver (mlx5_ib, irdma, bnxt_re), or add a Soft-RoCE device: "
                  "rdma link add rxe0 type rxe netdev <netdev>");
}

std::optional<CmEvent> next_event(rdma_event_channel* channel, int timeout_ms) {
  pollfd p{channel->fd, POLLIN, 0};
  const int ready = ::poll(&p, 1, timeout_ms);
  if (ready < 0 && errno != EINTR) throw Error(Errc::system, "rdma_cm event channel: poll: " + last_error());
  if (ready <= 0) return std::nullopt;
  rdma_cm_event* ev = nullptr;
  if (rdma_get_cm_event(channel, &ev) != 0) {
    if (errno == EAGAIN || errno == EINTR) return std::nullopt;
    throw Error(Errc::system, "rdma_cm event channel: rdma_get_cm_event: " + last_error());
  }
  CmEvent e{ev->event, ev->status, ev->id, {}};
  const auto* data = static_cast<const uint8_t*>(ev->param.conn.private_data);
  if (data && ev->param.conn.private_data_len) e.private_data.assign(data, data + ev->param.conn.private_data_len);
  rdma_ack_cm_event(ev);
  return e;
}

CmEvent expect_event(rdma_event_channel* channel, rdma_cm_event_type want, int timeout_ms, const std::string& context,
                     const std::string& step) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    auto e = next_event(channel, static_cast<int>(left.count()));
    if (!e) continue;
    if (e->type == want) return *e;
    throw Error(Errc::system, context + ": " + step + ": " + event_text(*e) + " instead of " + rdma_event_str(want));
  }
  throw Error(Errc::system, context + ": " + step + ": no answer within " + std::to_string(timeout_ms) +
                                 " ms (rdma.timeout_ms); is the peer up and reachable?");
}

sockaddr_storage to_sockaddr(const Endpoint& ep) noexcept {
  sockaddr_storage ss{};
  if (ep.ip && ep.ip->is_v6()) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(ep.port);
    std::memcpy(&a->sin6_addr, ep.ip->bytes.data(), 16);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(ep.port);
    if (ep.ip) a->sin_addr.s_addr = ep.ip->v4_network_order();
  }
  return ss;
}

CmId bound_cm_id(rdma_event_channel* channel, RdmaTransport transport, sockaddr_storage local) {
  auto* addr = reinterpret_cast<sockaddr*>(&local);
  rdma_cm_id* raw = nullptr;
  if (transport == RdmaTransport::rc) {
    if (rdma_create_id(channel, &raw, nullptr, RDMA_PS_TCP) != 0) return nullptr;
    CmId id(raw);
    if (rdma_bind_addr(id.get(), addr) != 0) {
      const int err = errno;
      id.reset();
      errno = err;
    }
    return id;
  }
  // rdma_create_id picks the queue-pair type from the port space (TCP: RC, UDP: UD); only
  // rdma_create_ep takes one, and its passive form binds without resolving anything.
  rdma_addrinfo info{};
  info.ai_flags = RAI_PASSIVE;
  info.ai_family = local.ss_family;
  info.ai_qp_type = IBV_QPT_UC;
  info.ai_port_space = RDMA_PS_IB;
  info.ai_src_addr = addr;
  info.ai_src_len = local.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (rdma_create_ep(&raw, &info, nullptr, nullptr) != 0) return nullptr;
  CmId id(raw);
  if (rdma_migrate_id(id.get(), channel) != 0) {  // from its own synchronous channel to ours
    const int err = errno;
    id.reset();
    errno = err;
  }
  return id;
}

ibv_qp_type qp_type_of(RdmaTransport transport) noexcept {
  return transport == RdmaTransport::uc ? IBV_QPT_UC : IBV_QPT_RC;
}

std::string event_text(const CmEvent& e) {
  std::string s = rdma_event_str(e.type);
  if (e.status) s += " (status " + std::to_string(e.status) + (e.status < 0 ? ": " + errno_text(-e.status) : "") + ")";
  return s;
}

}  // namespace netdaq::detail::rdma
