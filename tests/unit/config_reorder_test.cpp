// rx.reorder (the GPU data plane) in YAML and C++: fields, defaults and every rule.
#include <gtest/gtest.h>

#include <string>

#include "config_test_util.h"
#include "netdaq/config.h"
#include "netdaq/video.h"
#include "protocols/decoder.h"
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
           launch: persistent, bursts_in_flight: 3, job_packets: 512, job_timeout_us: 50, persistent_sms: 12}
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
  EXPECT_EQ(g.persistent_sms, 12u);
}

// persistent_sms: auto (half the GPU's SMs) or 1..1024, and only with launch: persistent.
TEST_F(ConfigReorder, PersistentSmsIsAutoOrACountForThePersistentKernelOnly) {
  Config c = valid();
  reorder(c).launch = LaunchMode::persistent;
  EXPECT_TRUE(c.validate().empty()) << c.validate()[0].to_string();
  EXPECT_EQ(reorder(c).persistent_sms, std::nullopt);
  reorder(c).persistent_sms = 66;
  EXPECT_TRUE(c.validate().empty()) << c.validate()[0].to_string();
  reorder(c).persistent_sms = 0;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].persistent_sms").find("1..1024"), std::string::npos);
  reorder(c).persistent_sms = 8;
  reorder(c).launch = LaunchMode::graph;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].persistent_sms").find("only with launch: persistent (launch is graph)"),
            std::string::npos);
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

// The persistent kernel gathers staged packets itself (staging copy) or reads them in place.
TEST_F(ConfigReorder, PersistentKernelTakesEveryStaging) {
  Config c = valid();
  reorder(c).launch = LaunchMode::persistent;
  for (Staging s : {Staging::automatic, Staging::copy, Staging::direct}) {
    reorder(c).staging = s;
    EXPECT_TRUE(c.validate().empty()) << to_string(s);
  }
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

// ---- Placement by the sensor's headers (modes fields, spead, vita49) ----

// valid() turned into a span mode: the sequence keys of mode sequence cleared.
Config spans_of(Config c, ReorderMode mode) {
  ReorderConfig& g = c.interfaces[0].rx.reorder[0];
  g.mode = mode;
  g.seq_offset = 0;
  g.seq_bits = 32;
  if (mode != ReorderMode::fields) {
    g.payload_offset = 0;
    g.payload_size = 0;
    g.packets_per_frame = 0;
  }
  return c;
}

std::string span_yaml(const std::string& reorder_keys) {
  return test::reorder_yaml(reorder_keys, "kind: pinned, gpu: 0", 5000);
}

TEST_F(ConfigReorder, FieldsReadFromYamlWithHexMasks) {
  const Config c = Config::parse(span_yaml(R"(          mode: fields
          fields:
            frame: {offset: 0, bits: 32, byte_order: little}
            index: {offset: 4, bits: 16, byte_order: little, shift: 4, mask: 0x0FFF}
            stream: {offset: 6, bits: 8}
            marker: {offset: 7, bits: 8, mask: 0x80}
            timestamp: {offset: 8, bits: 64, byte_order: big}
          payload_offset: 16
          payload_size: 1024
          packets_per_frame: 64
          granule: 512
          max_streams: 2)"));
  const ReorderConfig& g = c.interfaces[0].rx.reorder.at(0);
  EXPECT_EQ(g.mode, ReorderMode::fields);
  EXPECT_TRUE(places_spans(g.mode));
  EXPECT_EQ(g.fields.frame.offset, 0u);
  EXPECT_EQ(g.fields.frame.bits, 32);
  EXPECT_EQ(g.fields.frame.byte_order, ByteOrder::little);
  EXPECT_EQ(g.fields.frame.mask, ~uint64_t{0});  // default: every bit
  EXPECT_EQ(g.fields.index.offset, 4u);
  EXPECT_EQ(g.fields.index.bits, 16);
  EXPECT_EQ(g.fields.index.shift, 4);
  EXPECT_EQ(g.fields.index.mask, 0x0FFFu);
  EXPECT_EQ(g.fields.stream.bits, 8);
  EXPECT_EQ(g.fields.stream.byte_order, ByteOrder::big);  // default
  EXPECT_EQ(g.fields.marker.mask, 0x80u);
  EXPECT_EQ(g.fields.timestamp.bits, 64);
  EXPECT_FALSE(g.fields.byte_offset.declared());
  EXPECT_EQ(g.granule, 512u);
  EXPECT_EQ(g.max_streams, 2u);
  EXPECT_EQ(g.frame_bytes, 0u);  // derived: packets_per_frame x payload_size
}

TEST_F(ConfigReorder, SpeadReadsFromYamlWithHexStreamItem) {
  const Config c = Config::parse(span_yaml(R"(          mode: spead
          spead: {stream_item: 0x1600}
          frame_bytes: 0x100000
          max_streams: 4
          frame_buffers: 16)"));
  const ReorderConfig& g = c.interfaces[0].rx.reorder.at(0);
  EXPECT_EQ(g.mode, ReorderMode::spead);
  EXPECT_EQ(g.spead.stream_item, 0x1600u);
  EXPECT_EQ(g.frame_bytes, 1048576u);
  EXPECT_EQ(g.granule, 0u);  // the mode's default (8)
  EXPECT_EQ(g.max_streams, 4u);
}

TEST_F(ConfigReorder, Vita49ReadsFromYaml) {
  const Config c = Config::parse(span_yaml(R"(          mode: vita49
          vita49: {samples_per_frame: 65536, sample_bytes: 4, sample_rate: 100000000}
          input: int16
          output: fp32
          sample_byte_order: big)"));
  const ReorderConfig& g = c.interfaces[0].rx.reorder.at(0);
  EXPECT_EQ(g.mode, ReorderMode::vita49);
  EXPECT_EQ(g.vita49.samples_per_frame, 65536u);
  EXPECT_EQ(g.vita49.sample_bytes, 4u);
  EXPECT_EQ(g.vita49.sample_rate, 100000000u);
  EXPECT_EQ(g.frame_bytes, 0u);  // derived: 65536 x 4
}

TEST_F(ConfigReorder, SpanExampleFilesLoad) {
  const std::string dir = std::string(NETDAQ_SOURCE_DIR) + "/examples/";
  const Config f = Config::load(dir + "gpu-fields.yaml");
  const ReorderConfig& gf = f.interfaces[0].rx.reorder.at(0);
  EXPECT_EQ(gf.mode, ReorderMode::fields);
  EXPECT_EQ(gf.fields.frame.bits, 32);
  EXPECT_EQ(gf.fields.index.offset, 4u);
  EXPECT_EQ(gf.fields.index.bits, 16);
  EXPECT_EQ(gf.fields.marker.mask, 0x1u);
  EXPECT_EQ(gf.payload_offset, 8u);
  const Config s = Config::load(dir + "gpu-spead.yaml");
  EXPECT_EQ(s.interfaces[0].rx.reorder.at(0).mode, ReorderMode::spead);
  EXPECT_EQ(s.interfaces[0].rx.reorder.at(0).spead.stream_item, 0x1600u);
  const Config v = Config::load(dir + "gpu-vita49.yaml");
  EXPECT_EQ(v.interfaces[0].rx.reorder.at(0).mode, ReorderMode::vita49);
  EXPECT_EQ(v.interfaces[0].rx.reorder.at(0).vita49.samples_per_frame, 65536u);
}

TEST_F(ConfigReorder, SpanFieldTypeErrorsNameTheKeyAndLine) {
  const auto issues = test::parse_issues(span_yaml(R"(          mode: fields
          fields:
            frame: {offset: 0, bits: 32, byte_order: middle, mask: -1}
            index: {offset: 4, bits: 16, width: 2}
          vita49: {sample_bytes: many}
          payload_size: 1024
          packets_per_frame: 8)"));
  test::expect_issue(issues, "test.yaml", 13, 42, "interfaces[0].rx.reorder[0].fields.frame.byte_order", "middle",
                     "must be one of: little, big");
  test::expect_issue(issues, "test.yaml", 13, 62, "interfaces[0].rx.reorder[0].fields.frame.mask", "-1",
                     "must be an integer");
  const ConfigIssue* unknown = find_issue(issues, "interfaces[0].rx.reorder[0].fields.index.width");
  ASSERT_NE(unknown, nullptr);
  EXPECT_NE(unknown->message.find("offset, bits, byte_order, shift, mask"), std::string::npos) << unknown->message;
  test::expect_issue(issues, "test.yaml", 15, 20, "interfaces[0].rx.reorder[0].vita49.sample_bytes", "many",
                     "must be an integer 1..64");
}

TEST_F(ConfigReorder, FieldsWithIndexValidates) {
  Config c = spans_of(valid(), ReorderMode::fields);
  reorder(c).fields.frame = {.offset = 0, .bits = 32};
  reorder(c).fields.index = {.offset = 4, .bits = 16};
  reorder(c).payload_offset = 8;
  const auto issues = c.validate();
  EXPECT_TRUE(issues.empty()) << issues[0].to_string();
  reorder(c).frame_bytes = 64 * 1024;  // the derived size, given
  EXPECT_TRUE(c.validate().empty());
}

TEST_F(ConfigReorder, FieldsNeedsFrameAndOneOfIndexOrByteOffset) {
  Config c = spans_of(valid(), ReorderMode::fields);
  const std::string p = "interfaces[0].rx.reorder[0].";
  EXPECT_NE(issue_text(c, p + "fields.frame").find("is required in mode fields"), std::string::npos);
  EXPECT_NE(issue_text(c, p + "fields").find("needs one of index"), std::string::npos);
  reorder(c).fields.frame = {.offset = 0, .bits = 32};
  reorder(c).fields.index = {.offset = 4, .bits = 16};
  reorder(c).fields.byte_offset = {.offset = 4, .bits = 32};
  EXPECT_NE(issue_text(c, p + "fields.byte_offset").find("cannot be declared with fields.index"), std::string::npos);
}

TEST_F(ConfigReorder, FieldsBitsShiftAndMask) {
  Config c = spans_of(valid(), ReorderMode::fields);
  const std::string p = "interfaces[0].rx.reorder[0].fields.";
  reorder(c).fields.frame = {.offset = 0, .bits = 24};
  reorder(c).fields.index = {.offset = 4, .bits = 16, .shift = 16};
  reorder(c).fields.stream = {.offset = 6, .bits = 8, .mask = 0};
  reorder(c).fields.marker = {.offset = 7};  // set without bits
  EXPECT_NE(issue_text(c, p + "frame.bits").find("must be one of: 8, 16, 32, 64"), std::string::npos);
  EXPECT_NE(issue_text(c, p + "index.shift").find("must be less than bits (16)"), std::string::npos);
  EXPECT_NE(issue_text(c, p + "stream.mask").find("must not be 0"), std::string::npos);
  EXPECT_NE(issue_text(c, p + "marker.bits").find("is required"), std::string::npos);
}

TEST_F(ConfigReorder, FieldsWithoutBitsInYamlNamesTheLine) {
  const auto issues = test::parse_issues(span_yaml(R"(          mode: fields
          fields:
            frame: {offset: 0}
            index: {offset: 4, bits: 16}
          payload_size: 1024
          packets_per_frame: 8)"));
  const ConfigIssue* i = find_issue(issues, "interfaces[0].rx.reorder[0].fields.frame.bits");
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->where.line, 13);  // the nearest written key: fields.frame
  EXPECT_NE(i->message.find("8, 16, 32, 64"), std::string::npos) << i->message;
}

TEST_F(ConfigReorder, FieldsMustLieInTheBuffersInHostReadableMemory) {
  Config c = spans_of(valid(), ReorderMode::fields);
  reorder(c).fields.frame = {.offset = 2046, .bits = 32};
  reorder(c).fields.index = {.offset = 4, .bits = 16};
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].fields.frame.offset")
                .find("fields.frame ends at byte 2050, beyond the queue's buffers (2048 bytes)"),
            std::string::npos);
  // Device payload memory: the header fields must be split into host memory.
  reorder(c).fields.frame.offset = 0;
  c.memory_regions[0].kind = MemoryKind::device;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].fields.index.offset").find("which the CPU cannot read"),
            std::string::npos);
  c.memory_regions.insert(c.memory_regions.begin(), {.name = "hdr", .buf_size = 64, .num_bufs = 8192});
  c.interfaces[0].rx.queues[0].memory_regions = {"hdr", "pinned"};
  reorder(c).payload_offset = 64;
  EXPECT_EQ(issue_text(c, "interfaces[0].rx.reorder[0].fields.index.offset").find("(no issue"), 0u);
}

TEST_F(ConfigReorder, FieldsPayloadSizeAndPacketsPerFrame) {
  Config c = spans_of(valid(), ReorderMode::fields);
  reorder(c).fields.frame = {.offset = 0, .bits = 32};
  reorder(c).fields.index = {.offset = 4, .bits = 16};
  reorder(c).payload_size = 0;
  reorder(c).packets_per_frame = 0;
  const std::string p = "interfaces[0].rx.reorder[0].";
  EXPECT_NE(issue_text(c, p + "payload_size").find("is required in mode fields: the bytes each packet carries"),
            std::string::npos);
  EXPECT_NE(issue_text(c, p + "packets_per_frame").find("is required with fields.index"), std::string::npos);
  // byte_offset: packets_per_frame is not read, frame_bytes is required.
  reorder(c).fields.index = {};
  reorder(c).fields.byte_offset = {.offset = 4, .bits = 32};
  reorder(c).payload_size = 1024;
  reorder(c).packets_per_frame = 8;
  EXPECT_NE(issue_text(c, p + "packets_per_frame").find("only read in mode fields with fields.index"),
            std::string::npos);
  EXPECT_NE(issue_text(c, p + "frame_bytes").find("is required with fields.byte_offset"), std::string::npos);
  reorder(c).packets_per_frame = 0;
  reorder(c).frame_bytes = 512;
  EXPECT_NE(issue_text(c, p + "payload_size").find("must be at most frame_bytes (512)"), std::string::npos);
  reorder(c).frame_bytes = 1 << 20;
  const auto issues = c.validate();
  EXPECT_TRUE(issues.empty()) << issues[0].to_string();
}

TEST_F(ConfigReorder, FieldsFrameBytesIsTheDerivedSizeOrOnePacketShorter) {
  Config c = spans_of(valid(), ReorderMode::fields);
  reorder(c).fields.frame = {.offset = 0, .bits = 32};
  reorder(c).fields.index = {.offset = 4, .bits = 16};
  const std::string key = "interfaces[0].rx.reorder[0].frame_bytes";
  const std::string why = "must be packets_per_frame x payload_size (65536), or less when a frame's last packet is "
                          "shorter: from 64513 to 65536";
  for (uint64_t bad : {1000u, 64512u, 65537u}) {
    reorder(c).frame_bytes = bad;
    EXPECT_NE(issue_text(c, key).find(why), std::string::npos) << bad;
  }
  for (uint64_t good : {64513u, 65000u, 65536u}) {  // the last of 64 packets of 1024 bytes carries 1..1024
    reorder(c).frame_bytes = good;
    EXPECT_TRUE(c.validate().empty()) << good;
  }
}

TEST_F(ConfigReorder, FieldsGranuleDividesPayloadSize) {
  Config c = spans_of(valid(), ReorderMode::fields);
  reorder(c).fields.frame = {.offset = 0, .bits = 32};
  reorder(c).fields.index = {.offset = 4, .bits = 16};
  reorder(c).granule = 1000;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].granule").find("must divide payload_size (1024)"),
            std::string::npos);
  reorder(c).granule = 256;
  EXPECT_TRUE(c.validate().empty());
  // byte_offset's default granule (8) must divide payload_size too.
  reorder(c).granule = 0;
  reorder(c).fields.index = {};
  reorder(c).fields.byte_offset = {.offset = 4, .bits = 32};
  reorder(c).packets_per_frame = 0;
  reorder(c).frame_bytes = 1 << 20;
  reorder(c).payload_size = 1020;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].granule").find("the default granule (8) must divide"),
            std::string::npos);
  reorder(c).granule = 4;
  EXPECT_TRUE(c.validate().empty());
}

TEST_F(ConfigReorder, GranuleHoldsWholeInputSamplesAndAtMostAFrame) {
  Config c = spans_of(valid(), ReorderMode::spead);
  reorder(c).frame_bytes = 4096;
  reorder(c).input = SampleFormat::int16;
  reorder(c).output = SampleFormat::fp32;
  reorder(c).granule = 3;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].granule").find("multiple of the int16 input sample size (2 bytes)"),
            std::string::npos);
  reorder(c).granule = 8192;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].granule").find("must be at most frame_bytes (4096)"),
            std::string::npos);
  reorder(c).granule = 2;
  reorder(c).frame_bytes = 4095;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].frame_bytes").find("must hold whole int16 samples"),
            std::string::npos);
}

TEST_F(ConfigReorder, SpeadValidatesWithoutPayloadSizeOrPacketsPerFrame) {
  Config c = spans_of(valid(), ReorderMode::spead);
  reorder(c).frame_bytes = 1 << 20;
  reorder(c).spead.stream_item = 0x1600;
  const auto issues = c.validate();
  EXPECT_TRUE(issues.empty()) << issues[0].to_string();
}

TEST_F(ConfigReorder, SpeadNeedsFrameBytesAndReadsNoPayloadKeys) {
  Config c = spans_of(valid(), ReorderMode::spead);
  const std::string p = "interfaces[0].rx.reorder[0].";
  reorder(c).payload_size = 1024;
  reorder(c).payload_offset = 8;
  reorder(c).packets_per_frame = 64;
  EXPECT_NE(issue_text(c, p + "frame_bytes").find("is required in mode spead: the largest heap"), std::string::npos);
  EXPECT_NE(issue_text(c, p + "payload_size").find("not read in mode spead: each packet's SPEAD header says"),
            std::string::npos);
  EXPECT_NE(issue_text(c, p + "payload_offset").find("the SPEAD header starts the UDP payload"), std::string::npos);
  EXPECT_NE(issue_text(c, p + "packets_per_frame").find("mode spead sizes frames by frame_bytes"), std::string::npos);
}

TEST_F(ConfigReorder, SpeadStreamItemIsNotOneOfSpeadsOwn) {
  Config c = spans_of(valid(), ReorderMode::spead);
  reorder(c).frame_bytes = 1 << 20;
  reorder(c).spead.stream_item = 0x3;  // heap offset
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].spead.stream_item").find("one of SPEAD's own items"),
            std::string::npos);
  reorder(c).spead.stream_item = 0x800000;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].spead.stream_item").find("0..8388607"), std::string::npos);
}

TEST_F(ConfigReorder, SpeadHeadersInDeviceMemoryNeedHeaderSplit) {
  Config c = spans_of(valid(), ReorderMode::spead);
  reorder(c).frame_bytes = 1 << 20;
  c.memory_regions[0].kind = MemoryKind::device;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].mode").find("the SPEAD headers start the UDP payload"),
            std::string::npos);
  c.memory_regions.insert(c.memory_regions.begin(), {.name = "hdr", .buf_size = 256, .num_bufs = 8192});
  c.interfaces[0].rx.queues[0].memory_regions = {"hdr", "pinned"};
  EXPECT_EQ(issue_text(c, "interfaces[0].rx.reorder[0].mode").find("(no issue"), 0u);
  EXPECT_EQ(issue_text(c, "interfaces[0].rx.reorder[0].queue").find("(no issue"), 0u);  // payload: device
}

TEST_F(ConfigReorder, Vita49DerivesFrameBytes) {
  Config c = spans_of(valid(), ReorderMode::vita49);
  reorder(c).vita49.samples_per_frame = 1024;
  auto issues = c.validate();
  EXPECT_TRUE(issues.empty()) << issues[0].to_string();
  for (uint64_t bad : {4000u, 4100u}) {  // 1024 x 4 exactly, or frames never complete or cut samples off
    reorder(c).frame_bytes = bad;
    EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].frame_bytes")
                  .find("must be vita49.samples_per_frame x vita49.sample_bytes (4096)"),
              std::string::npos);
  }
}

TEST_F(ConfigReorder, Vita49SamplesPerFrameAndSampleBytes) {
  Config c = spans_of(valid(), ReorderMode::vita49);
  const std::string p = "interfaces[0].rx.reorder[0].";
  EXPECT_NE(issue_text(c, p + "vita49.samples_per_frame").find("is required in mode vita49"), std::string::npos);
  reorder(c).vita49.samples_per_frame = 1024;
  reorder(c).vita49.sample_bytes = 65;
  EXPECT_NE(issue_text(c, p + "vita49.sample_bytes").find("1..64"), std::string::npos);
  reorder(c).vita49.sample_bytes = 3;
  reorder(c).input = SampleFormat::int16;
  reorder(c).output = SampleFormat::fp32;
  EXPECT_NE(issue_text(c, p + "vita49.sample_bytes").find("multiple of the int16 input sample size (2 bytes)"),
            std::string::npos);
  reorder(c).vita49.sample_bytes = 4;
  reorder(c).granule = 6;
  EXPECT_NE(issue_text(c, p + "granule").find("must be a multiple of vita49.sample_bytes (4)"), std::string::npos);
  reorder(c).granule = 64;
  EXPECT_TRUE(c.validate().empty());
}

TEST_F(ConfigReorder, EachDecodersBlockOnlyInItsMode) {
  Config c = spans_of(valid(), ReorderMode::spead);
  reorder(c).frame_bytes = 1 << 20;
  reorder(c).fields.frame = {.offset = 0, .bits = 32};
  reorder(c).vita49.samples_per_frame = 8;
  const std::string p = "interfaces[0].rx.reorder[0].";
  EXPECT_NE(issue_text(c, p + "fields").find("is only read in mode fields; mode is spead"), std::string::npos);
  EXPECT_NE(issue_text(c, p + "vita49").find("is only read in mode vita49; mode is spead"), std::string::npos);
  reorder(c).mode = ReorderMode::vita49;
  reorder(c).spead.stream_item = 0x1600;
  EXPECT_NE(issue_text(c, p + "spead").find("is only read in mode spead; mode is vita49"), std::string::npos);
}

TEST_F(ConfigReorder, SpanKeysOnlyInSpanModes) {
  Config c = valid();
  reorder(c).frame_bytes = 4096;
  reorder(c).granule = 8;
  reorder(c).max_streams = 2;
  const std::string p = "interfaces[0].rx.reorder[0].";
  for (const char* key : {"frame_bytes", "granule", "max_streams"})
    EXPECT_NE(issue_text(c, p + key).find("is only read in modes fields, spead, vita49, roce and rtp_video; mode is sequence"),
              std::string::npos)
        << key;
  // A block written in YAML counts even when empty.
  const auto issues = test::parse_issues(span_yaml(R"(          payload_size: 1024
          packets_per_frame: 8
          spead: {})"));
  const ConfigIssue* i = find_issue(issues, p + "spead");
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->where.line, 13);  // spead: {}
  EXPECT_NE(i->message.find("is only read in mode spead; mode is sequence"), std::string::npos) << i->message;
}

TEST_F(ConfigReorder, MaxStreamsShareTheFrameBuffers) {
  Config c = spans_of(valid(), ReorderMode::spead);
  reorder(c).frame_bytes = 1 << 20;
  reorder(c).max_streams = 4;  // x max_open_frames 4 = 16 > frame_buffers 8
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].frame_buffers")
                .find("must be >= max_open_frames x max_streams (4 x 4 = 16): every stream's open frames need a buffer"),
            std::string::npos);
  reorder(c).frame_buffers = 16;
  EXPECT_TRUE(c.validate().empty());
  reorder(c).max_streams = 1025;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].max_streams").find("1..1024"), std::string::npos);
}

TEST_F(ConfigReorder, SpanModesWorkWithThePersistentKernel) {
  Config c = spans_of(valid(), ReorderMode::vita49);
  reorder(c).vita49.samples_per_frame = 1024;
  reorder(c).launch = LaunchMode::persistent;
  EXPECT_TRUE(c.validate().empty());
  reorder(c).staging = Staging::direct;
  EXPECT_TRUE(c.validate().empty());
}

// ---- Mode rtp_video (SMPTE ST 2110-20 / RFC 4175; docs/video.md) ----

std::string video_yaml(const std::string& video_keys) {
  return test::reorder_yaml("          mode: rtp_video\n          frames: host\n          max_streams: 2\n          video:\n" +
                            video_keys);
}

const char* kVideo1080p = R"(            width: 1920
            height: 1080
            sampling: YCbCr-4:2:2
            depth: 10
            exactframerate: 60000/1001
            interlaced: false
            payload_type: 96)";

// valid() in mode rtp_video, frames in host memory: 1920x1080 10-bit 4:2:2 at 60000/1001.
Config video_of(Config c) {
  c = spans_of(std::move(c), ReorderMode::rtp_video);
  c.memory_regions[0].kind = MemoryKind::host;
  c.memory_regions[0].gpu = -1;
  ReorderConfig& g = c.interfaces[0].rx.reorder[0];
  g.frames = FrameTarget::host;
  g.video = VideoOptions{.width = 1920, .height = 1080, .depth = 10, .rate_num = 60000, .rate_den = 1001};
  return c;
}

TEST_F(ConfigReorder, st2110_VideoReadsFromYaml) {
  const Config c = Config::parse(video_yaml(kVideo1080p));
  const ReorderConfig& g = c.interfaces[0].rx.reorder.at(0);
  EXPECT_EQ(g.mode, ReorderMode::rtp_video);
  EXPECT_EQ(g.frames, FrameTarget::host);
  EXPECT_EQ(g.max_streams, 2u);
  EXPECT_EQ(g.video.width, 1920u);
  EXPECT_EQ(g.video.height, 1080u);
  EXPECT_EQ(g.video.sampling, VideoSampling::ycbcr_422);
  EXPECT_EQ(g.video.depth, 10);
  EXPECT_EQ(g.video.rate_num, 60000u);
  EXPECT_EQ(g.video.rate_den, 1001u);
  EXPECT_FALSE(g.video.interlaced);
  EXPECT_EQ(g.video.payload_type, 96);
  // Sizes follow from the format: 1920 / 2 pgroups of 5 bytes a line; presence per pgroup.
  EXPECT_EQ(g.frame_bytes, 0u);
  EXPECT_EQ(protocols::frame_bytes_of(g), 4800u * 1080);
  EXPECT_EQ(protocols::granule_of(g), 5u);
}

TEST_F(ConfigReorder, st2110_VideoSamplingsRatesAndDefaults) {
  const Config c = Config::parse(video_yaml(R"(            width: 1280
            height: 720
            sampling: RGB
            depth: 8
            exactframerate: 50
            interlaced: true)"));
  const ReorderConfig& g = c.interfaces[0].rx.reorder.at(0);
  EXPECT_EQ(g.video.sampling, VideoSampling::rgb);
  EXPECT_EQ(g.video.rate_num, 50u);
  EXPECT_EQ(g.video.rate_den, 1u);
  EXPECT_TRUE(g.video.interlaced);
  EXPECT_EQ(g.video.payload_type, -1);  // any
  EXPECT_EQ(protocols::frame_bytes_of(g), 1280u * 3 * 720);
  EXPECT_EQ(protocols::granule_of(g), 3u);
  const Config d = Config::parse(video_yaml(R"(            width: 1920
            height: 1080
            sampling: YCbCr-4:4:4
            depth: 10
            exactframerate: 30000/1001)"));
  EXPECT_EQ(d.interfaces[0].rx.reorder[0].video.sampling, VideoSampling::ycbcr_444);
  EXPECT_EQ(protocols::granule_of(d.interfaces[0].rx.reorder[0]), 15u);  // 4 pixels in 15 bytes
}

TEST_F(ConfigReorder, st2110_VideoTypeErrorsNameTheKeyAndLine) {
  const auto issues = test::parse_issues(video_yaml(R"(            width: 1920
            height: 1080
            sampling: YCbCr-4:2:0
            exactframerate: 59.94
            payload_type: 128
            colorimetry: BT709)"));
  const std::string p = "interfaces[0].rx.reorder[0].video.";
  test::expect_issue(issues, "test.yaml", 17, 13, p + "sampling", "YCbCr-4:2:0",
                     "must be one of: YCbCr-4:2:2, YCbCr-4:4:4, RGB");
  test::expect_issue(issues, "test.yaml", 18, 13, p + "exactframerate", "59.94",
                     "an integer (50) or N/D (60000/1001)");
  test::expect_issue(issues, "test.yaml", 19, 13, p + "payload_type", "128", "must be an integer 0..127");
  const ConfigIssue* unknown = find_issue(issues, p + "colorimetry");
  ASSERT_NE(unknown, nullptr);
  EXPECT_NE(unknown->message.find("width, height, sampling, depth, exactframerate, interlaced, payload_type"),
            std::string::npos)
      << unknown->message;
}

TEST_F(ConfigReorder, st2110_VideoRulesNameWhatIsAllowed) {
  const auto issues = test::parse_issues(video_yaml(R"(            width: 1921
            height: 1080
            depth: 10
            exactframerate: 60000/1001)"));
  test::expect_issue(issues, "test.yaml", 15, 13, "interfaces[0].rx.reorder[0].video.width", "1921",
                     "must be a multiple of 2 pixels: YCbCr-4:2:2 10-bit packs 2 pixels in a 5-byte pixel group");
  Config c = video_of(valid());
  EXPECT_TRUE(c.validate().empty()) << c.validate()[0].to_string();
  const std::string p = "interfaces[0].rx.reorder[0].";
  reorder(c).video.depth = 9;
  test::expect_only(c, p + "video.depth", "9", "must be one of: 8, 10, 12, 16");
  reorder(c).video.depth = 10;
  reorder(c).video.width = 0;
  test::expect_only(c, p + "video.width", "0", "is required in mode rtp_video");
  reorder(c).video.width = 32770;
  test::expect_only(c, p + "video.width", "32770", "1..32768");
  reorder(c).video.width = 1920;
  reorder(c).video.height = 0;
  test::expect_only(c, p + "video.height", "0", "is required in mode rtp_video");
  reorder(c).video.height = 1081;
  reorder(c).video.interlaced = true;
  test::expect_only(c, p + "video.height", "1081", "must be even when interlaced");
  reorder(c).video.height = 1080;
  reorder(c).video.rate_num = 0;
  test::expect_only(c, p + "video.exactframerate", "", "is required in mode rtp_video");
  reorder(c).video.rate_num = 50;
  reorder(c).video.payload_type = 200;
  test::expect_only(c, p + "video.payload_type", "200", "0..127");
  reorder(c).video.payload_type = 96;
  reorder(c).video.sampling = VideoSampling::ycbcr_444;
  reorder(c).video.width = 1918;  // 10-bit 4:4:4: 4 pixels in 15 bytes
  test::expect_only(c, p + "video.width", "1918", "must be a multiple of 4 pixels");
  reorder(c).video.width = 1920;
  EXPECT_TRUE(c.validate().empty());
}

TEST_F(ConfigReorder, st2110_VideoRefusesKeysOfOtherModes) {
  Config c = video_of(valid());
  const std::string p = "interfaces[0].rx.reorder[0].";
  reorder(c).frame_bytes = 4096;
  test::expect_only(c, p + "frame_bytes", "4096", "must be video.height lines of 4800 bytes (5184000)");
  reorder(c).frame_bytes = 5184000;  // the same size written out is fine
  EXPECT_TRUE(c.validate().empty());
  reorder(c).granule = 2;
  test::expect_only(c, p + "granule", "2", "must divide the pixel group's 5 bytes");
  reorder(c).granule = 0;
  reorder(c).payload_size = 1200;
  test::expect_only(c, p + "payload_size", "1200", "each packet's RTP header and SRD headers say");
  reorder(c).payload_size = 0;
  reorder(c).packets_per_frame = 4320;
  test::expect_only(c, p + "packets_per_frame", "4320", "sizes frames by video.width, height, sampling and depth");
  reorder(c).packets_per_frame = 0;
  reorder(c).input = SampleFormat::int16;
  reorder(c).output = SampleFormat::fp32;
  test::expect_only(c, p + "input", "int16", "must be raw in mode rtp_video");
  reorder(c).input = SampleFormat::raw;
  reorder(c).output = SampleFormat::raw;
  reorder(c).vita49.samples_per_frame = 64;
  test::expect_only(c, p + "vita49", "", "is only read in mode vita49; mode is rtp_video");
}

TEST_F(ConfigReorder, st2110_VideoBlockOnlyInModeRtpVideo) {
  const auto issues = test::parse_issues(span_yaml(R"(          mode: vita49
          vita49: {samples_per_frame: 1024}
          video: {width: 1920})"));
  test::expect_issue(issues, "test.yaml", 13, 11, "interfaces[0].rx.reorder[0].video", "",
                     "is only read in mode rtp_video; mode is vita49");
  Config c = spans_of(valid(), ReorderMode::spead);
  reorder(c).frame_bytes = 1 << 20;
  reorder(c).video.height = 720;
  test::expect_only(c, "interfaces[0].rx.reorder[0].video", "", "is only read in mode rtp_video; mode is spead");
}

TEST_F(ConfigReorder, st2110_VideoFramesOnTheGpuNeedGpuReadableMemory) {
  Config c = video_of(valid());
  reorder(c).frames = FrameTarget::gpu;
  EXPECT_NE(issue_text(c, "interfaces[0].rx.reorder[0].queue").find("which the GPU cannot read"), std::string::npos);
  c.memory_regions[0].kind = MemoryKind::pinned;
  c.memory_regions[0].gpu = 0;
  EXPECT_TRUE(c.validate().empty()) << c.validate()[0].to_string();
}

TEST(st2110_video_rate, ExactFrameRateParsesAsSdpWritesIt) {
  uint32_t n = 0, d = 0;
  EXPECT_TRUE(parse_exactframerate("60000/1001", n, d));
  EXPECT_EQ(n, 60000u);
  EXPECT_EQ(d, 1001u);
  EXPECT_TRUE(parse_exactframerate("25", n, d));
  EXPECT_EQ(n, 25u);
  EXPECT_EQ(d, 1u);
  for (const char* bad : {"", "0", "59.94", "60000/", "/1001", "60000/0", "-50", "50 ", "1/2/3", "99999999999"})
    EXPECT_FALSE(parse_exactframerate(bad, n, d)) << bad;
  EXPECT_EQ(n, 25u);  // untouched by a failure
  EXPECT_EQ(exactframerate_text(VideoOptions{.rate_num = 30000, .rate_den = 1001}), "30000/1001");
  EXPECT_EQ(exactframerate_text(VideoOptions{.rate_num = 50, .rate_den = 1}), "50");
}

}  // namespace
}  // namespace netdaq
