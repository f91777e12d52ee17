// What the checks look at: the config's NICs, cores and memory, and the machine's GPUs,
// resolved once from the config and the (live or recorded) /sys and /proc.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "check/cuda_driver.h"
#include "check/engine_needs.h"
#include "check/sys_values.h"
#include "check/sysfs_reader.h"
#include "netdaq/config.h"

namespace netdaq::cli::check {

// A queue's place on the machine, for NUMA and IRQ checks.
struct QueueRef {
  std::string name;  // "receiver/rx0"
  bool rx = true;
  int cpu_core = -1;
  std::vector<const MemoryRegionConfig*> regions;
};

// One netdev the config uses (several interfaces may share one).
struct NicTarget {
  std::string netdev;                   // "eth1"
  std::string pci;                      // "0000:3b:00.0", "" for virtual devices
  std::set<std::string> engines;        // engines of the interfaces on it (for messages)
  EngineNeeds needs;                    // what they need of it, together
  std::vector<std::string> interfaces;  // config interface names
  std::string ip;                       // address the config binds or sends from (IPv4), if any
  std::set<uint16_t> rx_ids, tx_ids;    // queue ids the config opens on it
  std::vector<QueueRef> queues;
  uint32_t largest_packet = 0;  // bytes of the largest IP packet the config puts on it
  uint32_t rdma_mtu = 0;        // rdma engine: the path MTU asked for
};

// A config interface no netdev was found for, and why.
struct Unresolved {
  std::string interface;
  std::string why;
};

struct GpuTarget {
  int index = -1;    // CUDA device index (PCI order when only sysfs saw it)
  std::string name;  // from the driver, or "NVIDIA GPU"
  std::string bdf;
  int numa = -1;
  uint64_t bar1 = 0;                 // bytes
  uint64_t memory = 0;               // bytes, from the driver
  std::optional<bool> dmabuf, gdr;   // driver attributes (live only)
  uint64_t device_region_bytes = 0;  // the config's device regions on this GPU
};

struct CheckContext {
  const SysReader* sys = nullptr;
  const Config* cfg = nullptr;  // nullptr: no config, the machine in general
  std::string config_name;
  std::vector<NicTarget> nics;
  std::vector<Unresolved> unresolved;
  CpuSet cores;  // every cpu_core a queue pins
  std::vector<GpuTarget> gpus;
  CudaDriverInfo driver;  // live only (empty with --root)
  bool gpu_built_in = false;
  bool rdma_built_in = false;
  EngineNeeds needs;  // of every interface of the config

  int numa_of_cpu(int cpu) const;
  uint64_t region_bytes(const MemoryRegionConfig& r) const;
};

// Resolves the config's interfaces to netdevs (general check without cfg: every NIC that is up
// but lo) and finds the GPUs (sysfs; with a live root also the driver).
CheckContext make_context(const SysReader& sys, const Config* cfg, std::string config_name);

}  // namespace netdaq::cli::check
