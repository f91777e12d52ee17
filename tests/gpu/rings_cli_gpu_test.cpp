// `netdaq run` with launch: rings and frames: gpu: the persistent kernel owns the afxdp queue's
// RX and fill rings, the CLI only takes finished frames (rings_cli_scenario.h; CI runs the same
// with frames: host). Needs root, the afxdp engine and `ip` (scripts/gpu-check.sh carries them).
#include <gtest/gtest.h>

#include "../integration/rings_cli_scenario.h"
#include "gpu_test_util.h"

using namespace ndqtest;

TEST(RingsCliGpu, RunPlacesEveryPacketThroughTheGpuKernelAndCountsFramesAndLoss) {
  NDQ_REQUIRE_GPU();
  rings_cli_places_every_packet(RingsFrames::gpu, NETDAQ_CLI);
}

TEST(RingsCliGpu, PacketsMissingOrPlacedNowhereAreLossAndTheRunSaysSo) {
  NDQ_REQUIRE_GPU();
  rings_cli_counts_missing_and_late(RingsFrames::gpu, NETDAQ_CLI);
}
