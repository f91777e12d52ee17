#include "dpdk_util.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ndqtest {

using namespace netdaq;

bool dpdk_built() {
  const auto e = engines();
  return std::find(e.begin(), e.end(), "dpdk") != e.end();
}

Config DpdkIface::build() const {
  Config c;
  c.log.level = log_level;
  c.options.get<EalConfig>() = eal;
  // Where DPDK's drivers are not in their standard place (a carried DPDK on the GPU machine).
  if (const char* drivers = std::getenv("NETDAQ_DPDK_DRIVERS")) c.options.get<EalConfig>().args.push_back(std::string("-d") + drivers);
  InterfaceConfig i;
  i.name = "d0";
  i.engine = "dpdk";
  i.address = device;
  i.options.get<DpdkOptions>() = dpdk;
  // Queue `id` with a host region of its own named after it (rx0, tx0, ...).
  auto queue = [&](const char* dir, unsigned id) {
    const std::string region = dir + std::to_string(id);
    c.memory_regions.push_back(MemoryRegionConfig{region, MemoryKind::host, 2048, num_bufs});
    QueueConfig q;
    q.id = static_cast<uint16_t>(id);
    q.batch_size = batch;
    q.ring_depth = 16;
    q.memory_regions = {region};
    return q;
  };
  for (unsigned id = 0; id < rx_queues; ++id) {
    i.rx.queues.push_back(queue("rx", id));
    i.rx.queues.back().mode = mode;
  }
  i.rx.flows = flows;
  for (unsigned id = 0; id < tx_queues; ++id) i.tx.queues.push_back(queue("tx", id));
  if (tx_queues) i.tx.destination = destination;
  c.interfaces.push_back(i);
  return c;
}

std::vector<std::string> dpdk_files(const std::string& prefix) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  std::error_code ec;
  for (const char* dir : {"/var/run/dpdk", "/run/dpdk", "/dev/hugepages", "/mnt/huge"})
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().filename().string().rfind(prefix, 0) == 0) found.push_back(e.path().string());
  return found;
}

}  // namespace ndqtest
