#include "check/nvml.h"

#include <dlfcn.h>

#include <cstdio>
#include <utility>

#include "check/dl_symbol.h"

namespace netdaq::cli::check {

namespace {

// NVML values (nvml.h), spelled out: the CLI is compiled without the CUDA headers.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM

struct Api {
  void* lib = nullptr;
  std::string why;
  nvmlReturn_t (*nvmlInit)() = nullptr;
  nvmlReturn_t (*nvmlShutdown)() = nullptr;
  const char* (*nvmlErrorString)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByPciBusId)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPersistenceMode)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetClockInfo)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMaxClockInfo)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetApplicationsClock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetReasons)(nvmlDevice_t, unsigned long long*) = nullptr;
};

const Api& api() {
  static const Api a = [] {
    Api x;
    x.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!x.lib) {
      x.why = "no NVML: libnvidia-ml.so.1 cannot be loaded (it comes with the NVIDIA driver)";
      return x;
    }
    const bool ok = dl_symbol(x.lib, "nvmlInit_v2", x.nvmlInit) && dl_symbol(x.lib, "nvmlShutdown", x.nvmlShutdown) &&
                    dl_symbol(x.lib, "nvmlErrorString", x.nvmlErrorString) &&
                    dl_symbol(x.lib, "nvmlDeviceGetHandleByPciBusId_v2", x.nvmlDeviceGetHandleByPciBusId) &&
                    dl_symbol(x.lib, "nvmlDeviceGetPersistenceMode", x.nvmlDeviceGetPersistenceMode) &&
                    dl_symbol(x.lib, "nvmlDeviceGetClockInfo", x.nvmlDeviceGetClockInfo) &&
                    dl_symbol(x.lib, "nvmlDeviceGetMaxClockInfo", x.nvmlDeviceGetMaxClockInfo) &&
                    dl_symbol(x.lib, "nvmlDeviceGetApplicationsClock", x.nvmlDeviceGetApplicationsClock);
    if (!ok) {
      x.why = "libnvidia-ml.so.1 lacks an NVML call netdaq check needs (driver too old)";
      x.nvmlInit = nullptr;
      return x;
    }
    // Renamed in driver 535 (the old name stays as an alias).
    if (!dl_symbol(x.lib, "nvmlDeviceGetCurrentClocksEventReasons", x.nvmlDeviceGetReasons))
      (void)dl_symbol(x.lib, "nvmlDeviceGetCurrentClocksThrottleReasons", x.nvmlDeviceGetReasons);
    return x;
  }();
  return a;
}

std::string error_name(nvmlReturn_t r) {
  const char* s = api().nvmlErrorString ? api().nvmlErrorString(r) : nullptr;
  return s ? s : "nvmlReturn " + std::to_string(r);
}

template <class T, class F, class... Args>
std::optional<T> get(F f, Args... args) {
  T v{};
  if (!f || f(args..., &v) != 0) return std::nullopt;
  return v;
}

}  // namespace

NvmlInfo query_nvml(const std::vector<std::string>& bdfs) {
  NvmlInfo info;
  const Api& a = api();
  if (!a.nvmlInit) {
    info.why = a.why;
    return info;
  }
  if (const nvmlReturn_t r = a.nvmlInit(); r != 0) {
    info.why = "nvmlInit failed: " + error_name(r);
    return info;
  }
  info.usable = true;
  for (const auto& bdf : bdfs) {
    NvmlGpu g;
    g.bdf = bdf;
    nvmlDevice_t dev = nullptr;
    if (const nvmlReturn_t r = a.nvmlDeviceGetHandleByPciBusId(bdf.c_str(), &dev); r != 0) {
      g.why = "nvmlDeviceGetHandleByPciBusId(" + bdf + "): " + error_name(r);
      info.gpus.push_back(std::move(g));
      continue;
    }
    if (const auto pm = get<int>(a.nvmlDeviceGetPersistenceMode, dev)) g.persistence = *pm != 0;
    g.sm = get<unsigned>(a.nvmlDeviceGetClockInfo, dev, kClockSm);
    g.sm_max = get<unsigned>(a.nvmlDeviceGetMaxClockInfo, dev, kClockSm);
    g.mem = get<unsigned>(a.nvmlDeviceGetClockInfo, dev, kClockMem);
    g.mem_max = get<unsigned>(a.nvmlDeviceGetMaxClockInfo, dev, kClockMem);
    g.app_sm = get<unsigned>(a.nvmlDeviceGetApplicationsClock, dev, kClockSm);
    g.app_mem = get<unsigned>(a.nvmlDeviceGetApplicationsClock, dev, kClockMem);
    if (const auto r = get<unsigned long long>(a.nvmlDeviceGetReasons, dev)) g.reasons = *r;
    info.gpus.push_back(std::move(g));
  }
  a.nvmlShutdown();
  return info;
}

std::string clock_reasons_text(uint64_t reasons) {
  // nvmlClocksEventReason* (nvml.h).
  static const std::pair<uint64_t, const char*> kNames[] = {
      {0x1, "GpuIdle"},           {0x2, "ApplicationsClocksSetting"}, {0x4, "SwPowerCap"},
      {0x8, "HwSlowdown"},        {0x10, "SyncBoost"},                {0x20, "SwThermalSlowdown"},
      {0x40, "HwThermalSlowdown"}, {0x80, "HwPowerBrakeSlowdown"},    {0x100, "DisplayClockSetting"}};
  std::string out;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (reasons & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  }
  if (reasons & ~known) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reasons & ~known));
    out += (out.empty() ? "" : ", ") + std::string(buf);
  }
  return out.empty() ? "none" : out;
}

}  // namespace netdaq::cli::check
