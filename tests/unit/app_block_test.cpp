// Application blocks (netdaq/app_block.h): an application's own top-level block read with the
// library's messages, range-checked from its declarations, checked by its own hook.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "config_test_util.h"
#include "netdaq/app_block.h"
#include "netdaq/config.h"

namespace netdaq {
namespace {

// A valid config without the block (7 lines).
const std::string kMinimal = R"(memory_regions: [{name: pool, buf_size: 2048, num_bufs: 8192}]
interfaces:
  - name: eth0
    address: udp://0.0.0.0:5000
    rx:
      queues:
        - {id: 0, memory_regions: [pool]}
)";

using test::expect_issue;
using test::parse_issues;

// A telescope's own settings next to netdaq's.
struct Instrument {
  static constexpr const char* kKey = "instrument";
  std::string name = "dish";
  bool calibrate = false;
  uint32_t channels = 1024;
  double gain_db = 0;
};

void register_instrument() {
  register_app_block(app_block<Instrument>(
      {
          app_option("name", &Instrument::name, "the instrument"),
          app_option("calibrate", &Instrument::calibrate, "run a calibration first"),
          app_option("channels", &Instrument::channels, "spectral channels", 1, 65536),
          app_option("gain_db", &Instrument::gain_db, "analogue gain", -20, 0, "dB"),
      },
      [](const Config& cfg, std::vector<ConfigIssue>& issues) {
        const auto& i = cfg.options.get<Instrument>();
        if (i.calibrate && cfg.interfaces.empty())
          issues.push_back({cfg.location_of("instrument.calibrate"), "instrument.calibrate", "true",
                            "needs an interface to calibrate"});
      }));
}

class AppBlockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::ensure_socket_engine();
    register_instrument();
  }
};

TEST_F(AppBlockTest, ReadsTheBlockIntoConfigOptions) {
  const Config cfg = Config::parse(kMinimal + "instrument: {name: meerkat, calibrate: false, channels: 4096, gain_db: -3.5}\n");
  const auto& i = cfg.options.get<Instrument>();
  EXPECT_EQ(i.name, "meerkat");
  EXPECT_FALSE(i.calibrate);
  EXPECT_EQ(i.channels, 4096u);
  EXPECT_DOUBLE_EQ(i.gain_db, -3.5);
  EXPECT_EQ(cfg.location_of("instrument.channels").line, 8);
}

TEST_F(AppBlockTest, MissingBlockReadsAsDefaults) {
  const Config cfg = Config::parse(kMinimal);
  EXPECT_EQ(cfg.options.get<Instrument>().channels, 1024u);
  EXPECT_EQ(cfg.options.find("instrument"), nullptr);
}

TEST_F(AppBlockTest, WrongValuesNameKeyFileAndLine) {
  const auto issues = parse_issues(kMinimal + "instrument:\n  channels: 0\n  gain_db: loud\n  chanels: 2\n");
  expect_issue(issues, "test.yaml", 9, 3, "instrument.channels", "0", "must be an integer 1..65536");
  expect_issue(issues, "test.yaml", 10, 3, "instrument.gain_db", "loud", "must be a number >= -20");
  expect_issue(issues, "test.yaml", 11, 3, "instrument.chanels", "2", "unknown key (did you mean 'channels'?)");
}

TEST_F(AppBlockTest, TheApplicationsCheckRunsWithLocations) {
  const auto issues = parse_issues("instrument:\n  calibrate: true\n");
  expect_issue(issues, "test.yaml", 2, 3, "instrument.calibrate", "true", "needs an interface to calibrate");
}

TEST_F(AppBlockTest, DeclaredRangesAreCheckedForConfigsBuiltInCode) {
  Config cfg = Config::parse(kMinimal);
  cfg.options.get<Instrument>().channels = 70000;
  cfg.options.get<Instrument>().gain_db = -21;
  const auto issues = cfg.validate();
  ASSERT_EQ(issues.size(), 2u);
  expect_issue(issues, "<string>", 0, 0, "instrument.channels", "70000", "must be an integer 1..65536");
  expect_issue(issues, "<string>", 0, 0, "instrument.gain_db", "-21", "must be a number >= -20 (dB)");
}

TEST_F(AppBlockTest, UnknownTopLevelKeysListTheRegisteredBlocks) {
  const auto issues = parse_issues(kMinimal + "instrumnet: {}\n");
  expect_issue(issues, "test.yaml", 8, 1, "instrumnet", "", "did you mean 'instrument'?");
}

// The CLI's `run:` is its own block: a program that does not declare it gets no `run` key.
TEST_F(AppBlockTest, BlocksNobodyRegisteredAreUnknownKeys) {
  const auto issues = parse_issues(kMinimal + "run: {duration_s: 1}\n");
  expect_issue(issues, "test.yaml", 8, 1, "run", "", "unknown key; allowed keys: memory_regions, interfaces, instrument, log, eal");
}

TEST_F(AppBlockTest, KeysOfTheLibraryAndEnginesAreRefused) {
  for (const char* key : {"interfaces", "memory_regions", "log", "eal", ""}) {
    AppBlock b = app_block<Instrument>({});
    b.key = key;
    EXPECT_THROW(register_app_block(b), std::invalid_argument) << key;
  }
}

}  // namespace
}  // namespace netdaq
