// MetricsServer: cpp-httplib's server on a thread of its own, answering GET /metrics with the
// text of a fresh snapshot. Two worker threads, no keep-alive: a scraper holding a connection
// never blocks another. A port in use is an error (no SO_REUSEPORT).
#include <httplib.h>

#include <cerrno>
#include <chrono>
#include <mutex>
#include <thread>

#include "metrics/listen_address.h"
#include "netdaq/metrics.h"
#include "netdaq/session.h"
#include "netdaq/status.h"

namespace netdaq {

struct MetricsServer::Impl {
  Collector collect;
  metrics::ListenAddress address;
  std::mutex mu;  // pipelines: added by the application, read by scrapes
  struct Pipeline {
    std::string interface, queue;
    std::function<gpu::PipelineStats()> stats;
    std::function<std::vector<gpu::StreamStats>()> streams;  // may be empty
  };
  std::vector<Pipeline> pipelines;
  std::atomic<uint64_t> scrapes{0};
  httplib::Server server;
  std::thread thread;

  std::string text() {
    MetricsSnapshot s = collect ? collect() : MetricsSnapshot{};
    {
      std::lock_guard lock(mu);
      for (auto& p : pipelines) {
        s.pipelines.push_back({p.interface, p.queue, p.stats(), {}});
        if (p.streams) s.pipelines.back().streams = p.streams();
      }
    }
    return prometheus_text(s);
  }

  void routes() {
    server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      try {
        res.set_content(text(), kPrometheusContentType);
        scrapes.fetch_add(1, std::memory_order_relaxed);
      } catch (const std::exception& e) {
        res.status = 500;
        res.set_content(std::string("netdaq metrics: ") + e.what() + "\n", "text/plain");
      }
    });
    server.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html><body><p>netdaq: <a href=\"/metrics\">/metrics</a></p></body></html>\n", "text/html");
    });
    server.new_task_queue = [] { return new httplib::ThreadPool(2); };
    server.set_keep_alive_max_count(1);
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which lets a second server
    // share a port in use instead of failing.
    server.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    server.set_read_timeout(5, 0);
    server.set_write_timeout(5, 0);
  }

  void bind(std::string_view text) {
    errno = 0;
    int port = address.port;
    if (port == 0)
      port = server.bind_to_any_port(address.host);
    else if (!server.bind_to_port(address.host, port))
      port = -1;
    if (port < 0) {
      const int err = errno ? errno : EADDRNOTAVAIL;
      throw_system_error("metrics address '" + std::string(text) + "': cannot listen", err);
    }
    address.port = static_cast<uint16_t>(port);
  }

  void start() {
    thread = std::thread([this] { server.listen_after_bind(); });
    // stop() does nothing before the server runs: wait for it (listen_after_bind sets it at once).
    for (int i = 0; i < 5000 && !server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
};

MetricsServer::MetricsServer(std::string_view address, const Session& session)
    : MetricsServer(address, [&session] { return metrics_snapshot(session); }) {}

MetricsServer::MetricsServer(std::string_view address, Collector collect) : impl_(std::make_unique<Impl>()) {
  impl_->collect = std::move(collect);
  impl_->address = metrics::parse_listen_address(address);
  metrics::check_resolves(impl_->address, address);
  impl_->routes();
  impl_->bind(address);
  impl_->start();
}

MetricsServer::~MetricsServer() { stop(); }

void MetricsServer::stop() noexcept {
  if (!impl_ || !impl_->thread.joinable()) return;
  impl_->server.stop();
  impl_->thread.join();
}

void MetricsServer::add_pipeline(std::string interface, std::string queue, std::function<gpu::PipelineStats()> stats,
                                 std::function<std::vector<gpu::StreamStats>()> streams) {
  std::lock_guard lock(impl_->mu);
  impl_->pipelines.push_back({std::move(interface), std::move(queue), std::move(stats), std::move(streams)});
}

void MetricsServer::add_pipeline(std::string interface, std::string queue, const PublishedPipelineStats& published) {
  std::function<std::vector<gpu::StreamStats>()> streams;
  if (published.stream_capacity()) streams = [&published] { return published.load_streams(); };
  add_pipeline(std::move(interface), std::move(queue), [&published] { return published.load(); }, std::move(streams));
}

const std::string& MetricsServer::host() const noexcept { return impl_->address.host; }
uint16_t MetricsServer::port() const noexcept { return impl_->address.port; }
uint64_t MetricsServer::scrapes() const noexcept { return impl_->scrapes.load(std::memory_order_relaxed); }

std::string MetricsServer::url() const {
  const std::string& h = impl_->address.host;
  const bool v6 = h.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + h + "]" : h) + ":" + std::to_string(impl_->address.port) + "/metrics";
}

}  // namespace netdaq
