// CPU and kernel: isolated polling cores, frequency governor, NIC interrupts away from the
// polling cores, hugepages and the locked-memory limit for the config's regions,
// capabilities of the engines, IOMMU mode.
#include <algorithm>
#include <map>
#include <sstream>

#include "check/checks.h"

namespace netdaq::cli::check {

namespace {

constexpr int kCapNetAdmin = 12, kCapNetRaw = 13, kCapIpcLock = 14, kCapSysAdmin = 21, kCapBpf = 39;
constexpr uint64_t kHugePage = 2u << 20;

CpuSet online_cpus(const SysReader& sys) {
  return parse_cpu_list(sys.read("/sys/devices/system/cpu/online").value_or(""));
}

// isolcpus=[flags,]list: the flags (domain, managed_irq, nohz) come first.
CpuSet isolcpus_of(const std::string& v) {
  std::string list;
  std::stringstream s(v);
  for (std::string part; std::getline(s, part, ',');)
    if (!part.empty() && std::isdigit(static_cast<unsigned char>(part[0]))) list += (list.empty() ? "" : ",") + part;
  return parse_cpu_list(list);
}

CpuSet missing(const CpuSet& want, const CpuSet& have) {
  CpuSet m;
  for (int c : want)
    if (!have.count(c)) m.insert(c);
  return m;
}

void isolation_check(const CheckContext& c, Checks& out) {
  const auto cmdline = parse_cmdline(c.sys->read("/proc/cmdline").value_or(""));
  auto param = [&](const char* k) {
    auto it = cmdline.find(k);
    return it == cmdline.end() ? std::string() : it->second;
  };
  CpuSet isolated = parse_cpu_list(c.sys->read("/sys/devices/system/cpu/isolated").value_or(""));
  for (int x : isolcpus_of(param("isolcpus"))) isolated.insert(x);
  CpuSet nohz = parse_cpu_list(c.sys->read("/sys/devices/system/cpu/nohz_full").value_or(""));
  if (nohz.empty()) nohz = parse_cpu_list(param("nohz_full"));
  const CpuSet rcu = parse_cpu_list(param("rcu_nocbs"));
  const char* why =
      "a polling core shared with other tasks, timer ticks or RCU callbacks stalls for microseconds "
      "at a time: at line rate the NIC ring overflows meanwhile";
  if (c.cores.empty()) {
    out.add("cpu.isolation", "", c.cfg ? Status::skip : Status::pass,
            (c.cfg ? "no queue pins a cpu_core; " : "") + std::string("isolated cores: ") +
                (isolated.empty() ? "none" : cpu_list_text(isolated)) +
                ", nohz_full: " + (nohz.empty() ? "none" : cpu_list_text(nohz)),
            why);
    return;
  }
  const CpuSet online = online_cpus(*c.sys);
  const CpuSet absent = missing(c.cores, online);
  if (!online.empty() && !absent.empty()) {
    out.add("cpu.isolation", "", Status::fail,
            "cpu_core " + cpu_list_text(absent) + " does not exist (online: " + cpu_list_text(online) + ")",
            "a worker cannot be pinned to a core the machine lacks",
            "set the queues' cpu_core to online cores (" + cpu_list_text(online) + ")");
    return;
  }
  const std::string list = cpu_list_text(c.cores);
  const CpuSet mi = missing(c.cores, isolated), mn = missing(c.cores, nohz), mr = missing(c.cores, rcu);
  if (mi.empty() && mn.empty() && mr.empty()) {
    out.add("cpu.isolation", "cores " + list, Status::pass, "isolcpus, nohz_full and rcu_nocbs cover cores " + list,
            why);
    return;
  }
  std::string what = "polling cores " + list + ":";
  if (!mi.empty()) what += " not isolated (isolcpus): " + cpu_list_text(mi) + ";";
  if (!mn.empty()) what += " not nohz_full: " + cpu_list_text(mn) + ";";
  if (!mr.empty()) what += " not rcu_nocbs: " + cpu_list_text(mr) + ";";
  what.pop_back();
  out.add("cpu.isolation", "cores " + list, Status::warn, what, why,
          "add 'isolcpus=" + list + " nohz_full=" + list + " rcu_nocbs=" + list +
              "' to GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub && reboot");
}

void governor_check(const CheckContext& c, Checks& out) {
  const CpuSet cpus = c.cores.empty() ? online_cpus(*c.sys) : c.cores;
  std::map<std::string, CpuSet> by_governor;
  for (int cpu : cpus)
    if (auto g = c.sys->read("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/scaling_governor"))
      by_governor[*g].insert(cpu);
  const char* why =
      "powersave and ondemand governors clock a polling core down between bursts; the next burst "
      "then meets a slow core and the ring overflows";
  if (by_governor.empty()) {
    out.add("cpu.governor", "", Status::skip, "no cpufreq governor (fixed frequency, or a VM)", why);
    return;
  }
  std::string what;
  CpuSet slow;
  for (const auto& [g, set] : by_governor) {
    what += (what.empty() ? "" : ", ") + g + " on " + cpu_list_text(set);
    if (g != "performance") slow.insert(set.begin(), set.end());
  }
  if (slow.empty()) {
    out.add("cpu.governor", "", Status::pass, what, why);
    return;
  }
  std::string files;
  for (int cpu : slow) files += " /sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/scaling_governor";
  out.add("cpu.governor", "", Status::warn, what, why,
          "cpupower frequency-set -g performance (package linux-cpupower), or: echo performance | tee" + files);
}

// IRQ number -> its name in /proc/interrupts (the last column).
std::map<int, std::string> interrupt_names(const SysReader& sys) {
  std::map<int, std::string> out;
  for (const auto& l : sys.lines("/proc/interrupts")) {
    std::stringstream s(l);
    std::string first, tok, last;
    s >> first;
    if (first.empty() || !std::isdigit(static_cast<unsigned char>(first[0]))) continue;
    while (s >> tok) last = tok;
    out[std::stoi(first)] = last;
  }
  return out;
}

void irq_check(const CheckContext& c, const NicTarget& n, const std::map<int, std::string>& names, Checks& out) {
  const std::string subject = n.netdev.empty() ? n.pci : n.netdev;
  std::set<int> irqs;
  if (!n.pci.empty())
    for (const auto& e : c.sys->list("/sys/bus/pci/devices/" + n.pci + "/msi_irqs")) irqs.insert(std::atoi(e.c_str()));
  if (!n.netdev.empty())
    for (const auto& [irq, name] : names)
      if (name == n.netdev || name.rfind(n.netdev + "-", 0) == 0) irqs.insert(irq);  // "eth0-TxRx-3"
  const char* why =
      "an interrupt on a polling core preempts the poll loop; interrupts on another NUMA node than "
      "the NIC make its packets cross the interconnect";
  if (irqs.empty()) {
    out.add("cpu.irq_affinity", subject, Status::skip, "no interrupts (virtual device, or DPDK owns the port)", why);
    return;
  }
  const int node = n.pci.empty()
                       ? -1
                       : static_cast<int>(c.sys->read_int("/sys/bus/pci/devices/" + n.pci + "/numa_node").value_or(-1));
  CpuSet all;
  std::vector<std::string> on_polling, off_node;
  std::string fix;
  const CpuSet online = online_cpus(*c.sys);
  CpuSet allowed;
  for (int cpu : online)
    if (!c.cores.count(cpu) && (node < 0 || c.numa_of_cpu(cpu) == node || c.numa_of_cpu(cpu) < 0)) allowed.insert(cpu);
  for (int irq : irqs) {
    const auto aff = c.sys->read("/proc/irq/" + std::to_string(irq) + "/smp_affinity_list");
    if (!aff) continue;
    const CpuSet cpus = parse_cpu_list(*aff);
    all.insert(cpus.begin(), cpus.end());
    const auto nm = names.count(irq) ? " (" + names.at(irq) + ")" : std::string();
    bool bad = false;
    for (int cpu : cpus)
      if (c.cores.count(cpu)) {
        on_polling.push_back("IRQ " + std::to_string(irq) + nm + " may run on polling core " + std::to_string(cpu));
        bad = true;
        break;
      }
    if (node >= 0) {
      bool any_on_node = false;
      for (int cpu : cpus) any_on_node |= c.numa_of_cpu(cpu) == node;
      if (!any_on_node) {
        off_node.push_back("IRQ " + std::to_string(irq) + nm + " on cores " + *aff + ", off node " +
                           std::to_string(node));
        bad = true;
      }
    }
    if (bad && !allowed.empty())
      fix += (fix.empty() ? "" : "; ") + std::string("echo ") + cpu_list_text(allowed) + " > /proc/irq/" +
             std::to_string(irq) + "/smp_affinity_list";
  }
  std::string what = std::to_string(irqs.size()) + " IRQs on cores " + (all.empty() ? "?" : cpu_list_text(all));
  if (on_polling.empty() && off_node.empty()) {
    out.add("cpu.irq_affinity", subject, Status::pass, what, why);
    return;
  }
  for (const auto& s : on_polling) what += "; " + s;
  for (const auto& s : off_node) what += "; " + s;
  if (!c.cores.empty())
    fix += "; keep irqbalance off those cores: IRQBALANCE_BANNED_CPULIST=" + cpu_list_text(c.cores) +
           " in /etc/default/irqbalance";
  out.add("cpu.irq_affinity", subject, Status::warn, what, why, fix);
}

void hugepages_check(const CheckContext& c, Checks& out) {
  const std::string dir = "/sys/kernel/mm/hugepages/hugepages-2048kB/";
  const uint64_t total = static_cast<uint64_t>(c.sys->read_int(dir + "nr_hugepages").value_or(0));
  const uint64_t free = static_cast<uint64_t>(c.sys->read_int(dir + "free_hugepages").value_or(0));
  uint64_t need = 0;
  bool required = false;
  std::string regions;
  if (c.cfg)
    for (const auto& r : c.cfg->memory_regions)
      if (r.kind == MemoryKind::huge) {
        need += c.region_bytes(r) / kHugePage;
        required |= r.hugepages_required;
        regions += (regions.empty() ? "" : ", ") + r.name;
      }
  const bool eal = c.needs.owns_port;  // DPDK's EAL takes its memory from hugepages
  const std::string what = "2 MiB hugepages: " + std::to_string(free) + " free of " + std::to_string(total);
  const char* why =
      "kind: huge regions (and DPDK's memory) live in hugepages: fewer TLB misses; without enough free "
      "pages a huge region falls back to normal pages (or fails with hugepages_required)";
  const std::string fix_n = std::to_string(total + (need > free ? need - free : 64));
  const std::string fix = "echo " + fix_n + " > " + dir + "nr_hugepages (persist: vm.nr_hugepages=" + fix_n +
                          " in /etc/sysctl.d/80-netdaq.conf)";
  if (need > free)
    out.add("cpu.hugepages", "", required ? Status::fail : Status::warn,
            what + "; regions " + regions + " need " + std::to_string(need), why, fix);
  else if (eal && free == 0)
    out.add("cpu.hugepages", "", Status::warn, what + "; the dpdk engine's EAL wants hugepages", why, fix);
  else if (need || eal)
    out.add("cpu.hugepages", "", Status::pass, what + "; the config needs " + std::to_string(need), why);
  else
    out.add("cpu.hugepages", "", c.cfg ? Status::skip : Status::pass,
            what + (c.cfg ? "; the config uses no hugepages" : ""), why);
}

void memlock_check(const CheckContext& c, uint64_t caps, Checks& out) {
  const MemlockLimit lim = parse_memlock(c.sys->lines("/proc/self/limits"));
  uint64_t need = 0;
  std::set<std::string> counted;
  for (const auto& n : c.nics) {
    if (!n.needs.pins_memory) continue;  // UMEMs and memory registrations pin their buffers
    for (const auto& q : n.queues)
      for (const auto* r : q.regions)
        if (r->kind != MemoryKind::device && counted.insert(r->name).second) need += c.region_bytes(*r);
  }
  const std::string limit = !lim.found ? "unknown" : lim.bytes ? bytes_text(*lim.bytes) : "unlimited";
  const char* why =
      "AF_XDP UMEMs and RDMA memory registrations pin their buffers and count against "
      "RLIMIT_MEMLOCK unless the process has CAP_IPC_LOCK";
  const char* fix =
      "ulimit -l unlimited (shell), LimitMEMLOCK=infinity (systemd unit), or '* - memlock unlimited' "
      "in /etc/security/limits.d/netdaq.conf";
  const std::string needs = !c.cfg ? ""
                            : need ? "; the config pins " + bytes_text(need)
                                   : "; the config pins no memory";
  if (caps >> kCapIpcLock & 1)
    out.add("cpu.memlock", "", Status::pass, "locked-memory limit " + limit + ", but CAP_IPC_LOCK lifts it" + needs,
            why);
  else if (lim.bytes && *lim.bytes < need)
    out.add("cpu.memlock", "", Status::fail, "locked-memory limit " + limit + needs, why, fix);
  else
    out.add("cpu.memlock", "", Status::pass, "locked-memory limit " + limit + needs, why);
}

uint64_t capabilities_check(const CheckContext& c, Checks& out) {
  const auto caps = parse_cap_eff(c.sys->lines("/proc/self/status"));
  const char* why =
      "afxdp attaches XDP programs and opens raw AF_XDP sockets (CAP_NET_ADMIN, CAP_NET_RAW, CAP_BPF); "
      "dpdk maps devices and hugepages (CAP_SYS_ADMIN, CAP_IPC_LOCK, CAP_NET_ADMIN); rdma pins memory "
      "(CAP_IPC_LOCK or a memlock limit)";
  if (!caps) {
    out.add("cpu.capabilities", "", Status::skip, "no CapEff in /proc/self/status", why);
    return 0;
  }
  const std::map<int, const char*> names{{kCapNetAdmin, "CAP_NET_ADMIN"},
                                         {kCapNetRaw, "CAP_NET_RAW"},
                                         {kCapIpcLock, "CAP_IPC_LOCK"},
                                         {kCapSysAdmin, "CAP_SYS_ADMIN"},
                                         {kCapBpf, "CAP_BPF"}};
  std::set<int> need;
  const EngineNeeds& e = c.needs;
  for (const auto& [wanted, bit] : {std::pair{e.cap_net_admin, kCapNetAdmin},
                                    {e.cap_net_raw, kCapNetRaw},
                                    {e.cap_bpf, kCapBpf},
                                    {e.cap_sys_admin, kCapSysAdmin},
                                    {e.cap_ipc_lock, kCapIpcLock}})
    if (wanted) need.insert(bit);
  if (!c.cfg) need.insert({kCapNetAdmin, kCapNetRaw, kCapIpcLock, kCapBpf});
  std::string have, lack, lack_set;
  for (const auto& [bit, name] : names) {
    const bool has = *caps >> bit & 1;
    // CAP_SYS_ADMIN also grants what CAP_BPF does (kernels before 5.8 know no CAP_BPF).
    const bool covered = has || (bit == kCapBpf && (*caps >> kCapSysAdmin & 1));
    if (has) have += (have.empty() ? "" : " ") + std::string(name);
    if (need.count(bit) && !covered) {
      lack += (lack.empty() ? "" : " ") + std::string(name);
      std::string lower = name;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      lack_set += (lack_set.empty() ? "" : ",") + lower;
    }
  }
  const std::string what = "effective: " + (have.empty() ? std::string("none of the network ones") : have);
  if (lack.empty())
    out.add("cpu.capabilities", "", Status::pass, what, why);
  else
    out.add("cpu.capabilities", "", c.cfg ? Status::fail : Status::warn, what + "; missing " + lack, why,
            "run as root, or: setcap " + lack_set + "+ep $(command -v netdaq)");
  return *caps;
}

void iommu_check(const CheckContext& c, Checks& out) {
  const auto cmdline = parse_cmdline(c.sys->read("/proc/cmdline").value_or(""));
  const bool on = !c.sys->list("/sys/class/iommu").empty() || !c.sys->list("/sys/kernel/iommu_groups").empty();
  const auto it = cmdline.find("iommu");
  const bool pt = it != cmdline.end() && it->second == "pt";
  const char* why =
      "in translated mode every NIC DMA goes through IOMMU page tables (IOTLB misses at line rate) and "
      "PCIe ACS may route GPU-NIC peer traffic through the root complex; vfio-pci (DPDK) needs an "
      "IOMMU";
  if (!on) {
    if (c.needs.owns_port)
      out.add("cpu.iommu", "", Status::warn, "no IOMMU: vfio-pci cannot isolate the DPDK port", why,
              "add 'intel_iommu=on iommu=pt' (AMD: 'amd_iommu=on iommu=pt') to GRUB_CMDLINE_LINUX, update-grub && "
              "reboot; or modprobe vfio enable_unsafe_noiommu_mode=1");
    else
      out.add("cpu.iommu", "", Status::pass, "no IOMMU (DMA untranslated)", why);
  } else if (pt) {
    out.add("cpu.iommu", "", Status::pass, "IOMMU on, passthrough (iommu=pt)", why);
  } else {
    out.add("cpu.iommu", "", Status::warn, "IOMMU on in translated mode (no iommu=pt on the kernel command line)", why,
            "add 'iommu=pt' to GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub && reboot");
  }
}

}  // namespace

std::vector<CheckResult> cpu_checks(const CheckContext& c) {
  Checks out("cpu");
  isolation_check(c, out);
  governor_check(c, out);
  const auto names = interrupt_names(*c.sys);
  for (const auto& n : c.nics) irq_check(c, n, names, out);
  hugepages_check(c, out);
  const uint64_t caps = capabilities_check(c, out);
  memlock_check(c, caps, out);
  iommu_check(c, out);
  return out.results();
}

}  // namespace netdaq::cli::check
