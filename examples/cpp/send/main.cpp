// send: send N datagrams, each starting with its 64-bit sequence number (little-endian),
// retrying whatever the engine does not take at once; exit 0 only when all N went out.
//
//   send CONFIG [--interface NAME] [--packets N] [--size BYTES] [--pps RATE]
#include <netdaq/netdaq.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;
volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) { g_stop = 1; }

struct Args {
  std::string config, interface;  // interface "": the first one with tx queues
  uint64_t packets = 10000, size = 1024;
  double pps = 0;                 // 0: the config's rate (tx.rate_pps / rate_mbps)
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
    else if (opt == "--packets") a.packets = std::strtoull(val, &end, 10);
    else if (opt == "--size") a.size = std::strtoull(val, &end, 10);
    else if (opt == "--pps") a.pps = std::strtod(val, &end);
    else return false;
    if (end && (*end != '\0' || end == val || val[0] == '-')) return false;
  }
  return !a.config.empty() && a.size >= 8;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse(argc, argv, a)) {
    std::fprintf(stderr, "usage: %s CONFIG [--interface NAME] [--packets N] [--size BYTES>=8] [--pps RATE]\n", argv[0]);
    return 1;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    auto cfg = netdaq::Config::load(a.config);
    netdaq::InterfaceConfig* iface = nullptr;
    for (auto& i : cfg.interfaces)
      if (a.interface.empty() ? !i.tx.queues.empty() : i.name == a.interface) { iface = &i; break; }
    if (!iface) throw netdaq::Error(netdaq::Errc::not_found, "no interface to send from: " + a.interface);
    if (a.pps > 0) {  // a Config is plain structs: change it before the Session validates it
      iface->tx.rate_pps = a.pps;
      iface->tx.rate_mbps = 0;  // at most one of the two
    }
    // Time bound: what the pacing needs, plus 10 s.
    double need_s = iface->tx.rate_pps > 0 ? a.packets / iface->tx.rate_pps : 0;
    if (iface->tx.rate_mbps > 0) need_s = a.packets * a.size * 8 / (iface->tx.rate_mbps * 1e6);
    const auto deadline = Clock::now() + std::chrono::duration<double>(need_s + 10);

    netdaq::Session session{cfg};
    auto& q = session.tx_queue(iface->name, 0);
    if (a.size > q.buffer_size())
      throw netdaq::Error(netdaq::Errc::invalid_config, "--size " + std::to_string(a.size) +
                                                            " is larger than a buffer (" + std::to_string(q.buffer_size()) + ")");
    netdaq::TxBurst tx;  // the packets filled but not yet taken by the engine
    uint64_t next_seq = 0, taken = 0;
    while (taken < a.packets && !g_stop && Clock::now() < deadline) {
      if (!tx && next_seq < a.packets) {
        tx = q.allocate(a.packets - next_seq);  // at most batch_size buffers
        for (auto& p : tx) {
          auto buf = p.buffer();
          for (int b = 0; b < 8; ++b) buf[b] = std::byte(next_seq >> (8 * b));  // little-endian
          ++next_seq;
          p.set_size(static_cast<uint32_t>(a.size));  // the rest: your data (here whatever the buffer held)
        }
      }
      const size_t n = tx ? tx.send() : 0;  // the engine takes what it can now; the rest stay in tx
      taken += n;
      if (n == 0) std::this_thread::sleep_for(std::chrono::microseconds(10));  // socket full or paced
    }
    tx.release();  // leftovers (time out, Ctrl-C) are counted as tx_unsent

    // send() counts packets the engine took; one it took but failed to send (e.g. nobody
    // listening: ECONNREFUSED) is counted tx_error, so the queue's stats say what went out.
    const auto s = q.stats();
    std::printf("summary: sent=%llu bytes=%llu\n", (unsigned long long)s.packets, (unsigned long long)s.bytes);
    for (size_t r = 0; r < netdaq::kDropReasons; ++r)
      if (s.drops[r] && netdaq::DropReason(r) != netdaq::DropReason::tx_full)  // tx_full: refused, then retried
        std::fprintf(stderr, "send: %s=%llu\n", netdaq::to_string(netdaq::DropReason(r)), (unsigned long long)s.drops[r]);
    if (s.packets != a.packets)
      std::fprintf(stderr, "send: only %llu of %llu packets sent%s\n", (unsigned long long)s.packets,
                   (unsigned long long)a.packets, g_stop ? " (stopped)" : Clock::now() >= deadline ? " (timed out)" : "");
    return s.packets == a.packets ? 0 : 1;
  } catch (const netdaq::ConfigError& e) {  // every problem in the file, with file:line:col
    std::fprintf(stderr, "send: %s\n", e.what());
    return 1;
  } catch (const netdaq::Error& e) {  // unknown interface, size too big, no memory, ...
    std::fprintf(stderr, "send: %s\n", e.what());
    return 1;
  }
}
