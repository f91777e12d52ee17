#include "engines/dpdk/hugepages.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "netdaq/status.h"

namespace netdaq::detail::dpdk {

namespace {
uint64_t read_number(const std::filesystem::path& p) {
  std::ifstream in(p);
  uint64_t v = 0;
  in >> v;
  return v;
}
}  // namespace

void check_hugepages(uint32_t memory_mb) {
  namespace fs = std::filesystem;
  uint64_t free_mb = 0;
  std::string sizes;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator("/sys/kernel/mm/hugepages", ec)) {
    const std::string name = d.path().filename().string();  // hugepages-2048kB
    const uint64_t kb = std::stoull(name.substr(name.find('-') + 1));
    const uint64_t total = read_number(d.path() / "nr_hugepages"), free = read_number(d.path() / "free_hugepages");
    free_mb += free * kb / 1024;
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(kb) + " kB pages: " + std::to_string(total) + " reserved, " +
             std::to_string(free) + " free";
  }
  if (free_mb >= memory_mb) return;
  const uint64_t pages = (memory_mb + 1) / 2 + 64;
  throw Error(Errc::resource,
              "eal.hugepages: DPDK needs " + std::to_string(memory_mb) + " MiB of hugepages (eal.memory_mb), " +
                  std::to_string(free_mb) + " MiB are free (" + (sizes.empty() ? "this kernel has no hugepages" : sizes) +
                  "). Reserve them as root: echo " + std::to_string(pages) +
                  " > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages (to keep them after a reboot: "
                  "vm.nr_hugepages = " + std::to_string(pages) +
                  " in /etc/sysctl.d/netdaq.conf), or set eal.hugepages: false to run on plain memory (slower; "
                  "virtual devices only)");
}

}  // namespace netdaq::detail::dpdk
