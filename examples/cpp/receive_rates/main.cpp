// receive_rates: poll one rx queue, print packets/s, Gb/s and drops once a second, and a
// summary at the end (after N packets, S seconds, or Ctrl-C / SIGTERM).
//
//   receive_rates CONFIG [--interface NAME] [--queue ID] [--packets N] [--seconds S]
#include <netdaq/netdaq.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;
volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) { g_stop = 1; }

struct Args {
  std::string config, interface;  // interface "": the first one with rx queues
  uint64_t queue = 0, packets = 0;  // packets 0: no limit
  double seconds = 0;              // 0: no limit
};

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    const char* val = i + 1 < argc ? argv[i + 1] : nullptr;
    char* end = nullptr;
    if (opt[0] != '-' && a.config.empty()) { a.config = opt; continue; }
    if (!val) return false;
    ++i;
    if (opt == "--interface") a.interface = val;
    else if (opt == "--queue") a.queue = std::strtoull(val, &end, 10);
    else if (opt == "--packets") a.packets = std::strtoull(val, &end, 10);
    else if (opt == "--seconds") a.seconds = std::strtod(val, &end);
    else return false;
    if (end && (*end != '\0' || end == val || val[0] == '-' || a.queue > 65535)) return false;
  }
  return !a.config.empty();
}

void print_summary(const netdaq::QueueStats& s) {
  std::printf("summary: received=%llu bytes=%llu drops=%llu", (unsigned long long)s.packets,
              (unsigned long long)s.bytes, (unsigned long long)s.total_drops());
  for (size_t r = 0; r < netdaq::kDropReasons; ++r)  // then each reason that counted any
    if (s.drops[r]) std::printf(" %s=%llu", netdaq::to_string(netdaq::DropReason(r)), (unsigned long long)s.drops[r]);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse(argc, argv, a)) {
    std::fprintf(stderr, "usage: %s CONFIG [--interface NAME] [--queue ID] [--packets N] [--seconds S]\n", argv[0]);
    return 1;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // one line a second, also into a pipe or file
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    auto cfg = netdaq::Config::load(a.config);
    if (a.interface.empty())
      for (const auto& iface : cfg.interfaces)
        if (!iface.rx.queues.empty()) { a.interface = iface.name; break; }
    netdaq::Session session{cfg};
    auto& q = session.rx_queue(a.interface, static_cast<uint16_t>(a.queue));  // throws Error(not_found)
    std::printf("receiving on %s (%s)\n", q.name().c_str(), q.stats().mode.c_str());

    const auto start = Clock::now();
    const auto end = start + std::chrono::duration<double>(a.seconds);
    auto last_time = start;
    auto last = q.stats();
    uint64_t received = 0;
    unsigned idle = 0;
    while (!g_stop) {
      if (auto burst = q.poll()) {  // read burst[i].data() here; the buffers return when it dies
        received += burst.size();
        idle = 0;
      } else if (++idle > 16) {  // nothing for a while: sleep briefly instead of spinning a core
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
      if (a.packets && received >= a.packets) break;
      const auto now = Clock::now();
      if (a.seconds > 0 && now >= end) break;
      if (now - last_time >= std::chrono::seconds(1)) {  // rates: differences of two snapshots
        const auto s = q.stats();
        const double dt = std::chrono::duration<double>(now - last_time).count();
        std::printf("%6.1f s  %12.0f pkt/s  %8.3f Gb/s  drops=%llu\n",
                    std::chrono::duration<double>(now - start).count(), (s.packets - last.packets) / dt,
                    (s.bytes - last.bytes) * 8 / dt / 1e9, (unsigned long long)s.total_drops());
        last = s;
        last_time = now;
      }
    }
    print_summary(q.stats());
    return 0;
  } catch (const netdaq::ConfigError& e) {  // every problem in the file, with file:line:col
    std::fprintf(stderr, "receive_rates: %s\n", e.what());
    return 1;
  } catch (const netdaq::Error& e) {  // address in use, unknown interface, no memory, ...
    std::fprintf(stderr, "receive_rates: %s\n", e.what());
    return 1;
  }
}
