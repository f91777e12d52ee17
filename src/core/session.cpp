#include "netdaq/session.h"

#include <map>

#include "core/buffer_pool.h"
#include "core/engine.h"
#include "core/log.h"
#include "core/memory_region.h"
#include "core/rx_queue.h"
#include "core/tx_queue.h"
#include "core/worker_thread.h"

namespace netdaq {

// ---- RxQueue / TxQueue: thin public faces over the implementations ----
RxQueue::RxQueue(std::unique_ptr<detail::RxQueueImpl> impl) : impl_(std::move(impl)) {}
RxQueue::~RxQueue() = default;
RxBurst RxQueue::poll() noexcept { return impl_->poll(); }
bool RxQueue::finished() const noexcept { return impl_->finished(); }
HandedOverRings RxQueue::hand_over_rings() { return impl_->hand_over_rings(); }
QueueStats RxQueue::stats() const { return impl_->stats(); }
const QueueConfig& RxQueue::config() const noexcept { return *impl_->resources().queue; }
const std::string& RxQueue::name() const noexcept { return impl_->resources().name; }
const std::string& RxQueue::interface() const noexcept { return impl_->resources().iface->name; }

TxQueue::TxQueue(std::unique_ptr<detail::TxQueueImpl> impl) : impl_(std::move(impl)) {}
TxQueue::~TxQueue() = default;
TxBurst TxQueue::allocate(size_t n) noexcept { return impl_->allocate(n); }
QueueStats TxQueue::stats() const { return impl_->stats(); }
const QueueConfig& TxQueue::config() const noexcept { return *impl_->resources().queue; }
const std::string& TxQueue::name() const noexcept { return impl_->resources().name; }
const std::string& TxQueue::interface() const noexcept { return impl_->resources().iface->name; }
uint32_t TxQueue::buffer_size() const noexcept { return impl_->resources().pools[0]->buf_size(); }
HandedOverTxRings TxQueue::hand_over_rings(uint32_t payload_bytes, uint32_t buffers) {
  return impl_->hand_over_rings(payload_bytes, buffers);
}

// ---- Session ----
struct Session::Impl {
  Config config;
  // Destruction order matters (reverse of declaration): queues, then engines, then pools,
  // then regions.
  std::map<std::string, std::unique_ptr<detail::MemoryRegion>> regions;
  std::map<std::string, std::unique_ptr<detail::BufferPool>> pools;
  std::vector<std::unique_ptr<detail::Engine>> engines;
  std::vector<std::unique_ptr<detail::QueueCounters>> counters;  // outlive the queues using them
  std::vector<std::unique_ptr<RxQueue>> rx;
  std::vector<std::unique_ptr<TxQueue>> tx;
  std::vector<detail::RxQueueImpl*> rx_impls;
  std::vector<std::unique_ptr<detail::WorkerThread>> workers;  // stopped before the queues go
  bool stopped = false;

  detail::Engine& engine_of(std::string_view interface);  // throws Error(not_found)

  detail::QueueResources resources(const InterfaceConfig& iface, const QueueConfig& q, bool is_rx) {
    detail::QueueResources r;
    r.config = &config;
    r.iface = &iface;
    r.queue = &q;
    r.name = !q.name.empty() ? q.name : iface.name + (is_rx ? "/rx" : "/tx") + std::to_string(q.id);
    r.segments = static_cast<unsigned>(q.memory_regions.size());
    for (unsigned s = 0; s < r.segments; ++s) r.pools[s] = pools.at(q.memory_regions[s]).get();
    counters.push_back(std::make_unique<detail::QueueCounters>());
    r.counters = counters.back().get();
    return r;
  }
};

Session::Session(Config config) : impl_(std::make_unique<Impl>()) {
  config.validate_or_throw();
  impl_->config = std::move(config);
  auto& im = *impl_;
  detail::set_log_level(im.config.log.level);

  for (const auto& rc : im.config.memory_regions) {
    auto region = detail::create_region(rc);
    im.pools[rc.name] = std::make_unique<detail::BufferPool>(*region, rc.buf_size, rc.num_bufs);
    im.regions[rc.name] = std::move(region);
  }
  try {
    for (const auto& iface : im.config.interfaces) {
      auto factory = detail::find_engine(iface.engine);
      if (!factory) {
        std::string built;
        for (auto& e : detail::registered_engines()) built += (built.empty() ? "" : ", ") + e;
        throw Error(Errc::unsupported, "interface '" + iface.name + "': engine '" + iface.engine +
                                           "' is not built into this netdaq (built in: " + built + ")");
      }
      im.engines.push_back(factory(im.config, iface));
      auto& engine = *im.engines.back();
      for (const auto& q : iface.rx.queues) {
        auto res = im.resources(iface, q, true);
        auto port = engine.open_rx(res);
        auto impl = std::make_unique<detail::RxQueueImpl>(res, std::move(port));
        im.rx_impls.push_back(impl.get());
        im.rx.push_back(std::make_unique<RxQueue>(std::move(impl)));
      }
      for (const auto& q : iface.tx.queues) {
        auto res = im.resources(iface, q, false);
        auto port = engine.open_tx(res);
        im.tx.push_back(std::make_unique<TxQueue>(std::make_unique<detail::TxQueueImpl>(res, std::move(port))));
      }
      engine.start();
    }
    im.workers = detail::start_workers(im.rx_impls);
  } catch (...) {
    stop();
    throw;
  }
}

Session::~Session() {
  stop();
  impl_->rx.clear();
  impl_->tx.clear();
  impl_->engines.clear();
}

void Session::stop() noexcept {
  if (impl_->stopped) return;
  impl_->stopped = true;
  for (auto& w : impl_->workers) w->stop();
  for (auto* q : impl_->rx_impls) q->stop();
  for (auto& e : impl_->engines) e->stop();
}

RxQueue& Session::rx_queue(std::string_view interface, uint16_t id) {
  for (auto& q : impl_->rx)
    if (q->config().id == id && q->interface() == interface) return *q;
  throw Error(Errc::not_found, "no rx queue " + std::to_string(id) + " on interface '" + std::string(interface) + "'");
}

TxQueue& Session::tx_queue(std::string_view interface, uint16_t id) {
  for (auto& q : impl_->tx)
    if (q->config().id == id && q->interface() == interface) return *q;
  throw Error(Errc::not_found, "no tx queue " + std::to_string(id) + " on interface '" + std::string(interface) + "'");
}

std::vector<RxQueue*> Session::rx_queues() const {
  std::vector<RxQueue*> v;
  for (auto& q : impl_->rx) v.push_back(q.get());
  return v;
}

std::vector<TxQueue*> Session::tx_queues() const {
  std::vector<TxQueue*> v;
  for (auto& q : impl_->tx) v.push_back(q.get());
  return v;
}

std::vector<QueueStats> Session::stats() const {
  std::vector<QueueStats> v;
  for (auto& q : impl_->rx) v.push_back(q->stats());
  for (auto& q : impl_->tx) v.push_back(q->stats());
  return v;
}

std::vector<FlowStats> Session::flow_stats() const {
  std::vector<FlowStats> v;
  for (auto& e : impl_->engines) {
    auto f = e->flow_stats();
    v.insert(v.end(), f.begin(), f.end());
  }
  return v;
}

detail::Engine& Session::Impl::engine_of(std::string_view interface) {
  for (size_t i = 0; i < config.interfaces.size() && i < engines.size(); ++i)
    if (config.interfaces[i].name == interface) return *engines[i];
  throw Error(Errc::not_found, "no interface '" + std::string(interface) + "'");
}

void Session::add_flow(std::string_view interface, const FlowConfig& flow) { impl_->engine_of(interface).add_flow(flow); }
void Session::remove_flow(std::string_view interface, uint32_t id) { impl_->engine_of(interface).remove_flow(id); }

const Config& Session::config() const noexcept { return impl_->config; }

std::vector<std::string> engines() { return detail::registered_engines(); }

const char* version() noexcept { return NETDAQ_VERSION; }

}  // namespace netdaq
