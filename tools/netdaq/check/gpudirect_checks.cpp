// GPUDirect RDMA: the NVIDIA driver (open modules for dma-buf), nvidia_peermem, each GPU's
// attributes and BAR1, and an active probe: a device allocation exported as a dma-buf and
// registered on every RDMA device with ibv_reg_dmabuf_mr, the test NCCL trusts; and the GPU's
// clocks and persistence mode (NVML).
#include <algorithm>

#include "check/checks.h"
#include "check/nvml.h"
#include "check/verbs_probe.h"

namespace netdaq::cli::check {

namespace {

constexpr int kDmabufMinDriver = 515;
const char* const kOpenModulesFix =
    "install the open GPU kernel modules >= 515 (Turing or newer GPUs): apt-get install nvidia-open "
    "(NVIDIA's CUDA repository), or sh NVIDIA-Linux-x86_64-*.run -m=kernel-open; then reboot";
const char* const kPeermemFix =
    "modprobe nvidia_peermem && echo nvidia_peermem > /etc/modules-load.d/nvidia-peermem.conf";

// GPUDirect failures fail when the config puts packets in GPU memory (or no config: the
// machine is checked for GPUDirect), and only warn for configs that never use it.
Status gpudirect_severity(const CheckContext& c) {
  if (!c.cfg) return Status::fail;
  const bool device = std::any_of(c.cfg->memory_regions.begin(), c.cfg->memory_regions.end(),
                                  [](const auto& r) { return r.kind == MemoryKind::device; });
  return device ? Status::fail : Status::warn;
}

std::string gpu_subject(const GpuTarget& g) { return "gpu " + std::to_string(g.index) + " (" + g.bdf + ")"; }

// Without /proc/driver/nvidia (a container): the module's version, and its taint flags:
// the proprietary module taints with P, the open one only with O (out of tree).
std::optional<NvidiaDriver> module_driver(const SysReader& sys) {
  const auto v = sys.read("/sys/module/nvidia/version");
  if (!v) return std::nullopt;
  auto d = parse_nvidia_version(*v);
  if (d) d->open = sys.read("/sys/module/nvidia/taint").value_or("P").find('P') == std::string::npos;
  return d;
}

bool peermem_loaded(const SysReader& sys) {
  return sys.read("/sys/module/nvidia_peermem/initstate").value_or("") == "live";
}

void driver_check(const CheckContext& c, const std::optional<NvidiaDriver>& drv, Checks& out) {
  const bool proc = c.sys->exists("/proc/driver/nvidia/version") || drv;
  if (c.gpus.empty() && !proc) {
    out.add("gpu.driver", "", Status::skip, "no NVIDIA GPU on the PCI bus (vendor 0x10de) and no NVIDIA driver loaded",
            "GPUDirect needs an NVIDIA GPU");
    return;
  }
  if (!proc && !c.driver.usable) {
    out.add("gpu.driver", "", Status::fail,
            std::to_string(c.gpus.size()) +
                " NVIDIA GPU(s) on the PCI bus but no NVIDIA kernel driver (no "
                "/proc/driver/nvidia/version)",
            "without the driver no GPU memory can be allocated, let alone reached by the NIC", kOpenModulesFix);
    return;
  }
  if (!drv) {
    out.add("gpu.driver", "", Status::pass,
            "driver loaded (CUDA " + std::to_string(c.driver.version / 1000) + "." +
                std::to_string(c.driver.version % 1000 / 10) + "); /proc/driver/nvidia/version not readable here",
            "dma-buf export needs the open kernel modules >= 515");
    return;
  }
  const std::string what = "NVIDIA " + drv->version + ", " +
                           (drv->open ? "open kernel module" : "proprietary kernel module") +
                           (c.driver.usable || !c.sys->live() ? "" : "; user-space driver: " + c.driver.why);
  const char* why =
      "dma-buf (ibv_reg_dmabuf_mr on an exported GPU allocation: no extra module) needs the open kernel "
      "modules >= 515; the proprietary module leaves only nvidia_peermem";
  if (drv->open && drv->major >= kDmabufMinDriver) {
    if (c.sys->live() && !c.driver.usable)
      out.add("gpu.driver", "", Status::warn, what, "the kernel module is loaded but libcuda.so.1 is not usable",
              "apt-get install the user-space driver of the same version (libcuda1 / nvidia-driver-cuda)");
    else
      out.add("gpu.driver", "", Status::pass, what + " (dma-buf export available)", why);
  } else {
    out.add("gpu.driver", "", Status::warn,
            what + (drv->open ? " older than 515" : "") + ": GPU memory cannot be exported as a dma-buf", why,
            kOpenModulesFix);
  }
}

void peermem_check(const CheckContext& c, const std::optional<NvidiaDriver>& drv, Checks& out) {
  if (c.gpus.empty()) {
    out.add("gpu.peermem", "", Status::skip, "no NVIDIA GPU", "nvidia_peermem lets RDMA NICs pin GPU memory");
    return;
  }
  const char* why =
      "nvidia_peermem lets the NIC driver pin GPU memory (ibv_reg_mr on a device pointer); it is the only "
      "GPUDirect RDMA path when dma-buf is unavailable";
  const bool dmabuf = drv && drv->open && drv->major >= kDmabufMinDriver;
  if (peermem_loaded(*c.sys))
    out.add("gpu.peermem", "", Status::pass, "nvidia_peermem loaded", why);
  else if (dmabuf)
    out.add("gpu.peermem", "", Status::pass, "nvidia_peermem not loaded; not needed: the driver exports dma-bufs", why);
  else
    out.add("gpu.peermem", "", gpudirect_severity(c),
            "nvidia_peermem not loaded and the driver cannot export dma-bufs: no GPUDirect RDMA path", why,
            kPeermemFix + std::string(" (or install the open kernel modules >= 515 for dma-buf)"));
}

void attribute_checks(const CheckContext& c, const GpuTarget& g, Checks& out) {
  const char* why =
      "CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: the GPU can export its memory as a dma-buf; "
      "GPU_DIRECT_RDMA_SUPPORTED: it supports nvidia_p2p (peermem)";
  if (!c.sys->live()) {
    out.add("gpu.attributes", gpu_subject(g), Status::skip, "snapshot (--root): device attributes need the live driver",
            why);
    return;
  }
  if (!c.driver.usable) {
    out.add("gpu.attributes", gpu_subject(g), Status::skip, c.driver.why, why);
    return;
  }
  auto yn = [](const std::optional<bool>& b) { return b ? (*b ? "yes" : "no") : "unknown"; };
  const std::string what = g.name + ": dma-buf " + yn(g.dmabuf) + ", GPUDirect RDMA " + yn(g.gdr);
  if (g.dmabuf.value_or(false))
    out.add("gpu.attributes", gpu_subject(g), Status::pass, what, why);
  else if (g.gdr.value_or(false))
    out.add("gpu.attributes", gpu_subject(g), peermem_loaded(*c.sys) ? Status::pass : Status::warn,
            what + "; only the nvidia_peermem path", why, kPeermemFix);
  else
    out.add("gpu.attributes", gpu_subject(g), gpudirect_severity(c), what + ": no GPUDirect RDMA on this GPU", why,
            kOpenModulesFix);
}

void bar1_check(const GpuTarget& g, Checks& out) {
  const char* why =
      "GPUDirect RDMA reaches GPU memory through the BAR1 window: only that much can be mapped for "
      "the NIC at once";
  const char* fix =
      "enable 'Above 4G Decoding' and 'Re-Size BAR' in the BIOS setup (nvidia-smi -q -d MEMORY shows "
      "BAR1); data-center GPUs then map all their memory";
  if (g.bar1 == 0) {
    out.add("gpu.bar1", gpu_subject(g), Status::skip,
            "BAR1 size unknown (no /sys/bus/pci/devices/" + g.bdf + "/resource)", why);
    return;
  }
  std::string what = "BAR1 " + bytes_text(g.bar1);
  if (g.memory) what += " for " + bytes_text(g.memory) + " of memory";
  if (g.device_region_bytes > g.bar1)
    out.add("gpu.bar1", gpu_subject(g), Status::fail,
            what + " < " + bytes_text(g.device_region_bytes) + " of device memory regions in the config", why, fix);
  else if (g.bar1 < (1ull << 30))
    out.add("gpu.bar1", gpu_subject(g), Status::warn, what + ": smaller than 1 GiB", why, fix);
  else
    out.add("gpu.bar1", gpu_subject(g), Status::pass, what, why);
}

void probe_check(const CheckContext& c, const GpuTarget& g, Checks& out) {
  const char* why =
      "the test NCCL trusts: export a GPU allocation as a dma-buf and register it on each RDMA device "
      "with ibv_reg_dmabuf_mr (EOPNOTSUPP: that NIC cannot write GPU memory by dma-buf)";
  auto skip = [&](const std::string& what) { out.add("gpu.dmabuf_probe", gpu_subject(g), Status::skip, what, why); };
  if (!c.sys->live()) return skip("snapshot (--root): the probe needs the live machine");
  if (!c.gpu_built_in) return skip("this netdaq was built without CUDA");
  if (!c.rdma_built_in) return skip("this netdaq was built without the rdma engine (libibverbs-dev, librdmacm-dev)");
  if (!c.driver.usable) return skip(c.driver.why);
  if (c.sys->list("/sys/class/infiniband").empty()) return skip("no RDMA device (/sys/class/infiniband is empty)");
  std::vector<DmabufRegistration> regs;
  std::string why_not;
  const bool exported = with_device_dmabuf(
      g.index, 2u << 20,
      [&](int fd, uint64_t va, size_t size) { regs = register_dmabuf_everywhere(fd, size, va, &why_not); }, &why_not);
  if (!exported) {
    out.add("gpu.dmabuf_probe", gpu_subject(g), gpudirect_severity(c), "dma-buf export failed: " + why_not, why,
            kOpenModulesFix);
    return;
  }
  if (regs.empty()) return skip(why_not);
  for (const auto& r : regs) {
    const std::string subject = gpu_subject(g) + " -> " + r.device;
    if (r.ok)
      out.add("gpu.dmabuf_probe", subject, Status::pass, "ibv_reg_dmabuf_mr of 2 MiB of GPU memory: OK", why);
    else
      out.add("gpu.dmabuf_probe", subject, gpudirect_severity(c), r.detail, why,
              r.unsupported ? "use a NIC whose driver maps dma-bufs (mlx5 on Linux >= 5.12, rdma-core >= 34; rxe and "
                              "siw never can), or load nvidia_peermem: " +
                                  std::string(kPeermemFix)
                            : std::string("check the device with ibv_devinfo -d ") + r.device);
  }
}

std::string mhz(const std::optional<unsigned>& v) { return v ? std::to_string(*v) : "?"; }

void clocks_check(const CheckContext& c, const GpuTarget& g, const NvmlInfo& nvml, Checks& out) {
  const char* why =
      "a GPU that drops to idle clocks (or unloads its driver state without persistence mode) between "
      "bursts takes milliseconds to come back: kernels that keep up with line rate at full clocks fall "
      "behind; applications clocks (or locked clocks) below the maximum cap every kernel";
  if (!c.sys->live()) {
    out.add("gpu.clocks", gpu_subject(g), Status::skip, "snapshot (--root): clocks need the live driver (NVML)", why);
    return;
  }
  if (!nvml.usable) {
    out.add("gpu.clocks", gpu_subject(g), Status::skip, nvml.why, why);
    return;
  }
  const auto it = std::find_if(nvml.gpus.begin(), nvml.gpus.end(), [&](const NvmlGpu& n) { return n.bdf == g.bdf; });
  if (it == nvml.gpus.end() || !it->why.empty()) {
    out.add("gpu.clocks", gpu_subject(g), Status::skip, it == nvml.gpus.end() ? "not asked" : it->why, why);
    return;
  }
  const NvmlGpu& n = *it;
  std::string what = "SM " + mhz(n.sm) + " of max " + mhz(n.sm_max) + " MHz, memory " + mhz(n.mem) + " of max " +
                     mhz(n.mem_max) + " MHz";
  if (n.app_sm || n.app_mem)
    what += "; applications clocks SM " + mhz(n.app_sm) + ", memory " + mhz(n.app_mem) + " MHz";
  else
    what += "; no applications clocks (not supported)";
  what += "; persistence mode " + std::string(n.persistence ? (*n.persistence ? "on" : "off") : "unknown");
  if (n.reasons) what += "; clock event reasons: " + clock_reasons_text(*n.reasons);
  std::vector<std::string> bad, fix;
  if (n.persistence && !*n.persistence) {
    bad.push_back("persistence mode off");
    fix.push_back("nvidia-smi -i " + g.bdf +
                  " -pm 1 (or, surviving a reboot: systemctl enable --now nvidia-persistenced)");
  }
  if (n.app_sm && n.sm_max && *n.app_sm < *n.sm_max) {
    bad.push_back("applications SM clock " + mhz(n.app_sm) + " < max " + mhz(n.sm_max) + " MHz");
    fix.push_back("nvidia-smi -i " + g.bdf + " -lgc " + mhz(n.sm_max) + " (locks the SM clock; -rgc undoes it), or " +
                  "nvidia-smi -i " + g.bdf + " -ac " + mhz(n.mem_max.has_value() ? n.mem_max : n.app_mem) + "," +
                  mhz(n.sm_max) + " (a pair nvidia-smi -q -d SUPPORTED_CLOCKS lists); neither survives a reboot");
  }
  if (bad.empty()) {
    out.add("gpu.clocks", gpu_subject(g), Status::pass, what, why);
    return;
  }
  std::string fixes;
  for (size_t i = 0; i < bad.size(); ++i) {
    what += (i ? ", " : ": ") + bad[i];
    fixes += (i ? "; " : "") + fix[i];
  }
  out.add("gpu.clocks", gpu_subject(g), Status::warn, what, why, fixes);
}

}  // namespace

std::vector<CheckResult> gpudirect_checks(const CheckContext& c) {
  Checks out("gpudirect");
  const auto version = c.sys->read("/proc/driver/nvidia/version");
  auto drv = version ? parse_nvidia_version(*version) : std::nullopt;
  if (!drv) drv = module_driver(*c.sys);
  driver_check(c, drv, out);
  peermem_check(c, drv, out);
  if (c.gpus.empty()) {
    const std::string why =
        "no NVIDIA GPU" + (c.sys->live() && !c.driver.usable ? " (" + c.driver.why + ")" : std::string());
    for (const char* name : {"gpu.attributes", "gpu.bar1", "gpu.clocks", "gpu.dmabuf_probe"})
      out.add(name, "", Status::skip, why, "per-GPU GPUDirect checks");
  }
  NvmlInfo nvml;
  if (c.sys->live() && !c.gpus.empty()) {
    std::vector<std::string> bdfs;
    for (const auto& g : c.gpus) bdfs.push_back(g.bdf);
    nvml = query_nvml(bdfs);
  }
  for (const auto& g : c.gpus) {
    attribute_checks(c, g, out);
    bar1_check(g, out);
    clocks_check(c, g, nvml, out);
    probe_check(c, g, out);
  }
  return out.results();
}

}  // namespace netdaq::cli::check
