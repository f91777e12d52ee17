// The rdma engine as the core sees it: capabilities, the `rdma:` options (declared once here:
// key, type, range, default, doc) and its validation. Compiled in every build, also without
// rdma-core: `netdaq validate` checks an rdma config anywhere.
#include "core/engine_descriptor.h"
#include "core/option_table.h"
#include "engines/rdma/limits.h"
#include "engines/rdma/validate.h"
#include "netdaq/engines/rdma.h"

namespace netdaq {
namespace lim = detail::rdma_limits;
static_assert(static_cast<size_t>(RdmaTransport::uc) + 1 == lim::kTransportNames.size());
static_assert(static_cast<size_t>(RdmaConnect::manual) + 1 == lim::kConnectNames.size());
static_assert(static_cast<size_t>(RdmaOp::write_imm) + 1 == lim::kOpNames.size());
const char* to_string(RdmaTransport t) noexcept { return lim::kTransportNames[static_cast<size_t>(t)].data(); }
const char* to_string(RdmaConnect c) noexcept { return lim::kConnectNames[static_cast<size_t>(c)].data(); }
const char* to_string(RdmaOp o) noexcept { return lim::kOpNames[static_cast<size_t>(o)].data(); }
}  // namespace netdaq

namespace netdaq::detail {

namespace {

using namespace option;
using L = std::string_view;

const std::vector<OptionDecl<RdmaOptions>>& rdma_options() {
  static const std::vector<OptionDecl<RdmaOptions>> table{
      choice("transport", &RdmaOptions::transport, lim::kTransportNames, L("rc (reliable) or uc (unreliable)")),
      choice("connect", &RdmaOptions::connect, lim::kConnectNames, L("rdma_cm, or manual queue-pair parameters")),
      choice("op", &RdmaOptions::op, lim::kOpNames, L("SEND/RECV or RDMA WRITE with immediate")),
      integer("send_depth", &RdmaOptions::send_depth, lim::depth, "work requests in flight per tx queue"),
      integer("recv_depth", &RdmaOptions::recv_depth, lim::depth, "receives posted per rx queue"),
      integer("max_inline", &RdmaOptions::max_inline, lim::max_inline, "messages up to this size go inline"),
      integer("signal_every", &RdmaOptions::signal_every, lim::depth, "a send completion every N sends"),
      integer("min_rnr_timer", &RdmaOptions::min_rnr_timer, lim::min_rnr_timer, "RC: receiver-not-ready back-off"),
      integer("timeout_ms", &RdmaOptions::timeout_ms, lim::timeout_ms, "connection setup time limit"),
      integer("gid_index", &RdmaOptions::gid_index, lim::gid_index, "manual: local GID table entry"),
      integer("mtu", &RdmaOptions::mtu, "manual: path MTU (256, 512, 1024, 2048 or 4096)"),
      integer("local_psn", &RdmaOptions::local_psn, lim::psn, "manual: first packet sequence number sent"),
      text("peer_file", &RdmaOptions::peer_file, "manual: JSON file with the peer's queue-pair parameters"),
      text("local_file", &RdmaOptions::local_file, "manual: JSON file this side's parameters are written to"),
  };
  return table;
}

EngineDescriptor rdma_descriptor() {
  EngineDescriptor d;
  d.name = kRdmaEngine;
  // Payloads (messages), no frames, no flow steering (queue pairs pick the queue); GPU memory
  // registered through dma-buf or nvidia-peermem (device_memory.cpp).
  d.capabilities = {.device_memory = true};
  d.capabilities_of = [](const InterfaceConfig& i) {
    EngineCapabilities c{.device_memory = true};
    c.immediate_data = i.options.get<RdmaOptions>().op == RdmaOp::write_imm;
    return c;
  };
  d.blocks = {block_spec(rdma_options())};
  d.ignores_blocks = {"socket"};
  d.validate = check_rdma_engine;
  // Rx: receives posted to the queue pair; tx: sends not yet completed.
  d.lent_buffers = [](const InterfaceConfig& i, bool rx) -> uint64_t {
    const auto& o = i.options.get<RdmaOptions>();
    return rx ? o.recv_depth : o.send_depth;
  };
  d.lent_buffers_why = [](const InterfaceConfig&, bool rx) {
    return std::string(rx ? " posted as receives (rdma.recv_depth)" : " in flight (rdma.send_depth)");
  };
  d.lent_knobs_rx = "rdma.recv_depth";
  d.lent_knobs_tx = "rdma.send_depth";
  return d;
}

}  // namespace

void describe_rdma_engine() { describe_engine(rdma_descriptor()); }

}  // namespace netdaq::detail
