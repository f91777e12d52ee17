// Where GPUs and NICs sit: their PCIe paths (nearest common bridge, as nvidia-smi topo -m
// names it) and NUMA nodes, and queues whose core or GPU memory sits on another node.
#include <algorithm>

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
  return out.results();
}

}  // namespace netdaq::cli::check
