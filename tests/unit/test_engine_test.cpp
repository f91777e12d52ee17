// An engine added from outside src/core, the way docs/adding-an-engine.md describes: its
// options (a struct with kKey, declared once), its validation, its capabilities, its pool
// budget and its runtime (a loopback: tx packets come back on the rx queue of the same id).
// Nothing in src/core names it; YAML, validation messages, netdaq::engine_info and a Session
// all work through the descriptor. Its own test binary: the other tests' messages list the
// engines netdaq knows, which would then include this one.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <mutex>

#include "core/config_check.h"
#include "core/engine.h"
#include "core/engine_descriptor.h"
#include "core/option_table.h"
#include "netdaq/netdaq.h"

using namespace netdaq;
using namespace netdaq::detail;

namespace {

// The engine's public options (in a real engine: include/netdaq/engines/<name>.h).
struct LoopOptions {
  static constexpr const char* kKey = "testloop";
  uint32_t depth = 4;  // packets the "wire" holds per queue; a power of two
  std::string label;
};

// The "wire": bytes of the packets sent and not yet received (one per process is enough here).
std::mutex g_wire_mu;
std::deque<std::vector<std::byte>> g_wire;

class LoopRx final : public RxPort {
 public:
  explicit LoopRx(QueueResources q) : q_(std::move(q)) {}
  uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept override {
    std::lock_guard lock(g_wire_mu);
    uint32_t n = 0;
    while (n < max && !g_wire.empty() && attach_buffers(q_, pkts + n, 1) == 1) {
      auto& f = fields(pkts[n]);
      const auto& b = g_wire.front();
      std::memcpy(f.data[0], b.data(), b.size());
      f.len[0] = static_cast<uint32_t>(b.size());
      bytes += b.size();
      g_wire.pop_front();
      ++n;
    }
    return n;
  }
  const QueueResources& resources() const noexcept override { return q_; }

 private:
  QueueResources q_;
};

class LoopTx final : public TxPort {
 public:
  LoopTx(QueueResources q, uint32_t depth) : q_(std::move(q)), depth_(depth) {}
  TxResult transmit(Packet* pkts, uint32_t n) noexcept override {
    std::lock_guard lock(g_wire_mu);
    uint32_t taken = 0;
    for (; taken < n && g_wire.size() < depth_; ++taken) {
      const auto d = pkts[taken].data();
      g_wire.emplace_back(d.begin(), d.end());
    }
    if (taken < n) q_.counters->drop(DropReason::tx_full, n - taken);
    const TxResult r = TxResult::all_sent(pkts, taken);
    return_buffers(q_, pkts, taken);
    return r;
  }

 private:
  QueueResources q_;
  uint32_t depth_;
};

class LoopEngine final : public Engine {
 public:
  explicit LoopEngine(uint32_t depth) : depth_(depth) {}
  std::unique_ptr<RxPort> open_rx(const QueueResources& q) override { return std::make_unique<LoopRx>(q); }
  std::unique_ptr<TxPort> open_tx(const QueueResources& q) override { return std::make_unique<LoopTx>(q, depth_); }

 private:
  uint32_t depth_;
};

const std::vector<OptionDecl<LoopOptions>>& loop_options() {
  static const std::vector<OptionDecl<LoopOptions>> table{
      option::integer("depth", &LoopOptions::depth, Range{1, 1024}, "packets the wire holds"),
      option::text("label", &LoopOptions::label, "a name for the wire"),
  };
  return table;
}

void check_loop(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const uint32_t depth = iface.options.get<LoopOptions>().depth;
  if ((depth & (depth - 1)) != 0) c.error(path + ".testloop.depth", std::to_string(depth), "must be a power of two");
}

const bool registered = [] {
  EngineDescriptor d;
  d.name = "testloop";
  d.capabilities = {.flow_rss = true, .max_queues = 1};
  d.blocks = {block_spec(loop_options())};
  d.validate = check_loop;
  d.lent_buffers = [](const InterfaceConfig& i, bool rx) -> uint64_t { return rx ? 0 : i.options.get<LoopOptions>().depth; };
  d.lent_buffers_why = [](const InterfaceConfig&, bool) { return std::string(" on the wire (testloop.depth)"); };
  d.lent_knobs_tx = "testloop.depth";
  describe_engine(std::move(d));
  register_engine("testloop", [](const Config&, const InterfaceConfig& iface) -> std::unique_ptr<Engine> {
    return std::make_unique<LoopEngine>(iface.options.get<LoopOptions>().depth);
  });
  return true;
}();

std::string yaml(const std::string& options, uint32_t num_bufs = 512) {
  return "memory_regions: [{name: bufs, buf_size: 256, num_bufs: " + std::to_string(num_bufs) +
         "}]\n"
         "interfaces:\n"
         "  - name: w\n"
         "    engine: testloop\n"
         "    rx: {queues: [{id: 0, memory_regions: [bufs], batch_size: 8, ring_depth: 4}]}\n"
         "    tx: {queues: [{id: 0, memory_regions: [bufs], batch_size: 8, ring_depth: 4}]}\n" +
         options;
}

}  // namespace

TEST(TestOnlyEngine, OptionsAreReadFromYamlIntoItsBlock) {
  ASSERT_TRUE(registered);
  const Config c = Config::parse(yaml("    testloop: {depth: 16, label: bench}\n"));
  EXPECT_EQ(c.interfaces[0].options.get<LoopOptions>().depth, 16u);
  EXPECT_EQ(c.interfaces[0].options.get<LoopOptions>().label, "bench");
  // Another engine's view of the same interface: its defaults.
  EXPECT_EQ(c.interfaces[0].options.get<SocketOptions>().rcvbuf, SocketOptions{}.rcvbuf);
}

TEST(TestOnlyEngine, ItsValidationAndTypeErrorsNameFileLineAndKey) {
  ASSERT_TRUE(registered);
  try {
    Config::parse(yaml("    testloop: {depth: 12}\n"), "loop.yaml");
    FAIL() << "depth 12 was accepted";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.issues().size(), 1u) << e.what();
    EXPECT_EQ(e.issues()[0].key, "interfaces[0].testloop.depth");
    EXPECT_EQ(e.issues()[0].message, "must be a power of two");
    EXPECT_EQ(e.issues()[0].where.file, "loop.yaml");
    EXPECT_EQ(e.issues()[0].where.line, 7);
  }
  try {
    Config::parse(yaml("    testloop: {depht: 8}\n"), "loop.yaml");
    FAIL() << "a misspelt key was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'depth'"), std::string::npos) << e.what();
  }
}

TEST(TestOnlyEngine, ItsOptionsOnAnotherEnginesInterfaceAreReported) {
  ASSERT_TRUE(registered);
  Config c;
  c.memory_regions.push_back({.name = "bufs", .buf_size = 2048, .num_bufs = 8192});
  InterfaceConfig& i = c.interfaces.emplace_back();
  i.name = "s";
  i.address = "udp://127.0.0.1:5000";
  i.rx.queues.push_back({.id = 0, .memory_regions = {"bufs"}});
  i.options.get<LoopOptions>().depth = 8;
  const auto issues = c.validate();
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].key, "interfaces[0].testloop.depth");
  EXPECT_EQ(issues[0].message,
            "is an option of the testloop engine; this interface's engine is 'socket', which ignores it: remove it, or "
            "set engine: testloop");
}

TEST(TestOnlyEngine, ItsLentBuffersCountInThePoolBudget) {
  ASSERT_TRUE(registered);
  // rx 4x8 + tx 4x8 + depth 512 on the wire > 512 buffers.
  try {
    Config::parse(yaml("    testloop: {depth: 512}\n"));
    FAIL() << "the pool budget ignored the engine's buffers";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("+ 512 on the wire (testloop.depth)"), std::string::npos) << m;
    EXPECT_NE(m.find("(or lower ring_depth / batch_size / testloop.depth)"), std::string::npos) << m;
  }
}

TEST(TestOnlyEngine, CapabilitiesAndRuntimeThroughThePublicApi) {
  ASSERT_TRUE(registered);
  const auto info = engine_info("testloop");
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->built_in);
  EXPECT_TRUE(info->capabilities.flow_rss);
  EXPECT_FALSE(info->capabilities.whole_frames);

  Session s(Config::parse(yaml("    testloop: {depth: 64}\n")));
  auto burst = s.tx_queue("w").allocate(5);
  ASSERT_EQ(burst.size(), 5u);
  for (size_t i = 0; i < burst.size(); ++i) {
    std::memset(burst[i].buffer().data(), static_cast<int>('a' + i), 10);
    burst[i].set_size(10);
  }
  EXPECT_EQ(burst.send(), 5u);
  size_t got = 0;
  for (int tries = 0; tries < 100 && got < 5; ++tries)
    for (const Packet& p : s.rx_queue("w").poll()) {
      EXPECT_EQ(p.size(), 10u);
      EXPECT_EQ(static_cast<char>(p.data()[0]), static_cast<char>('a' + got));
      ++got;
    }
  EXPECT_EQ(got, 5u);
}

TEST(EngineCapabilities, BuiltInEnginesAreDescribedInEveryBuild) {
  for (const char* name : {"socket", "afxdp", "dpdk", "rdma", "pcap"}) EXPECT_TRUE(engine_info(name)) << name;
  EXPECT_TRUE(engine_info("pcap")->capabilities.finite_source);
  EXPECT_FALSE(engine_info("socket")->capabilities.finite_source);
  EXPECT_FALSE(engine_info("nosuch"));
  EXPECT_TRUE(engine_info("afxdp")->capabilities.whole_frames);
  EXPECT_TRUE(engine_info("dpdk")->capabilities.flow_rss);
  EXPECT_FALSE(engine_info("socket")->capabilities.whole_frames);
  InterfaceConfig raw;
  raw.engine = "dpdk";
  EXPECT_FALSE(capabilities_of(raw)->raw_frames);
  raw.options.get<DpdkOptions>().raw_frames = true;
  EXPECT_TRUE(capabilities_of(raw)->raw_frames) << "an option-dependent capability";
}
