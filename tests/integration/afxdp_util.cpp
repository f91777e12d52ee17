#include "afxdp_util.h"

#include <algorithm>
#include <stdexcept>

namespace ndqtest {

using namespace netdaq;

bool afxdp_built() {
  const auto e = engines();
  return std::find(e.begin(), e.end(), "afxdp") != e.end();
}

size_t send_sequence(TxQueue& q, uint64_t first, size_t count, size_t size, const Delivered& delivered,
                     size_t window) {
  std::vector<Bytes> payloads;
  payloads.reserve(count);
  for (size_t i = 0; i < count; ++i) payloads.push_back(make_payload(first + i, size));
  return send_payloads(q, payloads, std::chrono::milliseconds(20000), delivered, window);
}

::testing::AssertionResult exactly_sequence(const std::vector<Bytes>& got, uint64_t first, size_t count, size_t size) {
  if (got.size() != count)
    return ::testing::AssertionFailure() << "got " << got.size() << " packets, want " << count;
  std::vector<bool> seen(count);
  for (const Bytes& b : got) {
    const uint64_t seq = payload_seq(b);
    if (seq < first || seq >= first + count) return ::testing::AssertionFailure() << "unexpected sequence " << seq;
    if (seen[seq - first]) return ::testing::AssertionFailure() << "duplicate sequence " << seq;
    seen[seq - first] = true;
    if (auto r = check_payload(b, seq, size); !r) return r;
  }
  return ::testing::AssertionSuccess();
}

bool xdp_attached(const NetnsLab& lab, const NetnsLab::Side& side) {
  std::string out;
  // A failed `ip` (no such device, no namespace) must not read as "nothing attached".
  if (const int status = lab.exec_in(side.ns, {"ip", "-o", "link", "show", "dev", side.veth}, &out); status != 0)
    throw std::runtime_error("ip -o link show dev " + side.veth + " in " + side.ns + " exited with " +
                             std::to_string(status) + ": " + out);
  return out.find("prog/xdp") != std::string::npos || out.find(" xdp") != std::string::npos;
}

}  // namespace ndqtest
