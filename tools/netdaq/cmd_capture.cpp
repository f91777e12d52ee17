// netdaq capture CONFIG --output FILE.pcap: polls every rx queue of a config's session and
// writes each packet's whole Ethernet frame to a pcap file (docs/cli.md). Engines that hand
// over payloads only (socket) have no frames to write: refused before anything is opened.
#include <pcap/pcap.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cli.h"
#include "netdaq/netdaq.h"
#include "report.h"
#include "signals.h"

namespace netdaq::cli {

namespace {

struct CaptureOptions {
  std::string config;
  std::string output;
  uint64_t count = 0;     // 0: no limit
  double duration = 0;    // 0: no limit
};

// Engines whose packets carry their frame (Packet::frame()).
bool delivers_frames(const std::string& engine) { return engine == "afxdp" || engine == "dpdk"; }

// Why the config's rx queues cannot give whole frames, or "" when they can.
std::string frames_problem(const Config& cfg) {
  size_t queues = 0;
  for (const auto& i : cfg.interfaces) {
    if (i.rx.queues.empty()) continue;
    if (!delivers_frames(i.engine))
      return "interface '" + i.name + "' uses engine '" + i.engine +
             "', which delivers payloads only (no Ethernet headers); capture needs engine afxdp or dpdk";
    for (const auto& q : i.rx.queues) {
      if (q.memory_regions.size() > 1)
        return "interface '" + i.name + "' rx queue " + std::to_string(q.id) +
               " splits headers from payloads (two memory_regions); capture needs whole frames: give it one region";
      ++queues;
    }
  }
  return queues ? "" : "the config has no rx queues";
}

// A pcap file of Ethernet frames with nanosecond timestamps ("-": stdout).
class PcapFile {
 public:
  ~PcapFile() { close(nullptr); }
  bool open(const std::string& path, std::string* err) {
    dead_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, kSnaplen, PCAP_TSTAMP_PRECISION_NANO);
    if (!dead_) {
      *err = "pcap_open_dead failed";
      return false;
    }
    dumper_ = pcap_dump_open(dead_, path.c_str());
    if (!dumper_) {
      *err = "cannot write " + path + ": " + pcap_geterr(dead_);
      return false;
    }
    return true;
  }
  void write(std::span<const std::byte> frame, const timespec& ts) {
    pcap_pkthdr h{};
    h.ts.tv_sec = ts.tv_sec;
    h.ts.tv_usec = static_cast<suseconds_t>(ts.tv_nsec);  // nanoseconds in a nanosecond file
    h.len = static_cast<bpf_u_int32>(frame.size());
    h.caplen = std::min<bpf_u_int32>(h.len, kSnaplen);
    pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, reinterpret_cast<const u_char*>(frame.data()));
  }
  // Flushes and closes; false (and *err) if anything failed to reach the file.
  bool close(std::string* err) {
    bool ok = true;
    if (dumper_) {
      ok = pcap_dump_flush(dumper_) == 0 && !std::ferror(pcap_dump_file(dumper_));
      pcap_dump_close(dumper_);
      dumper_ = nullptr;
    }
    if (dead_) pcap_close(dead_);
    dead_ = nullptr;
    if (!ok && err) *err = "writing the pcap file failed";
    return ok;
  }

 private:
  static constexpr int kSnaplen = 262144;  // libpcap's maximum: jumbo frames are kept whole
  pcap_t* dead_ = nullptr;
  pcap_dumper_t* dumper_ = nullptr;
};

void print_queue_stats(std::FILE* out, const Session& s) {
  std::fprintf(out, "  %-20s %14s  drops\n", "rx queue", "packets");
  for (const QueueStats& q : s.stats()) {
    if (!q.is_rx) continue;
    std::string drops;
    for (size_t r = 0; r < kDropReasons; ++r)
      if (q.drops[r]) drops += std::string(drops.empty() ? "" : " ") + to_string(static_cast<DropReason>(r)) + "=" +
                               format_count(q.drops[r]);
    if (q.errors) drops += (drops.empty() ? "" : " ") + std::string("errors=") + format_count(q.errors);
    std::fprintf(out, "  %-20s %14s  %s\n", q.queue.c_str(), format_count(q.packets).c_str(),
                 drops.empty() ? "-" : drops.c_str());
  }
  // Packets no configured flow matched went to the kernel, not to a queue: not captured.
  for (const FlowStats& f : s.flow_stats())
    if (f.unmatched && f.packets)
      std::fprintf(out, "  %s: %s packets matched no flow (passed to the kernel, not captured)\n", f.interface.c_str(),
                   format_count(f.packets).c_str());
}

int capture(const CaptureOptions& o) {
  std::FILE* out = o.output == "-" ? stderr : stdout;  // pcap on stdout: text to stderr
  Config cfg;
  try {
    cfg = Config::load(o.config);
  } catch (const ConfigError& e) {
    for (const auto& i : e.issues()) std::fprintf(stderr, "%s\n", i.to_string().c_str());
    return kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netdaq capture: %s: %s\n", o.config.c_str(), e.what());
    return kExitError;
  }
  if (const std::string why = frames_problem(cfg); !why.empty()) {
    std::fprintf(stderr, "netdaq capture: %s: %s\n", o.config.c_str(), why.c_str());
    return kExitError;
  }

  PcapFile pcap;
  std::string err;
  if (!pcap.open(o.output, &err)) {
    std::fprintf(stderr, "netdaq capture: %s\n", err.c_str());
    return kExitError;
  }
  install_stop_signals();
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(cfg);
  } catch (const ConfigError& e) {
    for (const auto& i : e.issues()) std::fprintf(stderr, "%s\n", i.to_string().c_str());
    return kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netdaq capture: %s\n", e.what());
    return kExitError;
  }
  const std::vector<RxQueue*> queues = session->rx_queues();
  std::fprintf(out, "netdaq capture: %s: %zu rx queue%s -> %s, ", o.config.c_str(), queues.size(),
               queues.size() == 1 ? "" : "s", o.output.c_str());
  if (o.count) std::fprintf(out, "%s packets%s", format_count(o.count).c_str(), o.duration > 0 ? " or " : "");
  if (o.duration > 0) std::fprintf(out, "%.1f s", o.duration);
  if (!o.count && o.duration <= 0) std::fprintf(out, "until Ctrl-C");
  std::fprintf(out, " (Ctrl-C stops and prints the summary)\n");
  std::fflush(out);

  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration));
  uint64_t written = 0, bytes = 0;
  std::string refused;
  unsigned idle = 0;
  while (!stop_requested() && refused.empty() && !(o.count && written >= o.count) &&
         !(o.duration > 0 && Clock::now() >= deadline)) {
    bool any = false;
    for (RxQueue* q : queues) {
      RxBurst burst = q->poll();
      if (burst.empty()) continue;
      any = true;
      timespec now{};  // the time the burst was polled: engines give no receive timestamps yet
      clock_gettime(CLOCK_REALTIME, &now);
      for (const Packet& p : burst) {
        if (o.count && written >= o.count) break;
        const auto frame = p.frame();
        if (frame.empty()) {
          refused = "queue " + q->name() + " delivered a packet without its Ethernet frame (engine '" +
                    session->config().find_interface(q->interface())->engine + "'); capture needs whole frames";
          break;
        }
        pcap.write(frame, now);
        ++written;
        bytes += frame.size();
      }
      if (!refused.empty()) break;
    }
    // The CLI's idle policy (docs/cli.md): spin a little, then sleep briefly.
    idle = any ? 0 : idle + 1;
    if (idle > 15) std::this_thread::sleep_for(std::chrono::microseconds(idle > 512 ? 50 : 10));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const bool closed = pcap.close(&err);
  session->stop();

  std::fprintf(out, "netdaq capture: wrote %s packets (%s bytes) to %s in %.2f s%s\n", format_count(written).c_str(),
               format_count(bytes).c_str(), o.output.c_str(), seconds, stop_requested() ? " (interrupted)" : "");
  print_queue_stats(out, *session);
  std::fflush(out);
  if (!refused.empty()) std::fprintf(stderr, "netdaq capture: %s\n", refused.c_str());
  if (!closed) std::fprintf(stderr, "netdaq capture: %s: %s\n", o.output.c_str(), err.c_str());
  return refused.empty() && closed ? kExitOk : kExitError;
}

}  // namespace

void add_capture_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<CaptureOptions>();
  auto* cmd = app.add_subcommand("capture", "Write the frames every rx queue of a config receives to a pcap file");
  cmd->add_option("config", o->config, "YAML config whose rx queues deliver frames (engine afxdp or dpdk)")->required();
  cmd->add_option("-o,--output", o->output, "pcap file to write ('-' = stdout; text goes to stderr)")->required();
  cmd->add_option("-n,--count", o->count, "Stop after N packets (0 = no limit)");
  cmd->add_option("-d,--duration", o->duration, "Stop after S seconds (0 = until --count or Ctrl-C)")
      ->check(CLI::NonNegativeNumber);
  cmd->footer("Exit status: 0 ok (also after Ctrl-C), 1 config, setup or write error, or an engine without frames.");
  cmd->callback([o, exit_code] { *exit_code = capture(*o); });
}

}  // namespace netdaq::cli
