// `netdaq run` with rx.reorder launch: rings (docs/gpu-afxdp.md), shared by CI's CPU-driver
// runs (rings_cli_test.cpp, frames: host: the driver's CPU thread, the GPU kernel's reference)
// and the GPU machine's (tests/gpu/rings_cli_gpu_test.cpp, frames: gpu: the persistent
// kernel): the afxdp queue's RX and fill rings go to gpu::XskFrameReceiver, whose loop takes
// every packet; the CLI's receiver thread only takes finished frames. A session in the peer
// namespace sends numbered payloads through a veth pair.
#pragma once

#include <string>

namespace ndqtest {

enum class RingsFrames { host, gpu };

// 60 frames of 32 packets: every packet placed, every frame complete and taken; the JSON, the
// summary and the final metrics (scraped from the run's namespace) say so, the rx row counts
// the packets the rings' owner took, totals.lost 0, Ctrl-C ends the metrics' linger with 0,
// and no XDP program is left. `cli`: the netdaq binary.
void rings_cli_places_every_packet(RingsFrames frames, const std::string& cli);
// Frames of 32 packets, two frames open at once. The sender sends frames 0..9 less three
// packets of frame 4 (missing: frame 4 closes incomplete), then frame 1's packets again:
// their frame closed long ago (late). 3 + 32 packets lost, counted, and the run is not ok.
void rings_cli_counts_missing_and_late(RingsFrames frames, const std::string& cli);

}  // namespace ndqtest
