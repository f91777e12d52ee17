// header_split: receive with header-data split and show where each packet's parts live:
// segment 0 (the first bytes: the application's header) in a buffer of the queue's first
// region, segment 1 (the rest) in a buffer of its second region. The packets come from the
// config's tx interface when it has one.
//
//   header_split CONFIG [--packets N]
// Exit: 0 all received, 1 bad arguments or packets missing, 2 the config cannot run here
// (invalid, engine not built in, no buffer split on the NIC).
#include <netdaq/netdaq.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

// A datagram: a 64-byte application header (sequence number, text), then the payload.
uint32_t fill(std::span<std::byte> buf, uint64_t seq) {
  char text[64] = {};
  std::memcpy(text, &seq, sizeof seq);
  std::snprintf(text + 8, sizeof text - 8, "header #%llu", (unsigned long long)seq);
  std::memcpy(buf.data(), text, sizeof text);
  const int n = std::snprintf(reinterpret_cast<char*>(buf.data()) + 64, buf.size() - 64,
                              "payload #%llu: samples would go here", (unsigned long long)seq);
  return static_cast<uint32_t>(64 + n);
}

// Up to 40 printable characters of a segment.
std::string preview(std::span<const std::byte> s, size_t skip) {
  std::string out;
  for (size_t i = skip; i < s.size() && out.size() < 40; ++i) {
    const char c = static_cast<char>(s[i]);
    if (c == '\0') break;
    out += (c >= 32 && c < 127) ? c : '.';
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t count = 4;
  if (argc == 4 && std::strcmp(argv[2], "--packets") == 0) count = std::strtoull(argv[3], nullptr, 10);
  if ((argc != 2 && argc != 4) || count == 0) {
    std::fprintf(stderr, "usage: %s CONFIG [--packets N]\n", argv[0]);
    return 1;
  }
  try {
    // A netdaq without the config's engine refuses it here (ConfigError: "not built into this
    // netdaq"), a NIC without buffer split when the Session opens it (Error): both exit 2.
    const auto cfg = netdaq::Config::load(argv[1]);
    const netdaq::InterfaceConfig *rx_if = nullptr, *tx_if = nullptr;
    for (const auto& i : cfg.interfaces) {
      if (!rx_if && !i.rx.queues.empty()) rx_if = &i;
      if (!tx_if && !i.tx.queues.empty()) tx_if = &i;
    }
    if (!rx_if || rx_if->rx.queues[0].memory_regions.size() != 2)
      throw netdaq::Error(netdaq::Errc::invalid_config, std::string(argv[1]) + ": no rx queue with two memory regions");
    netdaq::Session session{cfg};
    auto& in = session.rx_queue(rx_if->name, rx_if->rx.queues[0].id);
    const auto& regions = in.config().memory_regions;
    netdaq::TxQueue* out = tx_if ? &session.tx_queue(tx_if->name, tx_if->tx.queues[0].id) : nullptr;
    uint64_t queued = 0, received = 0;
    netdaq::TxBurst tx;
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (received < count && Clock::now() < deadline) {
      if (out && !tx && queued < count) {
        tx = out->allocate(count - queued);
        for (auto& p : tx) p.set_size(fill(p.buffer(), queued++));
      }
      if (tx) tx.send();  // what the engine does not take now stays in tx for the next round
      auto burst = in.poll();
      if (!burst) std::this_thread::sleep_for(std::chrono::microseconds(50));
      for (const auto& pkt : burst) {
        std::printf("packet %llu: %u bytes in %u segment(s)\n", (unsigned long long)received++, pkt.size(),
                    pkt.segments());
        for (unsigned s = 0; s < pkt.segments(); ++s) {
          const auto seg = pkt.segment(s);  // read in place: no copy
          std::string what = preview(seg, 0);
          if (s == 0 && seg.size() >= 8) {  // our header: the sequence number, then text
            uint64_t seq = 0;
            std::memcpy(&seq, seg.data(), sizeof seq);
            what = "seq " + std::to_string(seq) + " \"" + preview(seg, 8) + "\"";
          } else {
            what = "\"" + what + "\"";
          }
          std::printf("  segment %u  region %-8s %4zu bytes at %p  %s\n", s,
                      s < regions.size() ? regions[s].c_str() : "?", seg.size(),
                      static_cast<const void*>(seg.data()), what.c_str());
        }
      }
    }  // each burst's buffers (both segments) go back to their pools when it dies
    const auto st = in.stats();
    std::printf("summary: received=%llu bytes=%llu drops=%llu\n", (unsigned long long)st.packets,
                (unsigned long long)st.bytes, (unsigned long long)st.total_drops());
    return received >= count ? 0 : 1;
  } catch (const netdaq::Error& e) {  // ConfigError too: every problem, with file:line:col
    std::fprintf(stderr, "header_split: %s\n", e.what());
    return 2;
  }
}
