// rdma-core objects behind small RAII owners, and the blocking helpers connection setup uses
// (never the data path): waiting for an rdma_cm event with a time limit, naming a completion
// status.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/endpoint.h"
#include "netdaq/engines/rdma.h"

namespace netdaq::detail::rdma {

template <auto Destroy>
struct Destroyer {
  template <class T>
  void operator()(T* p) const noexcept {
    if (p) (void)Destroy(p);
  }
};

using EventChannel = std::unique_ptr<rdma_event_channel, Destroyer<rdma_destroy_event_channel>>;
using CmId = std::unique_ptr<rdma_cm_id, Destroyer<rdma_destroy_id>>;
using ProtectionDomain = std::unique_ptr<ibv_pd, Destroyer<ibv_dealloc_pd>>;
using CompletionQueue = std::unique_ptr<ibv_cq, Destroyer<ibv_destroy_cq>>;
using MemoryRegistration = std::unique_ptr<ibv_mr, Destroyer<ibv_dereg_mr>>;
using QueuePair = std::unique_ptr<ibv_qp, Destroyer<ibv_destroy_qp>>;  // connect: manual

// A connection's id with the queue pair rdma_create_qp made on it: the QP goes first.
class CmConnection {
 public:
  CmConnection() = default;
  explicit CmConnection(CmId id) : id_(std::move(id)) {}
  CmConnection(CmConnection&&) noexcept = default;
  CmConnection& operator=(CmConnection&& o) noexcept {
    reset();
    id_ = std::move(o.id_);
    return *this;
  }
  ~CmConnection() { reset(); }
  rdma_cm_id* id() const noexcept { return id_.get(); }
  ibv_qp* qp() const noexcept { return id_ ? id_->qp : nullptr; }
  void reset() noexcept {
    if (id_ && id_->qp) rdma_destroy_qp(id_.get());
    id_.reset();
  }

 private:
  CmId id_;
};

// An rdma_cm event, copied out and acknowledged.
struct CmEvent {
  rdma_cm_event_type type{};
  int status = 0;
  rdma_cm_id* id = nullptr;  // the new connection's id for CONNECT_REQUEST
  std::vector<uint8_t> private_data;
};

// The next event on `channel`; nullopt when none came within timeout_ms. Throws Error when the
// channel fails.
std::optional<CmEvent> next_event(rdma_event_channel* channel, int timeout_ms);
// Waits for `want` on `channel`; throws Error (what came instead, or the time limit) with
// `context` and `step` ("resolving the address") in the message.
CmEvent expect_event(rdma_event_channel* channel, rdma_cm_event_type want, int timeout_ms, const std::string& context,
                     const std::string& step);

// The endpoint's IP literal and port as a socket address (rdma_bind_addr, rdma_resolve_addr).
sockaddr_storage to_sockaddr(const Endpoint& ep) noexcept;

// A new rdma_cm id on `channel`, bound to `local` (port 0: any), in the port space of
// `transport`: RC in RDMA_PS_TCP, UC in RDMA_PS_IB with the UC queue-pair type (both sides
// must agree: the port space is part of the service id). nullptr with errno set on failure.
CmId bound_cm_id(rdma_event_channel* channel, RdmaTransport transport, sockaddr_storage local);
// The queue-pair type of `transport`.
ibv_qp_type qp_type_of(RdmaTransport transport) noexcept;

// "RDMA_CM_EVENT_REJECTED (status 28: ...)": an event as a message names it.
std::string event_text(const CmEvent& e);
// The errno of the last rdma-core call, as text ("Cannot assign requested address (errno 99)").
std::string last_error();
// Throws Error(not_found) when this host has no RDMA device at all, saying what to load.
void require_rdma_device(const std::string& context);

}  // namespace netdaq::detail::rdma
