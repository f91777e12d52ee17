// Where GPUs and NICs sit: their PCIe paths (nearest common bridge, as nvidia-smi topo -m
// names it) and NUMA nodes, queues whose core or GPU memory sits on another node, and each
// NIC's and GPU's PCIe Max Payload Size and Max Read Request Size (config space).
#include <algorithm>
#include <cstdio>

#include "check/checks.h"

namespace netdaq::cli::check {

namespace {

struct PciPath {
  std::string root;                // "pci0000:00": the host bridge (root complex)
  std::vector<std::string> chain;  // root port first, the device last
};

std::optional<PciPath> pci_path(const SysReader& sys, const std::string& bdf) {
  const auto real = sys.realpath("/sys/bus/pci/devices/" + bdf);
  if (!real) return std::nullopt;
  PciPath p;
  p.chain = pci_chain(*real);
  if (p.chain.empty()) return std::nullopt;
  const auto at = real->find("/pci");
  if (at != std::string::npos) p.root = real->substr(at + 1, real->find('/', at + 1) - at - 1);
  return p;
}

int numa_of_pci(const SysReader& sys, const std::string& bdf) {
  return static_cast<int>(sys.read_int("/sys/bus/pci/devices/" + bdf + "/numa_node").value_or(-1));
}

std::string chain_text(const PciPath& p) {
  std::string s = p.root;
  for (const auto& b : p.chain) s += " > " + b;
  return s;
}

// The nearest common bridge of two devices, best first.
void pair_check(const CheckContext& c, const GpuTarget& g, const NicTarget& n, Checks& out) {
  const std::string subject = "gpu " + std::to_string(g.index) + " <-> " + (n.netdev.empty() ? n.pci : n.netdev);
  const char* why =
      "GPUDirect RDMA moves every packet from the NIC to the GPU across this path: behind one PCIe "
      "switch it never touches the CPU; through the root complex it is slower; across the CPU "
      "interconnect (SYS) it collapses, and NCCL turns GPUDirect off there";
  const auto a = pci_path(*c.sys, g.bdf), b = pci_path(*c.sys, n.pci);
  if (!a || !b) {
    out.add("topology.pcie", subject, Status::skip, "no sysfs PCI path for " + (!a ? g.bdf : n.pci), why);
    return;
  }
  size_t common = 0;
  while (common < a->chain.size() - 1 && common < b->chain.size() - 1 && a->chain[common] == b->chain[common]) ++common;
  const std::string paths = "; " + chain_text(*a) + " | " + chain_text(*b);
  const int na = numa_of_pci(*c.sys, g.bdf), nb = numa_of_pci(*c.sys, n.pci);
  const char* fix =
      "put the NIC and the GPU behind one PCIe switch (or at least one CPU socket): move a card, or "
      "pick the GPU nearest the NIC in the config (nvidia-smi topo -m)";
  if (common >= 2)
    out.add("topology.pcie", subject, Status::pass, "same PCIe switch (PIX/PXB)" + paths, why);
  else if (common == 1)
    out.add("topology.pcie", subject, Status::pass, "same root port, " + a->chain[0] + " (PXB)" + paths, why);
  else if (a->root == b->root)
    out.add("topology.pcie", subject, Status::warn,
            "same root complex " + a->root + ", different root ports (PHB)" + paths, why, fix);
  else if (na >= 0 && na == nb)
    out.add("topology.pcie", subject, Status::warn,
            "different host bridges on NUMA node " + std::to_string(na) + " (NODE)" + paths, why, fix);
  else
    out.add(
        "topology.pcie", subject, Status::warn,
        "across the CPU interconnect: NUMA node " + std::to_string(na) + " vs " + std::to_string(nb) + " (SYS)" + paths,
        why, fix);
}

std::string node_cpus(const CheckContext& c, int node) {
  return c.sys->read("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist").value_or("?");
}

void numa_check(const CheckContext& c, const NicTarget& n, Checks& out) {
  const std::string subject = n.netdev.empty() ? n.pci : n.netdev;
  const char* why =
      "a core or buffer on another NUMA node than its NIC sends every packet across the CPU "
      "interconnect: lower throughput, more latency, more drops";
  if (n.pci.empty()) {
    out.add("topology.numa", subject, Status::skip, "virtual device: no PCI device, no NUMA node", why);
    return;
  }
  const int node = numa_of_pci(*c.sys, n.pci);
  if (node < 0) {
    out.add("topology.numa", subject, Status::pass, n.pci + ": no NUMA node (single-node machine)", why);
    return;
  }
  std::vector<std::string> off;
  std::string fix;
  for (const auto& q : n.queues) {
    if (q.cpu_core >= 0) {
      const int cn = c.numa_of_cpu(q.cpu_core);
      if (cn >= 0 && cn != node) {
        off.push_back(q.name + " polls on core " + std::to_string(q.cpu_core) + " (node " + std::to_string(cn) + ")");
        fix += (fix.empty() ? "" : "; ") + std::string("set cpu_core of ") + q.name + " to a core of node " +
               std::to_string(node) + " (" + node_cpus(c, node) + ")";
      }
    }
    for (const auto* r : q.regions) {
      if (r->kind == MemoryKind::host || r->kind == MemoryKind::huge) continue;  // placed by the kernel on first touch
      const int gi = std::max(r->gpu, 0);
      for (const auto& g : c.gpus)
        if (g.index == gi && g.numa >= 0 && g.numa != node) {
          off.push_back(q.name + " uses region '" + r->name + "' on gpu " + std::to_string(gi) + " (node " +
                        std::to_string(g.numa) + ")");
          fix += (fix.empty() ? "" : "; ") + std::string("give region '") + r->name + "' a GPU on node " +
                 std::to_string(node) + " (gpu: N)";
        }
    }
  }
  std::string what = n.pci + " on NUMA node " + std::to_string(node);
  if (off.empty()) {
    out.add("topology.numa", subject, Status::pass,
            what + (n.queues.empty() ? ""
                                     : "; every pinned core and GPU "
                                       "region of its queues too"),
            why);
    return;
  }
  for (const auto& o : off) what += "; " + o;
  out.add("topology.numa", subject, Status::warn, what, why, fix);
}

constexpr uint32_t kNicMrrs = 4096;  // NVIDIA's (DAQIRI's) recommendation for ConnectX: the largest there is

std::string hex16(uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", v);
  return buf;
}

std::string hex_offset(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", v);
  return buf;
}

// The PCI Express capability of `dir`'s config space, or why it cannot be judged.
std::optional<PcieConfig> read_pcie(const SysReader& sys, const std::string& dir, std::string* why) {
  const auto bytes = sys.read_bytes(dir + "/config");
  if (!bytes) return *why = "no PCI config space (" + dir + "/config)", std::nullopt;
  const PcieConfig p = parse_pcie_config(*bytes);
  if (!p.complete)
    return *why = "config space reads " + std::to_string(bytes->size()) +
                  " bytes: beyond the first 64 it needs root (CAP_SYS_ADMIN); run netdaq check as root",
           std::nullopt;
  if (!p.express)
    return *why = "a conventional PCI device (no PCI Express capability): MPS and MRRS do not apply", std::nullopt;
  return p;
}

// MPS and MRRS of one device (a NIC judges MRRS too) against what it and its upstream bridge support.
void payload_check(const CheckContext& c, const std::string& subject, const std::string& bdf, bool nic,
                   Checks& out) {
  const char* why =
      "Max Payload Size caps each TLP the device writes (every packet the NIC DMAs lands as TLPs of at most "
      "MPS bytes; with ~24 bytes of TLP overhead each, 128-byte payloads use ~84% of the link, 256-byte ~91%); "
      "Max Read Request Size caps each read it issues (the NIC reads tx packets and descriptors: NVIDIA "
      "recommends 4096 for ConnectX). MPS must not exceed what the upstream bridge supports and runs";
  const std::string dir = "/sys/bus/pci/devices/" + bdf;
  std::string why_not;
  const auto dev = read_pcie(*c.sys, dir, &why_not);
  if (!dev) {
    out.add("topology.pcie_payload", subject, Status::skip, bdf + ": " + why_not, why);
    return;
  }
  // The upstream bridge: the parent directory of the device's real path, when that is a PCI function.
  std::optional<PcieConfig> up;
  std::string up_bdf, up_why;
  if (const auto real = c.sys->realpath(dir)) {
    const auto chain = pci_chain(*real);
    if (chain.size() >= 2) {
      up_bdf = chain[chain.size() - 2];
      up = read_pcie(*c.sys, real->substr(0, real->rfind('/')), &up_why);
    }
  }
  std::string what = bdf + ": MPS " + std::to_string(dev->mps()) + " (supports " +
                     std::to_string(dev->mps_supported()) + "), MRRS " + std::to_string(dev->mrrs());
  uint32_t target = dev->mps_supported();
  if (up) {
    target = std::min(target, up->mps_supported());
    what += "; upstream bridge " + up_bdf + ": MPS " + std::to_string(up->mps()) + " (supports " +
            std::to_string(up->mps_supported()) + ")";
  } else if (!up_bdf.empty()) {
    what += "; upstream bridge " + up_bdf + ": " + up_why;
  } else {
    what += "; on the root bus (no upstream bridge)";
  }
  target = std::min(target, 4096u);
  // Unless the bridge's own setting is known, only MRRS is judged: MPS above the bridge's breaks the link.
  const bool judge_mps = up.has_value() || up_bdf.empty();
  const uint32_t mps_to = judge_mps ? std::min(target, up ? up->mps() : target) : dev->mps();
  const bool mps_low = judge_mps && dev->mps() < target;
  const bool mrrs_low = nic && dev->mrrs() < kNicMrrs;
  if (!mps_low && !mrrs_low) {
    out.add("topology.pcie_payload", subject, Status::pass, what, why);
    return;
  }
  std::vector<std::string> bad;
  if (mps_low)
    bad.push_back("MPS " + std::to_string(dev->mps()) + " < " + std::to_string(target) + " the path supports");
  if (mrrs_low) bad.push_back("MRRS " + std::to_string(dev->mrrs()) + " < " + std::to_string(kNicMrrs));
  for (size_t i = 0; i < bad.size(); ++i) what += (i ? ", " : ": ") + bad[i];
  std::string fix;
  const uint32_t mrrs_to = mrrs_low ? kNicMrrs : dev->mrrs();
  if (mps_to != dev->mps() || mrrs_to != dev->mrrs()) {
    const uint16_t v = pcie_devctl_with(dev->devctl, mps_to, mrrs_to);
    fix = "setpci -s " + bdf + " CAP_EXP+8.w=" + hex16(v) + " (Device Control at config offset " +
          hex_offset(dev->cap + 8u) + ", read as 0x" + hex16(dev->devctl) + ": bits 14:12 MRRS " +
          std::to_string(pcie_size_code(dev->mrrs())) + " -> " + std::to_string(pcie_size_code(mrrs_to)) + " = " +
          std::to_string(mrrs_to) + " bytes, bits 7:5 MPS " + std::to_string(pcie_size_code(dev->mps())) + " -> " +
          std::to_string(pcie_size_code(mps_to)) + " = " + std::to_string(mps_to) +
          " bytes (size = 128 << field), every other bit as read; best with the port idle); setpci does not "
          "survive a reboot (nor a reset of the device): run it again from a boot-time unit after the driver loads";
  }
  if (mps_low && up && up->mps() < target)
    fix += std::string(fix.empty() ? "" : "; ") + "the bridge " + up_bdf + " itself runs MPS " +
           std::to_string(up->mps()) + ": boot with pci=pcie_bus_safe (the kernel gives every device the largest MPS "
           "all devices below its root port support)";
  out.add("topology.pcie_payload", subject, Status::warn, what, why, fix);
}

}  // namespace

std::vector<CheckResult> topology_checks(const CheckContext& c) {
  Checks out("topology");
  const bool any_pci_nic = std::any_of(c.nics.begin(), c.nics.end(), [](const auto& n) { return !n.pci.empty(); });
  if (c.gpus.empty() || !any_pci_nic)
    out.add("topology.pcie", "", Status::skip, c.gpus.empty() ? "no NVIDIA GPU" : "no PCI NIC to pair with a GPU",
            "the GPU-NIC path matters for GPUDirect");
  for (const auto& g : c.gpus)
    for (const auto& n : c.nics)
      if (!n.pci.empty()) pair_check(c, g, n, out);
  if (c.nics.empty()) out.add("topology.numa", "", Status::skip, "no NIC to check", "NUMA placement of queues");
  for (const auto& n : c.nics) numa_check(c, n, out);
  for (const auto& n : c.nics) {
    const std::string subject = n.netdev.empty() ? n.pci : n.netdev;
    if (n.pci.empty())
      out.add("topology.pcie_payload", subject, Status::skip, "virtual device: no PCIe link",
              "PCIe Max Payload Size and Max Read Request Size");
    else
      payload_check(c, subject, n.pci, true, out);
  }
  for (const auto& g : c.gpus)
    payload_check(c, "gpu " + std::to_string(g.index) + " (" + g.bdf + ")", g.bdf, false, out);
  return out.results();
}

}  // namespace netdaq::cli::check
