// UCP context + worker for the fleet classes (see ucx_context.h).
#include "fleet/ucx_context.h"

#include <netdb.h>
#include <time.h>

#include <cstring>

#include "netdaq/status.h"

namespace netdaq::fleet::detail {

namespace {
// shm: UCX's shared memory transports (sysv, posix, cma) for the data, self for a process
// talking to itself, and tcp, which the sockaddr connection manager needs to reach 127.0.0.1
// at all (without it UCX 1.13 says "device lo is not enabled"). When a peer's worker is gone,
// UCX logs "mm ep failed to connect to remote FIFO" while the endpoints to it close: noise.
const char* tls_for(Transport t) {
  switch (t) {
    case Transport::tcp: return "tcp";
    case Transport::shm: return "shm,self,tcp";
    case Transport::automatic: break;
  }
  return "all";
}
void check(ucs_status_t s, const char* what) {
  if (s != UCS_OK)
    throw Error(Errc::system, std::string("fleet: ") + what + ": " + ucs_status_string(s));
}
}  // namespace

UcxWorker::UcxWorker(Transport t, const std::string& devices) {
  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
  // The config decides the transports: an environment UCX_TLS is overridden.
  ucs_status_t s = ucp_config_modify(config, "TLS", tls_for(t));
  // Keepalive: a peer that died without closing (SIGKILL over shm) is noticed within ~1 s.
  if (s == UCS_OK) s = ucp_config_modify(config, "KEEPALIVE_INTERVAL", "200ms");
  if (s == UCS_OK && !devices.empty()) s = ucp_config_modify(config, "NET_DEVICES", devices.c_str());
  // A receiver restarted on its port binds while the old connections are in TIME_WAIT
  // (UCX_TCP_CM_REUSEADDR; the tcp connection manager reads it as CM_REUSEADDR).
  if (s == UCS_OK) s = ucp_config_modify(config, "CM_REUSEADDR", "y");
  // Shared memory takes endpoints with peer error handling only when its own (ep_check)
  // error handling is on: without it UCX 1.13 wires a sockaddr endpoint over tcp only
  // (UCX_MM_ERROR_HANDLING, openucx/ucx#8477).
  if (s == UCS_OK && t != Transport::tcp) s = ucp_config_modify(config, "MM_ERROR_HANDLING", "y");
  // With peer error handling UCX 1.13's default rendezvous moves shm frames of 64 KiB and more
  // over its tcp lane (bench/fleet.md: 2.1 GB/s at 1 MiB); get_zcopy keeps them in shared
  // memory (6.5 GB/s). There is no cma lane under peer error handling in 1.13, which is what
  // ucx_perftest, running without error handling, uses (15 GB/s).
  if (s == UCS_OK && t == Transport::shm) s = ucp_config_modify(config, "RNDV_SCHEME", "get_zcopy");
  if (s != UCS_OK) {
    ucp_config_release(config);
    check(s, "ucp_config_modify");
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_AM;
  params.mt_workers_shared = 0;
  s = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  check(s, "ucp_init");
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SINGLE;
  s = ucp_worker_create(context_, &wp, &worker_);
  if (s != UCS_OK) {
    ucp_cleanup(context_);
    check(s, "ucp_worker_create");
  }
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
  if (ucp_worker_query(worker_, &attr) == UCS_OK) max_am_header_ = attr.max_am_header;
}

UcxWorker::~UcxWorker() {
  if (worker_) ucp_worker_destroy(worker_);
  if (context_) ucp_cleanup(context_);
}

void UcxWorker::progress() noexcept {
  for (int i = 0; i < 64 && ucp_worker_progress(worker_) != 0; ++i) {
  }
}

void UcxWorker::set_handler(uint16_t id, ucp_am_recv_callback_t cb, void* arg) {
  ucp_am_handler_param_t p{};
  p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                 UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  p.id = id;
  p.cb = cb;
  p.arg = arg;
  p.flags = UCP_AM_FLAG_WHOLE_MSG;
  check(ucp_worker_set_am_recv_handler(worker_, &p), "ucp_worker_set_am_recv_handler");
}

std::vector<SockAddr> resolve_all(const Address& a) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = a.host.empty() ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  std::string port = std::to_string(a.port);
  int rc = getaddrinfo(a.host.empty() ? nullptr : a.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || !res)
    throw Error(Errc::invalid_config,
                "fleet: cannot resolve '" + a.text() + "': " + gai_strerror(rc));
  std::vector<SockAddr> all;
  for (const addrinfo* r = res; r; r = r->ai_next) {
    SockAddr out;
    std::memcpy(&out.storage, r->ai_addr, r->ai_addrlen);
    out.length = r->ai_addrlen;
    all.push_back(out);
  }
  freeaddrinfo(res);
  return all;
}

SockAddr resolve(const Address& a) { return resolve_all(a).front(); }

ucs_status_t wait_request(UcxWorker& w, ucs_status_ptr_t request, uint32_t timeout_ms) noexcept {
  if (request == nullptr) return UCS_OK;
  if (UCS_PTR_IS_ERR(request)) return UCS_PTR_STATUS(request);
  const uint64_t deadline = monotonic_ns() + uint64_t(timeout_ms) * 1000000u;
  ucs_status_t s;
  while ((s = ucp_request_check_status(request)) == UCS_INPROGRESS && monotonic_ns() < deadline)
    w.progress();
  ucp_request_free(request);  // one still under way is released by UCX when it completes
  return s;
}

void close_endpoint(UcxWorker& w, ucp_ep_h ep, bool force) noexcept {
  if (!ep) return;
  ucp_request_param_t p{};
  if (!force) {
    // What was sent leaves first (bounded: a peer that does not progress is not waited for).
    (void)wait_request(w, ucp_ep_flush_nbx(ep, &p), 500);
  }
  // Then a forced close: whatever is still under way on it (a rendezvous the peer never
  // pulled, a receive the peer never finished) completes failed now. A flush-mode close that
  // timed out would leave those requests on the endpoint, and UCX 1.13 aborts in
  // ucp_worker_destroy on them (ucp_ep.c: proto_reqs not empty).
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = UCP_EP_CLOSE_FLAG_FORCE;
  (void)wait_request(w, ucp_ep_close_nbx(ep, &p), 500);
}

uint64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}
uint64_t realtime_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

}  // namespace netdaq::fleet::detail
