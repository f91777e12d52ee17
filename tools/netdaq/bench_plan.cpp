#include "bench_plan.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>

#include "bench_pingpong.h"

namespace netdaq::cli {

namespace {

std::vector<int> usable_cpus() {
  std::vector<int> v;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) v.push_back(c);
  return v;
}

// A burst that stays in cache while it is verified: 256 small packets, 64 of 9 KB.
uint32_t default_batch(uint32_t size) {
  const uint32_t buf = std::max<uint32_t>(64, (size + 63) / 64 * 64);
  uint32_t batch = 256;
  while (batch > 16 && uint64_t{batch} * buf > (1u << 20)) batch /= 2;
  return batch;
}

// On a machine of a few cores, a sender and a receiver in one process each get a core of
// their own (tx from the first CPU up, rx from the last down).
void place_threads(BenchOptions& o) {
  const auto cpus = usable_cpus();
  if (!o.no_pin && !o.rx_only && !o.tx_only && cpus.size() >= 2) {
    const size_t n = cpus.size();
    for (uint32_t i = o.tx_cpu.size(); i < o.queues; ++i) o.tx_cpu.push_back(cpus[i % n]);
    for (uint32_t i = o.rx_cpu.size(); i < o.queues; ++i) o.rx_cpu.push_back(cpus[n - 1 - (i % n)]);
  }
  if (o.no_pin) o.tx_cpu.clear(), o.rx_cpu.clear();
}

// --count split over the queues (the first ones get the remainder); empty without a count.
std::vector<uint64_t> count_per_stream(const BenchOptions& o) {
  std::vector<uint64_t> per_stream;
  if (o.count)
    for (uint32_t i = 0; i < o.queues; ++i) per_stream.push_back(o.count / o.queues + (i < o.count % o.queues ? 1 : 0));
  return per_stream;
}

// The way back of --ping-pong: its receiver on A's side (rdma: the --source device) at the
// address's port + 1, unless given.
void complete_echo(BenchOptions& o) {
  if (o.count == 0) o.count = 1000;
  if (o.echo_address.empty()) {
    std::string host;
    uint32_t port = 0;
    split_port(o.address, &host, &port);  // checked by check_bench_options
    if (o.protocol == kRdmaEngine && !o.source.empty()) host = host_of(o.source);
    o.echo_address = host + ":" + std::to_string(port + 1);
  }
  if (o.echo_destination.empty()) o.echo_destination = o.echo_address;
}

bool check_ping_pong(const BenchOptions& o) {
  const auto no = [](const char* what) {
    std::fprintf(stderr, "netdaq bench: --ping-pong excludes %s (one message in flight, one thread)\n", what);
    return false;
  };
  if (o.rx_only || o.tx_only) return no("--rx-only and --tx-only");
  if (o.queues > 1) return no("--queues > 1");
  if (o.mode != "direct") return no("--mode worker");
  if (o.rate_mbps > 0 || o.rate_pps > 0) return no("--rate-mbps and --rate-pps");
  if (o.count > kMaxPingPongCount) {
    std::fprintf(stderr, "netdaq bench: --ping-pong keeps every sample: --count at most %llu\n",
                 static_cast<unsigned long long>(kMaxPingPongCount));
    return false;
  }
  std::string host;
  uint32_t port = 0;
  if (o.echo_address.empty() && (!split_port(o.address, &host, &port) || port >= 65535)) {
    std::fprintf(stderr, "netdaq bench: --ping-pong: --address %s has no port to add 1 to: give --echo-address\n",
                 o.address.c_str());
    return false;
  }
  if (!(o.reply_timeout > 0)) {
    std::fprintf(stderr, "netdaq bench: --reply-timeout must be > 0\n");
    return false;
  }
  return true;
}

}  // namespace

bool split_port(const std::string& address, std::string* host, uint32_t* port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 >= address.size() || colon + 6 < address.size()) return false;
  uint32_t p = 0;
  for (size_t i = colon + 1; i < address.size(); ++i) {
    if (address[i] < '0' || address[i] > '9') return false;
    p = p * 10 + static_cast<uint32_t>(address[i] - '0');
  }
  if (p == 0 || p > 65535) return false;
  *host = address.substr(0, colon);
  *port = p;
  return true;
}

std::string host_of(const std::string& address) {
  std::string a = address;
  if (const size_t s = a.find("://"); s != std::string::npos) a = a.substr(s + 3);
  std::string host;
  uint32_t port = 0;
  return split_port(a, &host, &port) ? host : a;
}

bool check_bench_options(const BenchOptions& o) {
  if (o.rx_only && o.tx_only) {
    std::fprintf(stderr, "netdaq bench: --rx-only and --tx-only exclude each other\n");
    return false;
  }
  if (o.size < kPayloadHeaderSize) {
    std::fprintf(stderr, "netdaq bench: --size must be at least %zu (the payload header)\n", kPayloadHeaderSize);
    return false;
  }
  return !o.ping_pong || check_ping_pong(o);
}

void complete_bench_options(BenchOptions& o) {
  if (o.queues == 0) o.queues = 1;
  if (o.ping_pong) complete_echo(o);
  if (o.batch == 0) o.batch = default_batch(o.size);
  place_threads(o);
}

TrafficOptions bench_traffic_options(const BenchOptions& o) {
  TrafficOptions t;
  t.payload_size = o.size;
  t.expected_size = o.size;
  t.verify = !o.no_verify;
  t.busy_poll = o.busy_poll;
  t.drain_ms = o.drain_ms;
  t.stats_interval_ms = 1000;
  t.tx_cpu = o.tx_cpu;
  // worker mode: the queue's worker takes the rx core; the consumer floats
  if (o.mode != "worker") t.rx_cpu = o.rx_cpu;
  if (o.has_tx()) {
    t.tx_counts = count_per_stream(o);
    t.duration_s = o.duration ? *o.duration : (o.count ? 0 : 3.0);
  } else {
    t.rx_expected = count_per_stream(o);
    t.duration_s = o.duration ? *o.duration : 0;
    t.idle_timeout_s = o.idle_timeout;
  }
  return t;
}

}  // namespace netdaq::cli
