// One UCP context and one single-threaded worker with active messages, set up from a
// Transport (UCX_TLS decided by the config, not the environment) with a short keepalive so a
// dead peer is noticed within about a second on every transport.
#pragma once

#include <sys/socket.h>
#include <ucp/api/ucp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "netdaq/fleet.h"

namespace netdaq::fleet::detail {

class UcxWorker {
 public:
  // devices: UCX_NET_DEVICES ("": UCX's default, every device). Throws netdaq::Error.
  UcxWorker(Transport t, const std::string& devices);
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  ucp_worker_h worker() const noexcept { return worker_; }
  size_t max_am_header() const noexcept { return max_am_header_; }
  // Calls ucp_worker_progress until it reports nothing more to do (bounded).
  void progress() noexcept;
  // Installs cb for active message id (whole messages; rendezvous data left to the handler).
  void set_handler(uint16_t id, ucp_am_recv_callback_t cb, void* arg);

 private:
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  size_t max_am_header_ = 0;
};

// Resolves a numeric or named host and the port into a sockaddr (throws netdaq::Error).
struct SockAddr {
  sockaddr_storage storage{};
  socklen_t length = 0;
};
SockAddr resolve(const Address& a);
// Every address the host resolves to, in the resolver's order (throws netdaq::Error as resolve).
std::vector<SockAddr> resolve_all(const Address& a);

// Waits (progressing) for a request UCX returned, up to timeout_ms; frees it. Setup/teardown only.
ucs_status_t wait_request(UcxWorker& w, ucs_status_ptr_t request, uint32_t timeout_ms) noexcept;

// Closes an endpoint: unless force, what was sent is flushed first (bounded wait); then the
// close is forced, so nothing stays under way on it.
void close_endpoint(UcxWorker& w, ucp_ep_h ep, bool force) noexcept;

uint64_t monotonic_ns() noexcept;
uint64_t realtime_ns() noexcept;

}  // namespace netdaq::fleet::detail
