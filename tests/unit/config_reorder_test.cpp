// rx.reorder (the GPU data plane) in YAML and C++: fields, defaults and every rule.
#include <gtest/gtest.h>

#include <string>

#include "config_test_util.h"
#include "netdaq/config.h"
#include "test_paths.h"

namespace netdaq {
namespace {

using test::find_issue;

class ConfigReorder : public ::testing::Test {
 protected:
  void SetUp() override { test::ensure_socket_engine(); }

  // A pinned rx queue with a valid reorder (header 24 bytes, 1024 sample bytes).
  static Config valid() {
    Config c;
    c.memory_regions.push_back({.name = "pinned", .kind = MemoryKind::pinned, .buf_size = 2048, .num_bufs = 8192, .gpu = 0});
    InterfaceConfig i;
    i.name = "in";
    i.address = "udp://127.0.0.1:5000";
    i.rx.queues.push_back({.id = 0, .batch_size = 64, .memory_regions = {"pinned"}});
    ReorderConfig g;
    g.seq_offset = 8;
    g.seq_bits = 64;
    g.payload_offset = 24;
    g.payload_size = 1024;
    g.packets_per_frame = 64;
    i.rx.reorder.push_back(g);
    c.interfaces.push_back(i);
    return c;
  }
  static ReorderConfig& reorder(Config& c) { return c.interfaces[0].rx.reorder[0]; }

  static std::string issue_text(const Config& c, const std::string& key) {
    const auto issues = c.validate();
    const ConfigIssue* i = find_issue(issues, key);
    return i ? i->message : "(no issue for " + key + "; " + std::to_string(issues.size()) + " issues)";
  }
};

TEST_F(ConfigReorder, ExampleFileLoads) {
  const Config c = Config::load(std::string(NETDAQ_SOURCE_DIR) + "/examples/gpu-frames.yaml");
  const ReorderConfig& g = c.interfaces[0].rx.reorder.at(0);
  EXPECT_EQ(g.seq_offset, 8u);
  EXPECT_EQ(g.seq_bits, 64);
  EXPECT_EQ(g.seq_byte_order, ByteOrder::little);
  EXPECT_EQ(g.payload_size, 1024u);
  EXPECT_EQ(g.packets_per_frame, 64u);
  EXPECT_EQ(g.staging, Staging::copy);
  EXPECT_EQ(g.launch, LaunchMode::per_burst);
}

TEST_F(ConfigReorder, EveryFieldReadsFromYaml) {
  const Config c = Config::parse(R"(
memory_regions:
  - {name: hdr, kind: host, buf_size: 64, num_bufs: 4096}
  - {name: pay, kind: mapped, gpu: 1, buf_size: 4096, num_bufs: 4096}
interfaces:
  - name: in
    address: udp://127.0.0.1:5000
    rx:
      queues: [{id: 3, batch_size: 16, memory_regions: [hdr, pay]}]
      reorder:
        - {name: beam, queue: 3, gpu: 1, mode: arrival, seq_offset: 2, seq_bits: 16, seq_byte_order: little,
           payload_offset: 64, payload_size: 4096, packets_per_frame: 8, max_open_frames: 2, frame_buffers: 5,
           frame_timeout_us: 77, input: int16, output: bf16, sample_byte_order: big, staging: direct,
           launch: persistent, bursts_in_flight: 3, job_packets: 512, job_timeout_us: 50}
)");
  const ReorderConfig& g = c.interfaces[0].rx.reorder.at(0);
  EXPECT_EQ(g.name, "beam");
  EXPECT_EQ(g.queue, 3);
  EXPECT_EQ(g.gpu, 1);
  EXPECT_EQ(g.mode, ReorderMode::arrival);
  EXPECT_EQ(g.seq_bits, 16);
  EXPECT_EQ(g.payload_offset, 64u);
  EXPECT_EQ(g.max_open_frames, 2u);
  EXPECT_EQ(g.frame_buffers, 5u);
  EXPECT_EQ(g.frame_timeout_us, 77u);
  EXPECT_EQ(g.input, SampleFormat::int16);
  EXPECT_EQ(g.output, SampleFormat::bf16);
  EXPECT_EQ(g.sample_byte_order, ByteOrder::big);
  EXPECT_EQ(g.staging, Staging::direct);
  EXPECT_EQ(g.launch, LaunchMode::persistent);
  EXPECT_EQ(g.bursts_in_flight, 3u);
  EXPECT_EQ(g.job_packets, 512u);
  EXPECT_EQ(g.job_timeout_us, 50u);
}

TEST_F(ConfigReorder, UnknownEnumNamesTheAllowedValuesAndTheLine) {
  const auto issues = test::parse_issues(R"(
interfaces:
  - name: in
    rx:
      reorder:
        - {queue: 0, output: fp64}
)");
  const ConfigIssue* i = find_issue(issues, "interfaces[0].rx.reorder[0].output");
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->where.line, 6);
  EXPECT_NE(i->message.find("fp16, bf16, fp32"), std::string::npos) << i->message;
}

TEST_F(ConfigReorder, ValidConfigPasses) {
  const auto issues = valid().validate();
  EXPECT_TRUE(issues.empty()) << issues[0].to_string();
}

TEST_F(ConfigReorder, QueueMustExist) {
  Config c = valid();
  reorder(c).queue = 7;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].queue").find("rx queue ids: 0"), std::string::npos);
}

TEST_F(ConfigReorder, RequiredSizes) {
  Config c = valid();
  reorder(c).payload_size = 0;
  reorder(c).packets_per_frame = 0;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].payload_size").find("required"), std::string::npos);
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].packets_per_frame").find("required"), std::string::npos);
}

TEST_F(ConfigReorder, HostMemoryIsNotReadableByTheGpu) {
  Config c = valid();
  c.memory_regions[0].kind = MemoryKind::host;
  c.memory_regions[0].gpu = -1;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].queue").find("use kind pinned, mapped or device"),
            std::string::npos);
}

TEST_F(ConfigReorder, SamplesMustFitTheBuffer) {
  Config c = valid();
  reorder(c).payload_size = 2040;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].payload_offset").find("beyond the queue's buffers (2048 bytes)"),
            std::string::npos);
}

TEST_F(ConfigReorder, SamplesMustNotStraddleTheHeaderSplit) {
  Config c = valid();
  c.memory_regions.insert(c.memory_regions.begin(), {.name = "hdr", .buf_size = 64, .num_bufs = 8192});
  c.interfaces[0].rx.queues[0].memory_regions = {"hdr", "pinned"};
  reorder(c).payload_offset = 24;  // starts in the 64-byte header segment, ends in the payload
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].payload_offset").find("inside one segment"), std::string::npos);
  reorder(c).payload_offset = 64;
  EXPECT_TRUE(c.validate().empty());
}

TEST_F(ConfigReorder, ConversionsThatExist) {
  Config c = valid();
  reorder(c).output = SampleFormat::fp32;  // raw input
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].output").find("must be raw when input is raw"), std::string::npos);
  reorder(c).input = SampleFormat::int16;
  EXPECT_TRUE(c.validate().empty());
  reorder(c).input = SampleFormat::fp16;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].input").find("raw, int4, int8, int16"), std::string::npos);
  reorder(c).input = SampleFormat::int16;
  reorder(c).payload_size = 1023;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].payload_size").find("multiple of 2 bytes"), std::string::npos);
}

TEST_F(ConfigReorder, PersistentKernelReadsPacketsInPlace) {
  Config c = valid();
  reorder(c).launch = LaunchMode::persistent;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].launch").find("staging: direct"), std::string::npos);
  reorder(c).staging = Staging::direct;
  EXPECT_TRUE(c.validate().empty());
}

TEST_F(ConfigReorder, SequenceBitsAndWindow) {
  Config c = valid();
  reorder(c).seq_bits = 24;
  reorder(c).frame_buffers = 2;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].seq_bits").find("8, 16, 32, 64"), std::string::npos);
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].frame_buffers").find(">= max_open_frames"), std::string::npos);
}

TEST_F(ConfigReorder, PoolCountsTheBurstsTheGpuHolds) {
  Config c = valid();
  reorder(c).job_packets = 0;  // one job per burst
  c.memory_regions[0].num_bufs = 64 * 64 + 64;  // ring_depth 64 x 64, plus one burst: not two
  EXPECT_NE(issue_text(c, "memory_regions[0].num_bufs").find("ring_depth 64 x batch_size 64 + 128 held by the GPU (bursts_in_flight x (batch_size + job_packets, at most ring_depth / 2 bursts in all)) = 4224"),
            std::string::npos)
      << issue_text(c, "memory_regions[0].num_bufs");
  c.memory_regions[0].num_bufs = 64 * 66;
  EXPECT_TRUE(c.validate().empty());
  reorder(c).job_packets = 256;  // two jobs of up to 256 gathered + one 64-packet burst each
  EXPECT_NE(issue_text(c, "memory_regions[0].num_bufs").find("+ 640 held by the GPU"), std::string::npos);
  reorder(c).job_packets.reset();  // auto: 1024 packets, but at most 16 of the 64 bursts per job
  EXPECT_NE(issue_text(c, "memory_regions[0].num_bufs").find("+ 2048 held by the GPU"), std::string::npos);
  c.interfaces[0].rx.queues[0].ring_depth = 16;  // 4 bursts per job
  c.memory_regions[0].num_bufs = 16 * 64;
  EXPECT_NE(issue_text(c, "memory_regions[0].num_bufs").find("+ 512 held by the GPU"), std::string::npos);
}

TEST_F(ConfigReorder, JobPacketsIsAnIntegerOrAuto) {
  const char* yaml = R"(
memory_regions:
  - {name: pay, kind: pinned, gpu: 0, buf_size: 2048, num_bufs: 8192}
interfaces:
  - name: in
    address: udp://127.0.0.1:5000
    rx:
      queues: [{id: 0, batch_size: 64, memory_regions: [pay]}]
      reorder:
        - {queue: 0, payload_size: 1024, packets_per_frame: 8, job_packets: JOB}
)";
  auto with = [&](const std::string& v) {
    std::string t = yaml;
    t.replace(t.find("JOB"), 3, v);
    return t;
  };
  EXPECT_EQ(Config::parse(with("auto")).interfaces[0].rx.reorder[0].job_packets, std::nullopt);
  EXPECT_EQ(Config::parse(with("0")).interfaces[0].rx.reorder[0].job_packets, 0u);
  EXPECT_EQ(Config::parse(with("96")).interfaces[0].rx.reorder[0].job_packets, 96u);
  const auto issues = test::parse_issues(with("many"));
  const ConfigIssue* i = find_issue(issues, "interfaces[0].rx.reorder[0].job_packets");
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->where.line, 10);
  EXPECT_NE(i->message.find("or auto"), std::string::npos) << i->message;
}

TEST_F(ConfigReorder, OnePerQueue) {
  Config c = valid();
  c.interfaces[0].rx.reorder.push_back(reorder(c));
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[1].queue").find("one per queue"), std::string::npos);
}

}  // namespace
}  // namespace netdaq
