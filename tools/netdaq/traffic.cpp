// run_traffic: plan the threads, run them under the controller, collect what they counted.
#include "traffic.h"

#include <atomic>
#include <cstdio>
#include <thread>

#include "idle_backoff.h"
#include "live_sampler.h"
#include "signals.h"
#include "traffic_plan.h"
#include "traffic_results.h"
#include "traffic_stop.h"

namespace netdaq::cli {

namespace {

struct StopFlags {
  std::atomic<bool> tx{false}, rx{false};
};

// Receivers first, so that they poll before the first packet is sent.
std::vector<std::thread> start_threads(Workers& w, const TrafficOptions& opt, uint64_t deadline, StopFlags& stop) {
  std::vector<std::thread> threads;
  for (auto& r : w.receivers) threads.emplace_back([&opt, &stop, rp = r.get()] { receiver_loop(*rp, opt, stop.rx); });
  for (auto& s : w.senders)
    threads.emplace_back([&opt, &stop, deadline, sp = s.get()] { sender_loop(*sp, opt, deadline, stop.tx); });
  return threads;
}

// The controller (the calling thread) until the stop policy says the run is over: a Ctrl-C
// stops the senders (the receivers drain), and every stats interval a live sample goes out.
// Returns whether Ctrl-C was seen.
bool control(Session& session, const Workers& w, const TrafficOptions& opt, uint64_t t0, uint64_t deadline,
             const LiveCallback& live, StopFlags& stop) {
  StopPolicy policy(opt, deadline, w);
  LiveSampler sampler(session, w, opt.stats_interval_ms, t0);
  bool interrupted = false;
  for (;;) {
    const uint64_t now = payload_clock_ns();
    if (stop_requested() && !interrupted) {
      interrupted = true;
      stop.tx.store(true);
    }
    if (policy.over(now, interrupted)) break;
    if (live) sampler.tick(now, live);
    sleep_us(2000);
  }
  return interrupted;
}

}  // namespace

TrafficResult run_traffic(Session& session, const TrafficOptions& opt, const LiveCallback& live) {
  Workers w = plan_traffic(session, opt);
  StopFlags stop;
  const uint64_t t0 = payload_clock_ns();
  const uint64_t deadline = opt.duration_s > 0 ? t0 + static_cast<uint64_t>(opt.duration_s * 1e9) : 0;
  std::vector<std::thread> threads = start_threads(w, opt, deadline, stop);

  TrafficResult res;
  res.interrupted = control(session, w, opt, t0, deadline, live, stop);
  stop.tx.store(true);
  stop.rx.store(true);
  for (auto& t : threads) t.join();
  res.elapsed_s = double(payload_clock_ns() - t0) / 1e9;
  res.stats = session.stats();
  res.flows = session.flow_stats();
  collect_results(w, opt, res);
  return res;
}

std::optional<TrafficResult> run_traffic_or_print_error(Session& session, const TrafficOptions& opt,
                                                        const LiveCallback& live, const char* command) {
  try {
    return run_traffic(session, opt, live);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", command, e.what());
    return std::nullopt;
  }
}

}  // namespace netdaq::cli
