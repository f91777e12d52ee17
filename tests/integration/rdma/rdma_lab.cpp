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
  if (!dev) return 0;
  std::ifstream f(std::string("/sys/class/infiniband/") + dev + "/ports/1/hw_counters/" + counter);
  uint64_t v = 0;
  f >> v;
  return v;
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
