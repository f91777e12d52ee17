#include "afxdp_util.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>

namespace ndqtest {

using namespace netdaq;

bool afxdp_built() {
  const auto e = engines();
  return std::find(e.begin(), e.end(), "afxdp") != e.end();
}

FlowConfig udp_flow(uint32_t id, uint16_t queue, uint16_t udp_dst) {
  FlowConfig f;
  f.id = id;
  f.queue = queue;
  f.match.udp_dst = udp_dst;
  return f;
}

Config AfxdpIface::build() const {
  Config c;
  c.log.level = "warn";
  c.memory_regions.push_back(MemoryRegionConfig{"umem", MemoryKind::host, 2048, num_bufs});
  InterfaceConfig i;
  i.name = "x0";
  i.engine = "afxdp";
  i.address = dev;
  i.afxdp = afxdp;
  if (!dst_mac.empty()) i.afxdp.dst_mac = dst_mac;
  for (uint16_t id : rx_queues) {
    QueueConfig q;
    q.id = id;
    q.mode = mode;
    q.batch_size = 64;
    q.ring_depth = ring_depth;
    q.memory_regions = {"umem"};
    i.rx.queues.push_back(q);
  }
  i.rx.flows = flows;
  if (tx_queue) {
    QueueConfig q;
    q.id = *tx_queue;
    q.batch_size = 64;
    q.ring_depth = 16;
    q.memory_regions = {"umem"};
    i.tx.queues.push_back(q);
    i.tx.destination = destination;
    i.tx.rate_pps = rate_pps;
  }
  c.interfaces.push_back(i);
  return c;
}

KernelReceiver::KernelReceiver(const std::string& host, uint16_t port) : sock_(Socket::udp_bound(host, port)) {
  const int size = 16 << 20;
  setsockopt(sock_.fd(), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
}

std::vector<Bytes> KernelReceiver::receive(size_t count, std::chrono::milliseconds timeout,
                                           std::chrono::milliseconds settle) {
  std::vector<Bytes> got;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool settling = false;
  Bytes buf(65536);
  while (true) {
    const auto now = std::chrono::steady_clock::now();
    if (!settling && got.size() >= count) {
      settling = true;
      deadline = now + settle;
    }
    if (now >= deadline) break;
    pollfd p{sock_.fd(), POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    if (poll(&p, 1, static_cast<int>(std::max<long>(1, left))) <= 0) continue;
    const ssize_t n = recv(sock_.fd(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n >= 0) got.emplace_back(buf.begin(), buf.begin() + n);
  }
  return got;
}

size_t send_sequence(TxQueue& q, uint64_t first, size_t count, size_t size) {
  std::vector<Bytes> payloads;
  payloads.reserve(count);
  for (size_t i = 0; i < count; ++i) payloads.push_back(make_payload(first + i, size));
  return send_payloads(q, payloads, std::chrono::milliseconds(20000));
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
  lab.exec_in(side.ns, {"ip", "-o", "link", "show", "dev", side.veth}, &out);
  return out.find("prog/xdp") != std::string::npos || out.find(" xdp") != std::string::npos;
}

}  // namespace ndqtest
