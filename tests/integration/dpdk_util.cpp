#include "dpdk_util.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

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
  c.eal = eal;
  // Where DPDK's drivers are not in their standard place (a carried DPDK on the GPU machine).
  if (const char* drivers = std::getenv("NETDAQ_DPDK_DRIVERS")) c.eal.args.push_back(std::string("-d") + drivers);
  InterfaceConfig i;
  i.name = "d0";
  i.engine = "dpdk";
  i.address = device;
  i.dpdk = dpdk;
  for (unsigned id = 0; id < rx_queues; ++id) {
    const std::string region = "rx" + std::to_string(id);
    c.memory_regions.push_back(MemoryRegionConfig{region, MemoryKind::host, 2048, num_bufs});
    QueueConfig q;
    q.id = static_cast<uint16_t>(id);
    q.mode = mode;
    q.batch_size = batch;
    q.ring_depth = 16;
    q.memory_regions = {region};
    i.rx.queues.push_back(q);
  }
  i.rx.flows = flows;
  for (unsigned id = 0; id < tx_queues; ++id) {
    const std::string region = "tx" + std::to_string(id);
    c.memory_regions.push_back(MemoryRegionConfig{region, MemoryKind::host, 2048, num_bufs});
    QueueConfig q;
    q.id = static_cast<uint16_t>(id);
    q.batch_size = batch;
    q.ring_depth = 16;
    q.memory_regions = {region};
    i.tx.queues.push_back(q);
  }
  if (tx_queues) i.tx.destination = destination;
  c.interfaces.push_back(i);
  return c;
}

namespace {
const char* kNr = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
const char* kFree = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";
unsigned read_unsigned(const char* path) {
  std::ifstream in(path);
  unsigned v = 0;
  in >> v;
  return v;
}
}  // namespace

unsigned Hugepages::total() { return read_unsigned(kNr); }
unsigned Hugepages::free_pages() { return read_unsigned(kFree); }
void Hugepages::set_total(unsigned n) {
  std::ofstream out(kNr);
  out << n << "\n";
}

Hugepages::Hugepages(unsigned pages) {
  lock_fd_ = ::open("/run/netdaq-test-hugepages.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (lock_fd_ >= 0) flock(lock_fd_, LOCK_EX);
  before_ = total();
  const unsigned have = free_pages();
  if (have < pages) set_total(before_ + (pages - have));
  ok_ = free_pages() >= pages;
  if (!ok_)
    why_ = "cannot reserve " + std::to_string(pages) + " hugepages of 2 MiB (" + std::to_string(free_pages()) +
           " free after asking; memory too fragmented?)";
}

Hugepages::~Hugepages() {
  set_total(before_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
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
