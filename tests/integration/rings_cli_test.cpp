// `netdaq run` with launch: rings and frames: host on CI (rings_cli_scenario.h; the GPU
// machine runs the same with frames: gpu, tests/gpu/rings_cli_gpu_test.cpp).
#include <gtest/gtest.h>

#include "afxdp_util.h"
#include "rings_cli_scenario.h"
#include "test_paths.h"
#include "xsk_frames_scenario.h"

using namespace ndqtest;

TEST(RingsCli, RunPlacesEveryPacketThroughTheRingsOwnerAndCountsFramesAndLoss) {
  NDQ_REQUIRE_GPU_BUILD();
  rings_cli_places_every_packet(RingsFrames::host, NETDAQ_CLI);
}

TEST(RingsCli, PacketsMissingOrPlacedNowhereAreLossAndTheRunSaysSo) {
  NDQ_REQUIRE_GPU_BUILD();
  rings_cli_counts_missing_and_late(RingsFrames::host, NETDAQ_CLI);
}
