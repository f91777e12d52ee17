// quickstart: send a bounded number of UDP datagrams over loopback and receive them, with the
// whole netdaq API a receiver and a sender need: Config, Session, RxQueue::poll, TxQueue::allocate.
//
//   quickstart [CONFIG] [--packets N]      (CONFIG: the quickstart.yaml next to the executable)
#include <netdaq/netdaq.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

// Writes a datagram into a TX buffer: an 8-byte sequence number and some text. Returns its size.
uint32_t fill(std::span<std::byte> buf, uint64_t seq) {
  char text[64];
  const int n = std::snprintf(text, sizeof text, "hello from netdaq, packet %llu", (unsigned long long)seq);
  std::memcpy(buf.data(), &seq, sizeof seq);
  std::memcpy(buf.data() + sizeof seq, text, static_cast<size_t>(n));
  return static_cast<uint32_t>(sizeof seq + n);
}

std::string default_config() {
  std::error_code ec;  // next to the executable, so it works from any working directory
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "quickstart.yaml" : (exe.parent_path() / "quickstart.yaml").string();
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = default_config();
  uint64_t count = 1000;
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    if (std::strcmp(argv[i], "--packets") == 0 && i + 1 < argc) {
      count = std::strtoull(argv[++i], &end, 10);
      if (*end == '\0' && count > 0) continue;
    } else if (argv[i][0] != '-') {
      path = argv[i];
      continue;
    }
    std::fprintf(stderr, "usage: %s [CONFIG] [--packets N]\n", argv[0]);
    return 1;
  }
  const auto deadline = Clock::now() + std::chrono::seconds(10);  // bound the run in time too
  uint64_t sent = 0, queued = 0, received = 0, bytes = 0;
  try {
    // README snippet begins
    auto cfg = netdaq::Config::load(path);      // throws ConfigError: file:line:col, key, what is allowed
    netdaq::Session session{cfg};               // opens every queue in the config
    auto& in = session.rx_queue("receiver", 0);
    auto& out = session.tx_queue("sender", 0);
    netdaq::TxBurst tx;                         // filled packets the engine has not taken yet
    while (received < count && Clock::now() < deadline) {
      if (!tx && queued < count) {
        tx = out.allocate(count - queued);      // up to n pool buffers (fewer when the pool runs low)
        for (auto& p : tx) p.set_size(fill(p.buffer(), queued++));
      }
      if (tx) sent += tx.send();                // how many the engine took; the rest stay in tx for a retry
      if (auto burst = in.poll()) {             // non-blocking; empty burst when nothing arrived
        for (const auto& pkt : burst) bytes += pkt.size();  // pkt.data(): the payload, read in place
        received += burst.size();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(20));  // nothing yet: don't spin a core
      }                                         // a burst's buffers go back to the pool when it dies
    }
    // README snippet ends
    const auto drops = in.stats().total_drops();
    std::printf("summary: sent=%llu received=%llu bytes=%llu drops=%llu\n", (unsigned long long)sent,
                (unsigned long long)received, (unsigned long long)bytes, (unsigned long long)drops);
    if (received != count) std::fprintf(stderr, "quickstart: expected %llu packets\n", (unsigned long long)count);
    return received == count ? 0 : 1;
  } catch (const netdaq::ConfigError& e) {  // every problem in the file, one per line
    std::fprintf(stderr, "quickstart: %s\n", e.what());
    return 1;
  } catch (const netdaq::Error& e) {        // the system refused: address in use, no memory, ...
    std::fprintf(stderr, "quickstart: %s\n", e.what());
    return 1;
  }
}
