// The rdma engine's peer file reader (connect: manual): what an FPGA tool writes is read into
// queue-pair parameters, and anything else is an Error naming the file and the field.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "engines/rdma/qp_params.h"
#include "netdaq/status.h"

namespace {

using netdaq::detail::rdma::read_params;

std::string peer_file(const std::string& text) {
  const std::string path = ::testing::TempDir() + "rdma_peer_file_test.json";
  std::ofstream(path) << text;
  return path;
}

// The Error read_params throws for `text`, or "" when it throws none.
std::string error_of(const std::string& text) {
  try {
    read_params(peer_file(text));
  } catch (const netdaq::Error& e) {
    return e.what();
  }
  return "";
}

TEST(RdmaPeerFile, ReadsWhatAnFpgaToolWrites) {
  auto p = read_params(peer_file(R"({"gid": "::ffff:10.0.0.1",
      "rx": [{"qpn": 17, "psn": 5, "ring": {"addr": 18446744073709551615, "rkey": 4294967295, "slots": 64,
              "stride": 2048, "slot_size": 2048}, "credits": true}],
      "tx": [{"qpn": 16777215}]})"));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->rx.size(), 1u);
  EXPECT_EQ(p->rx[0].qpn, 17u);
  EXPECT_EQ(p->rx[0].psn, 5u);
  ASSERT_TRUE(p->rx[0].ring);
  EXPECT_EQ(p->rx[0].ring->addr, UINT64_MAX);
  EXPECT_EQ(p->rx[0].ring->rkey, UINT32_MAX);
  EXPECT_TRUE(p->rx[0].credits);
  ASSERT_EQ(p->tx.size(), 1u);
  EXPECT_EQ(p->tx[0].qpn, 0xffffffu);
  EXPECT_EQ(p->tx[0].psn, 0u);
}

TEST(RdmaPeerFile, AnEmptyFileIsNotWrittenYet) { EXPECT_FALSE(read_params(peer_file(" \n"))); }

// Numbers are JSON integers: a fraction, an exponent, a negative number, a bool or a string in
// an integer field is refused (it was converted with a cast: 1e300 was undefined behaviour).
TEST(RdmaPeerFile, OnlyIntegersInRangeAreIntegers) {
  const std::string gid = R"({"gid": "::1", "rx": [{"qpn": )";
  for (const char* bad : {"1e300", "1.5", "-1", "true", "\"17\"", "4294967296"}) {
    const std::string e = error_of(gid + bad + "}]}");
    EXPECT_NE(e.find("rdma.peer_file"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("'qpn' = "), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("is not an integer 0..4294967295"), std::string::npos) << bad << ": " << e;
  }
  EXPECT_NE(error_of(R"({"gid": "::1", "rx": [{"qpn": 1, "ring": {"addr": 1e20, "rkey": 1, "slots": 1,
                         "stride": 64, "slot_size": 64}}]})")
                .find("'addr' = 1e+20 is not an integer 0..18446744073709551615"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"gid": "::1", "tx": [{"qpn": 1, "credit": {"addr": 1, "rkey": -3}}]})").find("'rkey' = -3"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"gid": "::1", "rx": [{"qpn": 1, "ring": {"addr": 1, "rkey": 1, "slots": 1,
                         "stride": 64, "slot_size": 64}, "credits": 1}]})")
                .find("rdma.peer_file"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"gid": "::1", "rx": [{"psn": 1}]})").find("'qpn' is missing"), std::string::npos);
}

TEST(RdmaPeerFile, RangesOfQueuePairNumbersAndPsns) {
  EXPECT_NE(error_of(R"({"gid": "::1", "rx": [{"qpn": 0}]})").find("qpn 0 is not 1..16777215"), std::string::npos);
  EXPECT_NE(error_of(R"({"gid": "::1", "rx": [{"qpn": 16777216}]})").find("is not 1..16777215"), std::string::npos);
  EXPECT_NE(error_of(R"({"gid": "::1", "rx": [{"qpn": 1, "psn": 16777216}]})").find("psn 16777216"),
            std::string::npos);
}

}  // namespace
