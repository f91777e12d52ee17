// rx.reorder.video.unpack (docs/video-gpu.md): planes the GPU frame pipeline unpacks each
// frame into. Read from YAML as a typed value; allowed only with frames: gpu and for the
// formats the unpack kernel takes; errors name key, file, line and what is allowed.
#include <gtest/gtest.h>

#include <string>

#include "config_test_util.h"
#include "netdaq/config.h"

namespace netdaq {
namespace {

// frames: on line 14, `video:` on line 15, the video keys from line 19 (line 1 is the empty one).
std::string yaml(const std::string& frames, const std::string& video) {
  return test::reorder_yaml("          mode: rtp_video\n          max_streams: 1\n          granule: 0\n          frames: " +
                                frames + "\n          video:\n            width: 1920\n            height: 1080\n"
                                "            exactframerate: 50\n" + video,
                            "kind: pinned, gpu: 0");
}

const std::string kKey = "interfaces[0].rx.reorder[0].video.unpack";

class ConfigVideoUnpack : public ::testing::Test {
 protected:
  void SetUp() override { test::ensure_socket_engine(); }
};

TEST_F(ConfigVideoUnpack, st2110_UnpackReadsEachValueAndDefaultsToNone) {
  const Config none = Config::parse(yaml("gpu", "            depth: 10"));
  EXPECT_EQ(none.interfaces[0].rx.reorder[0].video.unpack, VideoUnpack::none);
  EXPECT_TRUE(none.validate().empty()) << none.validate()[0].to_string();
  const VideoUnpack values[] = {VideoUnpack::none, VideoUnpack::uint16, VideoUnpack::fp16};
  for (VideoUnpack u : values) {
    const std::string name = to_string(u);
    const Config c = Config::parse(yaml("gpu", "            depth: 10\n            unpack: " + name));
    EXPECT_EQ(c.interfaces[0].rx.reorder[0].video.unpack, u) << name;
    EXPECT_TRUE(c.validate().empty()) << name << ": " << c.validate()[0].to_string();
  }
  EXPECT_STREQ(to_string(VideoUnpack::uint16), "uint16");
  EXPECT_STREQ(to_string(VideoUnpack::fp16), "fp16");
  // The formats the kernel takes: YCbCr-4:2:2 8 and 10 bit, RGB 8 bit.
  for (const char* format : {"sampling: YCbCr-4:2:2\n            depth: 8", "sampling: RGB\n            depth: 8"}) {
    const Config c = Config::parse(yaml("gpu", std::string("            ") + format + "\n            unpack: fp16"));
    EXPECT_TRUE(c.validate().empty()) << format << ": " << c.validate()[0].to_string();
  }
}

TEST_F(ConfigVideoUnpack, st2110_UnknownValueNamesKeyLineAndTheValues) {
  const auto issues = test::parse_issues(yaml("gpu", "            depth: 10\n            unpack: float32"));
  test::expect_issue(issues, "test.yaml", 20, 13, kKey, "float32", "must be one of: none, uint16, fp16");
}

TEST_F(ConfigVideoUnpack, st2110_UnpackNeedsGpuFrames) {
  const auto issues = test::parse_issues(yaml("host", "            depth: 10\n            unpack: uint16"));
  test::expect_issue(issues, "test.yaml", 20, 13, kKey, "uint16", "needs frames: gpu");
  // frames: host without unpack (or unpack: none) is valid.
  const Config c = Config::parse(yaml("host", "            depth: 10\n            unpack: none"));
  EXPECT_EQ(c.interfaces[0].rx.reorder[0].video.unpack, VideoUnpack::none);
}

TEST_F(ConfigVideoUnpack, st2110_UnpackOnlyForTheKernelsFormats) {
  const struct {
    const char* format;
    const char* says;
  } cases[] = {
      {"sampling: YCbCr-4:2:2\n            depth: 12", "this stream is YCbCr-4:2:2 12-bit"},
      {"sampling: YCbCr-4:4:4\n            depth: 10", "this stream is YCbCr-4:4:4 10-bit"},
      {"sampling: RGB\n            depth: 10", "this stream is RGB 10-bit"},
  };
  for (const auto& k : cases) {
    const auto issues =
        test::parse_issues(yaml("gpu", std::string("            ") + k.format + "\n            unpack: fp16"));
    SCOPED_TRACE(k.format);
    test::expect_issue(issues, "test.yaml", 21, 13, kKey, "fp16", "is for YCbCr-4:2:2 8 or 10 bit and RGB 8 bit only");
    test::expect_issue(issues, "test.yaml", 21, 13, kKey, "fp16", k.says);
  }
}

// Every launch mode unpacks: the persistent kernel leaves SMs free for it (persistent_sms).
TEST_F(ConfigVideoUnpack, st2110_UnpackWithEveryLaunchMode) {
  Config c = Config::parse(yaml("gpu", "            depth: 10\n            unpack: uint16"));
  ReorderConfig& g = c.interfaces[0].rx.reorder[0];
  for (LaunchMode m : {LaunchMode::per_burst, LaunchMode::graph, LaunchMode::persistent}) {
    g.launch = m;
    SCOPED_TRACE(to_string(m));
    EXPECT_TRUE(c.validate().empty()) << c.validate()[0].to_string();
  }
  g.persistent_sms = 16;
  EXPECT_TRUE(c.validate().empty()) << c.validate()[0].to_string();
}

TEST_F(ConfigVideoUnpack, st2110_UnpackInCppConfigs) {
  Config c = Config::parse(yaml("gpu", "            depth: 10"));
  ReorderConfig& g = c.interfaces[0].rx.reorder[0];
  g.video.unpack = VideoUnpack::fp16;
  EXPECT_TRUE(c.validate().empty()) << c.validate()[0].to_string();
  g.frames = FrameTarget::host;
  const auto issues = c.validate();
  ASSERT_EQ(issues.size(), 1u) << (issues.empty() ? "no issues" : issues[0].to_string());
  EXPECT_EQ(issues[0].key, kKey);
  EXPECT_EQ(issues[0].value, "fp16");
}

}  // namespace
}  // namespace netdaq
