// The reference model of frame assembly: from the generator's truth and the packets that
// were delivered (some lost, reordered or duplicated), the frames every correct receiver must
// produce: each frame's bytes where a delivered packet carried them, zeros elsewhere, and how
// many bytes arrived. It knows nothing of decoders or trackers: tests compare what netdaq built
// (on the CPU or the GPU) with it byte for byte.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "protocols/generated.h"

namespace netdaq::testgen {

struct ExpectedFrame {
  std::vector<std::byte> bytes;  // zeros where nothing arrived
  uint64_t bytes_present = 0;
  bool complete = false;
};

// Key: (stream, frame).
using ExpectedFrames = std::map<std::pair<uint64_t, uint64_t>, ExpectedFrame>;

// delivered: indices into traffic.packets, in arrival order (repeats are duplicates). Frames
// that got no byte are left out (a receiver never sees them).
ExpectedFrames expected_frames(const GeneratedTraffic& traffic, const std::vector<size_t>& delivered);

// Delivery orders for tests: every packet once in order; with every k-th lost; reordered
// within windows of w packets (seeded); with every k-th sent twice.
std::vector<size_t> in_order(size_t n);
std::vector<size_t> drop_every(std::vector<size_t> order, size_t k, size_t first = 0);
std::vector<size_t> shuffle_within(std::vector<size_t> order, size_t window, uint64_t seed);
std::vector<size_t> duplicate_every(std::vector<size_t> order, size_t k);

}  // namespace netdaq::testgen
