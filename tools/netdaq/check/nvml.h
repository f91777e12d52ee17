// NVML (the library nvidia-smi uses), loaded with dlopen("libnvidia-ml.so.1") like the driver API
// (cuda_driver.h): GPU clocks, applications clocks, persistence mode and clock event reasons.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace netdaq::cli::check {

struct NvmlGpu {
  std::string bdf;
  std::string why;  // non-empty: NVML has no handle for this PCI address
  std::optional<bool> persistence;
  std::optional<unsigned> sm, sm_max, mem, mem_max;  // MHz: current and maximum clocks
  std::optional<unsigned> app_sm, app_mem;           // MHz: applications clocks (unsupported on GeForce)
  std::optional<uint64_t> reasons;                   // clock event (throttle) reasons, nvmlClocksEventReason* bits
};

struct NvmlInfo {
  bool usable = false;
  std::string why;  // why not usable (no libnvidia-ml.so.1, nvmlInit error)
  std::vector<NvmlGpu> gpus;  // one per asked PCI address, in order
};
// Initializes NVML, asks about each GPU by PCI address ("0000:3b:00.0") and shuts it down.
NvmlInfo query_nvml(const std::vector<std::string>& bdfs);

// "GpuIdle, SwPowerCap" for a reasons mask ("none" for 0).
std::string clock_reasons_text(uint64_t reasons);

}  // namespace netdaq::cli::check
