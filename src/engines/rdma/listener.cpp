// The rdma_cm server of an interface: one listening id on its address; a connection request
// goes to the first rx queue without a connection (none free: rejected, logged).
#include <poll.h>

#include "core/log.h"
#include "engines/rdma/ports.h"

namespace netdaq::detail::rdma {

namespace {
constexpr int kStopCheckMs = 100;  // how often the thread looks at the stop flag
}

Listener::Listener(const Endpoint& address, const RdmaOptions& o, const std::string& context)
    : options_(o), context_(context), channel_(rdma_create_event_channel()) {
  if (!channel_) throw Error(Errc::system, context_ + ": rdma_create_event_channel: " + last_error());
  sockaddr_storage sa = to_sockaddr(address);
  id_ = bound_cm_id(channel_.get(), o.transport, sa);
  if (!id_) {
    const int err = errno;
    throw Error(err == EADDRINUSE ? Errc::resource : Errc::not_found,
                context_ + ": rdma_bind_addr " + address.to_string() + ": " + last_error() +
                    (err == EADDRNOTAVAIL ? " (no local interface has " + address.host + ")"
                     : err == EADDRINUSE  ? " (another program listens on that rdma_cm port)"
                                          : ""));
  }
  if (!id_->verbs)
    throw Error(Errc::not_found, context_ + ": no RDMA device holds " + address.host +
                                     " (rdma link show; for Soft-RoCE: rdma link add rxe0 type rxe netdev <netdev>)");
  if (rdma_listen(id_.get(), 16) != 0) throw Error(Errc::system, context_ + ": rdma_listen: " + last_error());
}

Listener::~Listener() { stop(); }

void Listener::add_queue(ConnectedRx* port) {
  {
    std::lock_guard lock(mu_);
    ports_.push_back(port);
  }
  if (!thread_) thread_ = std::make_unique<std::thread>([this] { run(); });
}

void Listener::stop() noexcept {
  stop_.store(true);
  if (thread_ && thread_->joinable()) thread_->join();
  thread_.reset();
}

void Listener::run() noexcept {
  while (!stop_.load(std::memory_order_relaxed)) {
    try {
      if (auto e = next_event(channel_.get(), kStopCheckMs)) on_event(*e);
    } catch (const std::exception& ex) {
      log()->error("{}: {}", context_, ex.what());
      return;
    }
  }
}

void Listener::on_event(const CmEvent& e) noexcept {
  std::lock_guard lock(mu_);
  if (e.type == RDMA_CM_EVENT_CONNECT_REQUEST) {
    CmId id(e.id);
    ConnectedRx* free = nullptr;
    for (ConnectedRx* p : ports_)
      if (p->idle()) {
        free = p;
        break;
      }
    if (!free) {
      log()->warn("{}: connection request refused: each of the {} rx queues has its connection", context_,
                  ports_.size());
      rdma_reject(id.get(), nullptr, 0);
      return;  // CmId destroys the request's id
    }
    try {
      free->accept(id, e.private_data);
    } catch (const std::exception& ex) {
      log()->error("{}: connection request refused: {}", context_, ex.what());
      if (id) rdma_reject(id.get(), nullptr, 0);  // the peer hears REJECTED at once
    }
    return;
  }
  // The other events of an accepted connection: find its queue.
  for (ConnectedRx* p : ports_) {
    if (p->connection_id() != e.id) continue;
    if (e.type == RDMA_CM_EVENT_DISCONNECTED) {
      log()->info("{}: the peer of rx queue '{}' disconnected", context_, p->resources().name);
      p->disconnected();
    } else if (e.type != RDMA_CM_EVENT_ESTABLISHED) {
      log()->warn("{}: rx queue '{}': {}", context_, p->resources().name, event_text(e));
    }
  }
}

}  // namespace netdaq::detail::rdma
