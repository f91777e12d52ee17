#include "rdma_lab.h"

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
  if (!dev) return 0;
  std::ifstream f(std::string("/sys/class/infiniband/") + dev + "/ports/1/hw_counters/" + counter);
  uint64_t v = 0;
  f >> v;
  return v;
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
