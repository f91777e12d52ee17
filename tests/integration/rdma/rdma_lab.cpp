#include "rdma_lab.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace ndqtest {

std::optional<Lab> lab() {
  const char* a = std::getenv("NDQ_RDMA_IP0");
  const char* b = std::getenv("NDQ_RDMA_IP1");
  if (!a || !b) return std::nullopt;
  return Lab{a, b};
}

uint64_t device_counter(const char* device_env, const std::string& counter) {
  const char* dev = std::getenv(device_env);
  if (!dev) {
    ADD_FAILURE() << device_env << " is unset: no lab device to read " << counter << " of";
    return 0;
  }
  const std::string path = std::string("/sys/class/infiniband/") + dev + "/ports/1/hw_counters/" + counter;
  std::ifstream f(path);
  uint64_t v = 0;
  if (!(f >> v)) ADD_FAILURE() << "cannot read " << path;
  return v;
}

Wire::Counts Wire::now() {
  return {device_counter("NDQ_RDMA_DEV0", "sent_pkts"), device_counter("NDQ_RDMA_DEV0", "rcvd_pkts"),
          device_counter("NDQ_RDMA_DEV1", "sent_pkts"), device_counter("NDQ_RDMA_DEV1", "rcvd_pkts")};
}

::testing::AssertionResult Wire::crossed(uint64_t to_dev1, uint64_t to_dev0) const {
  const Counts c = now();
  const uint64_t sent0 = c.sent0 - start_.sent0, rcvd0 = c.rcvd0 - start_.rcvd0;
  const uint64_t sent1 = c.sent1 - start_.sent1, rcvd1 = c.rcvd1 - start_.rcvd1;
  const std::string counts = "device 0 sent " + std::to_string(sent0) + " / received " + std::to_string(rcvd0) +
                             " packets, device 1 sent " + std::to_string(sent1) + " / received " +
                             std::to_string(rcvd1) + " (sent_pkts / rcvd_pkts)";
  if (sent0 >= to_dev1 && rcvd1 >= to_dev1 && sent1 >= to_dev0 && rcvd0 >= to_dev0)
    return ::testing::AssertionSuccess() << counts;
  return ::testing::AssertionFailure() << "not over the veth: " << to_dev1 << " messages from device 0 to 1 and "
                                       << to_dev0 << " from 1 to 0 expected, " << counts;
}

size_t queue_pairs_of_type(const std::string& type) {
  FILE* f = ::popen("rdma resource show qp 2>&1", "r");
  if (!f) return 0;
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  ::pclose(f);
  size_t count = 0;
  const std::string key = " type " + type + " ";
  for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + 1)) ++count;
  return count;
}

std::string error_of(const netdaq::Config& c) {
  try {
    netdaq::Session s(c);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::vector<Message> collect_messages(netdaq::RxQueue& q, size_t n, std::chrono::seconds limit) {
  std::vector<Message> got;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (got.size() < n && std::chrono::steady_clock::now() < deadline) {
    netdaq::RxBurst b = q.poll();
    for (size_t i = 0; i < b.size(); ++i) got.push_back({bytes_of(b[i]), b[i].immediate()});
  }
  return got;
}

}  // namespace ndqtest
