// netdaq roce-recv CONFIG: receives a RoCEv2 sensor's RDMA WRITEs in software (reorder mode
// roce, no RDMA NIC) into frames in host memory, and says what came: frames, the immediates
// that ended them, bytes missing, and every counter of the receiver (docs/roce-software.md).
// --local-file writes the queue pairs' parameters in the rdma engine's manual QP format, so
// a sensor (or tests/guest/fpga_peer.py) finds where to write; --check-pattern checks each
// frame's bytes against the sensor test pattern (sensor_pattern.h).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "errors.h"
#include "idle_backoff.h"
#include "netdaq/host_frames.h"
#include "netdaq/netdaq.h"
#include "netdaq/sensor_pattern.h"
#include "signals.h"

namespace netdaq::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct RoceRecvOptions {
  std::string config;
  std::string reorder;     // name; "" = the first reorder of mode roce
  std::string local_file;
  std::string gid;         // written to local_file
  uint64_t frames = 0;     // stop after this many frames (0: until idle/duration)
  double duration = 0;
  uint32_t idle_ms = 0;    // after the first packet, stop when nothing came for this long
  bool check_pattern = false;
  bool json = false;
};

const ReorderConfig* find_reorder(const Config& cfg, const std::string& name, const InterfaceConfig** iface) {
  for (const auto& i : cfg.interfaces)
    for (const auto& r : i.rx.reorder)
      if (r.mode == ReorderMode::roce && (name.empty() || r.name == name)) {
        *iface = &i;
        return &r;
      }
  return nullptr;
}

// The rdma engine's manual QP file (docs/rdma-engine.md): a sensor reads rx[i] to know where to write.
void write_local_file(const std::string& path, const std::string& gid, const RoceOptions& o) {
  nlohmann::json doc{{"gid", gid}, {"rx", nlohmann::json::array()}};
  for (const auto& q : o.queue_pairs) {
    const uint64_t stride = q.stride ? q.stride : q.slot_size;
    doc["rx"].push_back({{"qpn", q.qpn},
                         {"psn", q.psn},
                         {"ring",
                          {{"addr", q.base_va}, {"rkey", q.rkey}, {"slots", q.slots}, {"stride", stride},
                           {"slot_size", q.slot_size}}}});
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << doc.dump(1) << "\n";
    if (!f) throw Error(Errc::system, "cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error(Errc::system, "cannot rename " + tmp + " to " + path);
}

struct FrameTally {
  uint64_t frames = 0, complete = 0, incomplete = 0, bytes = 0, pattern_errors = 0;
  std::string first_error;
  std::vector<uint64_t> immediates;
};

// Checks the bytes that arrived (presence bits) against the sensor pattern of the frame's number.
void check_frame(const HostFrameView& f, FrameTally& t) {
  const uint64_t g = f.granule;
  for (uint64_t off = 0; off < f.bytes.size(); off += g) {
    const uint64_t u = off / g;
    if (!(f.presence[u / 64] >> (u % 64) & 1)) continue;
    const uint64_t end = std::min<uint64_t>(off + g, f.bytes.size());
    for (uint64_t k = off; k < end; ++k)
      if (f.bytes[k] != sensor_pattern_byte(f.frame, k)) {
        if (t.pattern_errors++ == 0)
          t.first_error = "frame " + std::to_string(f.frame) + " byte " + std::to_string(k) + " is " +
                          std::to_string(unsigned(f.bytes[k])) + ", expected " +
                          std::to_string(unsigned(sensor_pattern_byte(f.frame, k)));
        return;  // one error per frame
      }
  }
}

void take_frames(HostFrameAssembler& a, const RoceRecvOptions& o, FrameTally& t) {
  HostFrameView f;
  while (a.pop(f)) {
    ++t.frames;
    ++(f.complete ? t.complete : t.incomplete);
    t.bytes += f.bytes_present;
    for (const gpu::FrameItem& it : f.items)
      if (it.id == kRoceImmediateItem) t.immediates.push_back(it.value);
    if (o.check_pattern) check_frame(f, t);
    a.release(f);
  }
}

nlohmann::json roce_json(const RoceQueuePairStats& q) {
  return {{"qpn", q.qpn},           {"next_psn", q.next_psn},     {"packets", q.packets},
          {"placed", q.placed},     {"metadata", q.metadata},     {"send", q.send},
          {"bad_icrc", q.bad_icrc}, {"no_headers", q.no_headers}, {"unknown_qp", q.unknown_qp},
          {"bad_rkey", q.bad_rkey}, {"out_of_window", q.out_of_window}, {"no_first", q.no_first},
          {"psn_duplicate", q.psn_duplicate}, {"psn_stale", q.psn_stale}, {"malformed", q.malformed},
          {"psn_lost", q.psn_lost}, {"psn_out_of_order", q.psn_out_of_order}, {"frames_ended", q.frames_ended},
          {"psn_resyncs", q.psn_resyncs}};
}

int report(const RoceRecvOptions& o, const FrameTally& t, const HostFrameStats& s, double seconds) {
  nlohmann::json qps = nlohmann::json::array();
  nlohmann::json total;
  for (const auto& q : s.roce) (q.qpn ? qps.push_back(roce_json(q)) : void(total = roce_json(q)));
  if (o.json) {
    nlohmann::json j{{"seconds", seconds},
                     {"frames", t.frames},
                     {"complete", t.complete},
                     {"incomplete", t.incomplete},
                     {"bytes", t.bytes},
                     {"bytes_missing", s.bytes_missing},
                     {"immediates", t.immediates},
                     {"pattern_checked", o.check_pattern},
                     {"pattern_errors", t.pattern_errors},
                     {"first_pattern_error", t.first_error},
                     {"packets", s.packets},
                     {"duplicate", s.duplicate},
                     {"late", s.late},
                     {"no_buffer", s.no_buffer},
                     {"malformed", s.malformed},
                     {"last_malformed", s.last_malformed},
                     {"counters", total},
                     {"queue_pairs", qps}};
    std::printf("%s\n", j.dump(1).c_str());
  } else {
    std::printf("netdaq roce-recv: %llu frames (%llu complete, %llu incomplete, %llu bytes missing) in %.2f s\n",
                (unsigned long long)t.frames, (unsigned long long)t.complete, (unsigned long long)t.incomplete,
                (unsigned long long)s.bytes_missing, seconds);
    for (const auto& q : s.roce)
      std::printf("  %s: packets %llu placed %llu psn_lost %llu out_of_order %llu duplicate %llu bad_icrc %llu "
                  "unknown_qp %llu bad_rkey %llu out_of_window %llu no_first %llu malformed %llu\n",
                  q.qpn ? ("qp " + std::to_string(q.qpn)).c_str() : "total", (unsigned long long)q.packets,
                  (unsigned long long)q.placed, (unsigned long long)q.psn_lost,
                  (unsigned long long)q.psn_out_of_order, (unsigned long long)q.psn_duplicate,
                  (unsigned long long)q.bad_icrc, (unsigned long long)q.unknown_qp, (unsigned long long)q.bad_rkey,
                  (unsigned long long)q.out_of_window, (unsigned long long)q.no_first, (unsigned long long)q.malformed);
    if (o.check_pattern)
      std::printf("  pattern: %llu frames with wrong bytes%s%s\n", (unsigned long long)t.pattern_errors,
                  t.first_error.empty() ? "" : ", first: ", t.first_error.c_str());
  }
  if (t.pattern_errors) return kExitUnaccounted;
  if (o.frames && t.frames < o.frames) return kExitLoss;
  return kExitOk;
}

int roce_recv(const RoceRecvOptions& o) {
  Config cfg;
  if (!setup_step([&] { cfg = Config::load(o.config); }, "netdaq roce-recv: " + o.config + ": ")) return kExitError;
  const InterfaceConfig* iface = nullptr;
  const ReorderConfig* r = find_reorder(cfg, o.reorder, &iface);
  if (!r) {
    std::fprintf(stderr, "netdaq roce-recv: %s: no rx.reorder entry of mode roce%s%s\n", o.config.c_str(),
                 o.reorder.empty() ? "" : " named ", o.reorder.c_str());
    return kExitError;
  }
  const ReorderConfig reorder = *r;
  const std::string iface_name = iface->name;
  install_stop_signals();
  std::unique_ptr<Session> session;
  std::unique_ptr<HostFrameAssembler> frames;
  RxQueue* queue = nullptr;
  if (!setup_step(
          [&] {
            frames = std::make_unique<HostFrameAssembler>(reorder);
            session = std::make_unique<Session>(std::move(cfg));
            queue = &session->rx_queue(iface_name, reorder.queue);
            // Only now, with the receiver up: a UC sensor's writes before this would be lost.
            if (!o.local_file.empty()) write_local_file(o.local_file, o.gid, reorder.roce);
          },
          "netdaq roce-recv: "))
    return kExitError;

  FrameTally t;
  const auto t0 = Clock::now();
  auto last_packet = t0;
  bool any = false;
  IdleBackoff idle;
  while (!stop_requested() && !(o.frames && t.frames >= o.frames)) {
    const auto now = Clock::now();
    if (o.duration > 0 && now - t0 >= std::chrono::duration<double>(o.duration)) break;
    if (any && o.idle_ms && now - last_packet >= std::chrono::milliseconds(o.idle_ms)) break;
    RxBurst burst = queue->poll();
    if (burst.empty()) {
      idle.wait();
      continue;
    }
    idle.reset();
    any = true;
    last_packet = now;
    frames->receive(burst, payload_clock_ns());
    burst.release();
    take_frames(*frames, o, t);
  }
  frames->flush();
  take_frames(*frames, o, t);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const HostFrameStats s = frames->stats();
  session->stop();
  return report(o, t, s, seconds);
}

}  // namespace

void add_roce_recv_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<RoceRecvOptions>();
  auto* cmd = app.add_subcommand(
      "roce-recv", "Receive a RoCEv2 sensor's RDMA WRITEs in software (reorder mode roce) into frames in host memory");
  cmd->add_option("config", o->config, "YAML config with an rx.reorder entry of mode roce")->required();
  cmd->add_option("--reorder", o->reorder, "The reorder entry's name (default: the first of mode roce)");
  cmd->add_option("--local-file", o->local_file,
                  "Write the queue pairs' parameters here once receiving (the rdma engine's manual QP format)");
  cmd->add_option("--gid", o->gid, "This side's GID for --local-file, e.g. ::ffff:10.0.0.2");
  cmd->add_option("-n,--frames", o->frames, "Stop after N frames (0 = no limit)");
  cmd->add_option("-d,--duration", o->duration, "Stop after S seconds (0 = no limit)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--idle-ms", o->idle_ms, "After the first packet, stop when nothing came for this long (0 = never)");
  cmd->add_flag("--check-pattern", o->check_pattern,
                "Check each frame's bytes against the sensor test pattern of its frame number");
  cmd->add_flag("--json", o->json, "Print the result as JSON");
  cmd->footer("Exit status: 0 ok, 1 config or setup error, 2 fewer frames than --frames, 3 wrong bytes.");
  cmd->callback([o, exit_code] {
    if (!o->local_file.empty() && o->gid.empty()) {
      std::fprintf(stderr, "netdaq roce-recv: --local-file needs --gid (this side's GID, e.g. ::ffff:10.0.0.2)\n");
      *exit_code = kExitError;
      return;
    }
    *exit_code = roce_recv(*o);
  });
}

}  // namespace netdaq::cli
