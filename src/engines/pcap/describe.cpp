// The pcap engine as the core sees it: capabilities, the `pcap:` options (declared once here:
// key, type, range, default, doc) and its validation. Compiled in every build.
#include "core/config_check.h"
#include "core/engine_descriptor.h"
#include "core/option_table.h"
#include "engines/pcap/validate.h"
#include "netdaq/engines/pcap.h"

namespace netdaq::detail {

namespace {

using namespace option;

constexpr std::array<std::string_view, 2> kDeliverNames{"payloads", "frames"};
constexpr std::array<std::string_view, 2> kPaceNames{"asap", "recorded"};

// A finite number (YAML float or integer); the validator checks its range.
OptionDecl<PcapOptions> number(std::string_view key, double PcapOptions::*m, std::string_view doc) {
  return {key, "number", doc,
          [m](YamlReader& r, const YAML::Node& v, const std::string& p, PcapOptions& t) { r.number(v, p, t.*m, 0); },
          [m](const PcapOptions& t) { return show(t.*m); }};
}

const std::vector<OptionDecl<PcapOptions>>& pcap_options() {
  static const std::vector<OptionDecl<PcapOptions>> table{
      text("file", &PcapOptions::file, "the capture to replay: pcap or pcapng, Ethernet link type"),
      choice("deliver", &PcapOptions::deliver, kDeliverNames, "UDP payloads, or whole Ethernet frames"),
      choice("pace", &PcapOptions::pace, kPaceNames, "as fast as polled, or at the recorded pace"),
      number("speed", &PcapOptions::speed, "pace recorded: how many times faster than recorded"),
      integer("loop", &PcapOptions::loop, "passes over the file (0: until the session stops)"),
      flag("check_file", &PcapOptions::check_file, "read every record once at open: a bad file fails the open"),
  };
  return table;
}

EngineCapabilities pcap_capabilities() {
  EngineCapabilities c;
  c.whole_frames = true;   // payloads keep their headers in front: Packet::frame()
  c.finite_source = true;  // the file ends: RxQueue::finished()
  c.max_queues = 1;        // one reader per file
  return c;
}

}  // namespace

void describe_pcap_engine() {
  EngineDescriptor d;
  d.name = kPcapEngine;
  d.capabilities = pcap_capabilities();
  d.capabilities_of = [](const InterfaceConfig& i) {
    EngineCapabilities c = pcap_capabilities();
    c.raw_frames = i.options.get<PcapOptions>().deliver == PcapDeliver::frames;
    return c;
  };
  d.blocks = {block_spec(pcap_options())};
  d.validate = check_pcap_engine;
  describe_engine(std::move(d));
}

}  // namespace netdaq::detail
