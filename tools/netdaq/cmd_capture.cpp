// netdaq capture CONFIG --output FILE.pcap: polls every rx queue of a config's session and
// writes each packet's whole Ethernet frame to a pcap file (docs/cli.md). Engines that hand
// over payloads only (socket) have no frames to write: refused before anything is opened.
// Plan (capture_plan.cpp), run (capture_loop.cpp), report (capture_report.cpp).
#include <memory>
#include <string>

#include "capture_loop.h"
#include "capture_plan.h"
#include "capture_report.h"
#include "cli.h"

namespace netdaq::cli {

namespace {

int capture(const CaptureOptions& o) {
  CapturePlan plan;
  if (!plan_capture(o, plan)) return kExitError;
  print_capture_headline(o, plan);
  const CaptureResult r = capture_frames(o, plan);
  std::string err;
  const bool closed = plan.pcap.close(&err);
  plan.session->stop();
  return report_capture(o, plan, r, closed, err);
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
