#include "protocols/reference_model.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <set>

namespace netdaq::testgen {

ExpectedFrames expected_frames(const GeneratedTraffic& traffic, const std::vector<size_t>& delivered) {
  std::map<std::pair<uint64_t, uint64_t>, const FrameTruth*> truth;
  for (const auto& f : traffic.frames) truth[{f.stream, f.frame}] = &f;
  ExpectedFrames out;
  std::set<size_t> seen;
  for (size_t i : delivered) {
    if (!seen.insert(i).second) continue;  // a duplicate adds nothing
    for (const TruthSpan& s : traffic.packets.at(i).spans) {
      const FrameTruth& t = *truth.at({s.stream, s.frame});
      ExpectedFrame& e = out[{s.stream, s.frame}];
      if (e.bytes.empty()) e.bytes.assign(t.bytes.size(), std::byte{0});
      std::memcpy(e.bytes.data() + s.offset, traffic.packets[i].payload.data() + s.packet_offset, s.bytes);
      e.bytes_present += s.bytes;
    }
  }
  for (auto& [key, e] : out) e.complete = e.bytes_present == truth.at(key)->bytes.size();
  return out;
}

std::vector<size_t> in_order(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

std::vector<size_t> drop_every(std::vector<size_t> order, size_t k, size_t first) {
  std::vector<size_t> out;
  for (size_t i = 0; i < order.size(); ++i)
    if (i < first || (i - first) % k != 0) out.push_back(order[i]);
  return out;
}

std::vector<size_t> shuffle_within(std::vector<size_t> order, size_t window, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t at = 0; at < order.size(); at += window)
    std::shuffle(order.begin() + at, order.begin() + std::min(order.size(), at + window), rng);
  return order;
}

std::vector<size_t> duplicate_every(std::vector<size_t> order, size_t k) {
  std::vector<size_t> out;
  for (size_t i = 0; i < order.size(); ++i) {
    out.push_back(order[i]);
    if (i % k == k - 1) out.push_back(order[i]);
  }
  return out;
}

}  // namespace netdaq::testgen
