#include "engines/afxdp/xdp_program.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/log.h"
#include "engines/afxdp/bpf/steer_abi.h"
#include "net/flow_matcher.h"
#include "netdaq/status.h"
#include "util/errno_text.h"
#include "util/libbpf_log.h"
#include "util/netns_scope.h"
#include "util/unique_fd.h"

extern "C" const char netdaq_afxdp_steer_obj[];
extern "C" const char netdaq_afxdp_steer_obj_end[];

namespace netdaq::detail::afxdp {

namespace {

constexpr const char* kProgName = "netdaq_steer";
constexpr const char* kOwnerMap = "netdaq_owner";

// Start time of a process (clock ticks since boot, /proc/PID/stat field 22); 0 if gone.
uint64_t process_start(uint32_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(f, stat)) return 0;
  const size_t paren = stat.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return 0;
  std::istringstream rest(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) return std::stoull(field);
  return 0;
}

std::string privileges_hint() {
  return "loading XDP programs needs root, or CAP_BPF + CAP_NET_ADMIN + CAP_NET_RAW (and CAP_IPC_LOCK or a "
         "large enough `ulimit -l` for the UMEM)";
}

// The owner record of a loaded netdaq program, found through the program's maps.
bool read_owner(int prog_fd, ndq_control* out) {
  bpf_prog_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0 || info.nr_map_ids == 0) return false;
  std::vector<uint32_t> ids(info.nr_map_ids);
  bpf_prog_info again{};
  again.nr_map_ids = info.nr_map_ids;
  again.map_ids = reinterpret_cast<uint64_t>(ids.data());
  len = sizeof again;
  if (bpf_obj_get_info_by_fd(prog_fd, &again, &len) != 0) return false;
  for (uint32_t id : ids) {
    const UniqueFd map(bpf_map_get_fd_by_id(id));
    if (!map) continue;
    bpf_map_info mi{};
    uint32_t mlen = sizeof mi;
    if (bpf_obj_get_info_by_fd(map.get(), &mi, &mlen) != 0 || std::strcmp(mi.name, kOwnerMap) != 0) continue;
    uint32_t key = 0;
    return bpf_map_lookup_elem(map.get(), &key, out) == 0;
  }
  return false;
}

// Fills the parts of a rule that come from one IP literal of the config.
void set_ip(uint8_t* dst, const std::optional<IpAddress>& ip, uint32_t bit4, uint32_t bit6, uint32_t* bits) {
  if (!ip) return;
  std::memcpy(dst, ip->bytes.data(), ip->size());
  *bits |= ip->is_v4() ? bit4 : bit6;
}

ndq_rule to_rule(const FlowConfig& f) {
  ndq_rule r{};
  r.id = f.id;
  r.queue = f.queue;
  const FlowMatch& m = f.match;
  if (m.udp_src) {
    r.bits |= NDQ_M_UDP_SRC;
    r.src_lo = *m.udp_src;
    r.src_hi = m.udp_src_end.value_or(*m.udp_src);
  }
  if (m.udp_dst) {
    r.bits |= NDQ_M_UDP_DST;
    r.dst_lo = *m.udp_dst;
    r.dst_hi = m.udp_dst_end.value_or(*m.udp_dst);
  }
  if (m.vlan) {
    r.bits |= NDQ_M_VLAN;
    r.vlan = *m.vlan;
  }
  const FlowAddresses a = flow_addresses(f);  // throws for an address the validator refuses
  set_ip(r.ip_src, a.src, NDQ_M_IP4_SRC, NDQ_M_IP6_SRC, &r.bits);
  set_ip(r.ip_dst, a.dst, NDQ_M_IP4_DST, NDQ_M_IP6_DST, &r.bits);
  return r;
}

}  // namespace

SteeringProgram::SteeringProgram(const NetdevInfo& dev, const InterfaceConfig& iface, const std::string& context)
    : dev_(dev), iface_(iface) {
  route_libbpf_logs_to_debug();
  netns_ = open_current_netns();

  int err = open_and_load(true, context);
  if (err && err != -EPERM && err != -EACCES) {
    // A kernel without multi-buffer XDP (before 5.18) refuses BPF_F_XDP_HAS_FRAGS and
    // bpf_xdp_get_buff_len: load the single-buffer variant, as netdaq did before.
    bpf_object__close(obj_);
    obj_ = nullptr;
    const int frags_err = err;
    err = open_and_load(false, context);
    if (err == 0)
      log()->info("afxdp {}: the kernel refused a frags-aware XDP program ({}); loaded it without multi-buffer "
                  "support: frames larger than one buffer cannot be received",
                  dev_.name, errno_text(frags_err));
    else
      err = frags_err;  // the first refusal is the one that says why
  }
  try {
    if (err) {
      if (err == -EPERM || err == -EACCES)
        throw Error(Errc::system, context + ": insufficient privileges to load the XDP steering program (" +
                                      errno_text(err) + "): " + privileges_hint());
      throw Error(Errc::system, context + ": the kernel refused the XDP steering program: " + errno_text(err) +
                                    " (run with log.level: debug for the verifier's log)");
    }
    prog_fd_ = bpf_program__fd(bpf_object__find_program_by_name(obj_, kProgName));
    rules_fd_ = bpf_object__find_map_fd_by_name(obj_, "netdaq_rules");
    counts_fd_ = bpf_object__find_map_fd_by_name(obj_, "netdaq_counts");
    owner_fd_ = bpf_object__find_map_fd_by_name(obj_, kOwnerMap);
    xsks_fd_ = bpf_object__find_map_fd_by_name(obj_, "netdaq_xsks");
    if (prog_fd_ < 0 || rules_fd_ < 0 || counts_fd_ < 0 || owner_fd_ < 0 || xsks_fd_ < 0)
      throw Error(Errc::system, context + ": the embedded steering program lacks a map or its program");
    fill_maps(context);
    replace_stale_or_throw(context);
    attach(iface.options.get<AfxdpOptions>().attach, context);
  } catch (...) {
    bpf_object__close(obj_);
    throw;
  }
}

// Opens the embedded object into obj_ and loads it: frags-aware (SEC "xdp.frags") or, with
// frags false, as a plain XDP program whose ndq_frags constant is 0. Returns libbpf's error.
int SteeringProgram::open_and_load(bool frags, const std::string& context) {
  LIBBPF_OPTS(bpf_object_open_opts, open_opts, .object_name = "netdaq_steer");
  obj_ = bpf_object__open_mem(netdaq_afxdp_steer_obj, netdaq_afxdp_steer_obj_end - netdaq_afxdp_steer_obj,
                              &open_opts);
  if (!obj_) throw Error(Errc::system, context + ": cannot open the embedded steering program: " + errno_text(errno));
  frags_ = frags;
  if (!frags) {
    bpf_program* prog = bpf_object__find_program_by_name(obj_, kProgName);
    if (prog) bpf_program__set_flags(prog, bpf_program__flags(prog) & ~BPF_F_XDP_HAS_FRAGS);
    // ndq_frags = 0: its offset in .rodata from the object's BTF.
    bpf_map* rodata = bpf_object__find_map_by_name(obj_, ".rodata");
    const btf* b = bpf_object__btf(obj_);
    size_t size = 0;
    const auto* init = rodata ? static_cast<const uint8_t*>(bpf_map__initial_value(rodata, &size)) : nullptr;
    const int sec_id = b ? btf__find_by_name_kind(b, ".rodata", BTF_KIND_DATASEC) : -1;
    if (init && sec_id > 0) {
      std::vector<uint8_t> bytes(init, init + size);
      const btf_type* sec = btf__type_by_id(b, sec_id);
      const btf_var_secinfo* v = btf_var_secinfos(sec);
      for (uint16_t i = 0; i < btf_vlen(sec); ++i, ++v) {
        const char* name = btf__name_by_offset(b, btf__type_by_id(b, v->type)->name_off);
        if (name && std::strcmp(name, "ndq_frags") == 0 && v->offset + sizeof(uint32_t) <= size)
          std::memset(bytes.data() + v->offset, 0, sizeof(uint32_t));
      }
      bpf_map__set_initial_value(rodata, bytes.data(), bytes.size());
    }
  }
  return bpf_object__load(obj_);
}

SteeringProgram::~SteeringProgram() {
  if (attached_) {
    // The session may be destroyed by a thread in another network namespace, where our
    // ifindex names another device: detach from inside the interface's namespace.
    run_in_netns(netns_, [this](int err) {
      if (err == 0) detach();
      else log()->warn("afxdp {}: cannot enter its network namespace to detach XDP: {}", dev_.name, errno_text(err));
    });
  }
  bpf_object__close(obj_);
}

void SteeringProgram::detach() noexcept {
  LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = prog_fd_);  // only if it is still ours
  const uint32_t mode = native_ ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
  if (int err = bpf_xdp_detach(dev_.ifindex, mode, &opts))
    log()->warn("afxdp {}: could not detach the XDP program: {}", dev_.name, errno_text(err));
  else
    log()->debug("afxdp {}: XDP program detached", dev_.name);
}

void SteeringProgram::fill_maps(const std::string& context) {
  const auto& flows = iface_.rx.flows;
  if (flows.size() > NDQ_MAX_FLOWS)
    throw Error(Errc::invalid_config, context + ": " + std::to_string(flows.size()) +
                                          " flows; the steering program holds at most " +
                                          std::to_string(NDQ_MAX_FLOWS));
  std::vector<ndq_rule> rules;
  for (const auto& f : flows) {
    rules.push_back(to_rule(f));
    if (flows_of_queue(f.queue) > 1) rules.back().bits |= NDQ_M_TAG;
  }
  if (rules.empty()) {  // no flows: every UDP packet goes to the XSK of the queue it came in on
    ndq_rule all{};
    all.bits = NDQ_M_ANY_QUEUE;
    rules.push_back(all);
  }
  for (uint32_t i = 0; i < rules.size(); ++i)
    if (int err = bpf_map_update_elem(rules_fd_, &i, &rules[i], 0))
      throw Error(Errc::system, context + ": cannot write flow rule " + std::to_string(i) + ": " + errno_text(err));
  nrules_ = static_cast<uint32_t>(rules.size());
  ndq_control ctl{};
  ctl.nrules = nrules_;
  ctl.owner_pid = static_cast<uint32_t>(getpid());
  ctl.owner_start = process_start(ctl.owner_pid);
  uint32_t key = 0;
  if (int err = bpf_map_update_elem(owner_fd_, &key, &ctl, 0))
    throw Error(Errc::system, context + ": cannot write the owner record: " + errno_text(err));
}

void SteeringProgram::replace_stale_or_throw(const std::string& context) {
  LIBBPF_OPTS(bpf_xdp_query_opts, q);
  if (int err = bpf_xdp_query(dev_.ifindex, 0, &q))
    throw Error(Errc::system, context + ": cannot query XDP on '" + dev_.name + "': " + errno_text(err));
  for (uint32_t id : {q.drv_prog_id, q.skb_prog_id, q.hw_prog_id}) {
    if (id == 0) continue;
    const UniqueFd old(bpf_prog_get_fd_by_id(id));
    bpf_prog_info info{};
    uint32_t len = sizeof info;
    if (!old || bpf_obj_get_info_by_fd(old.get(), &info, &len) != 0)
      throw Error(Errc::system, context + ": interface '" + dev_.name + "' has XDP program id " + std::to_string(id) +
                                    " attached and it cannot be inspected: " + errno_text(errno));
    const std::string where = "interface '" + dev_.name + "'";
    if (std::strcmp(info.name, kProgName) != 0)
      throw Error(Errc::state, context + ": " + where + " already runs XDP program '" + info.name + "' (id " +
                                   std::to_string(id) + "), which is not netdaq's; remove it first (ip link set dev " +
                                   dev_.name + " xdp off) or use another interface");
    ndq_control owner{};
    if (read_owner(old.get(), &owner) && owner.owner_pid != 0 && process_start(owner.owner_pid) == owner.owner_start &&
        owner.owner_start != 0)
      throw Error(Errc::state, context + ": " + where + " is in use by netdaq process " +
                                   std::to_string(owner.owner_pid) +
                                   (owner.owner_pid == static_cast<uint32_t>(getpid()) ? " (this process)" : "") +
                                   " (XDP program id " + std::to_string(id) + ")");
    const uint32_t mode = id == q.drv_prog_id ? XDP_FLAGS_DRV_MODE : id == q.skb_prog_id ? XDP_FLAGS_SKB_MODE
                                                                                           : XDP_FLAGS_HW_MODE;
    LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = old.get());
    if (int err = bpf_xdp_detach(dev_.ifindex, mode, &opts))
      throw Error(Errc::system, context + ": cannot remove the stale netdaq XDP program (id " + std::to_string(id) +
                                    ") from " + where + ": " + errno_text(err));
    log()->warn("afxdp {}: replaced a stale netdaq XDP program (id {}) left by process {}, which is gone",
                dev_.name, id, owner.owner_pid);
  }
}

void SteeringProgram::attach(XdpAttach how, const std::string& context) {
  auto try_attach = [&](uint32_t mode) {
    return bpf_xdp_attach(dev_.ifindex, prog_fd_, mode | XDP_FLAGS_UPDATE_IF_NOEXIST, nullptr);
  };
  const std::string where = "interface '" + dev_.name + "'" + (dev_.driver.empty() ? "" : " (driver " + dev_.driver + ")");
  int err = 0;
  if (how != XdpAttach::generic) {
    err = try_attach(XDP_FLAGS_DRV_MODE);
    if (err == 0) {
      native_ = attached_ = true;
      return;
    }
    if (err == -EPERM || err == -EACCES)
      throw Error(Errc::system, context + ": insufficient privileges to attach XDP to " + where + ": " +
                                    privileges_hint());
    if (how == XdpAttach::native)
      throw Error(Errc::unsupported,
                  context + ": native XDP is not available on " + where + ": " + errno_text(err) +
                      (err == -EOPNOTSUPP ? " (the driver has no XDP support)" : "") +
                      "; set afxdp.attach: generic (every driver, slower) or auto");
    log()->info("afxdp {}: native XDP not available ({}); using generic XDP", dev_.name, errno_text(err));
  }
  const int native_err = err;
  err = try_attach(XDP_FLAGS_SKB_MODE);
  if (err == 0) {
    attached_ = true;
    return;
  }
  if (err == -EPERM || err == -EACCES)
    throw Error(Errc::system, context + ": insufficient privileges to attach XDP to " + where + ": " + privileges_hint());
  throw Error(Errc::unsupported, context + ": cannot attach XDP to " + where + ": generic: " + errno_text(err) +
                                     (native_err ? ", native: " + errno_text(native_err) : std::string()));
}

void SteeringProgram::add_xsk(uint32_t queue, int xsk_fd) {
  if (int err = bpf_map_update_elem(xsks_fd_, &queue, &xsk_fd, 0))
    throw Error(Errc::system, "afxdp " + dev_.name + ": cannot add the XSK of queue " + std::to_string(queue) +
                                  " to the steering map: " + errno_text(err));
}

void SteeringProgram::remove_xsk(uint32_t queue) noexcept { bpf_map_delete_elem(xsks_fd_, &queue); }

namespace {
ndq_counts sum_counts(int fd, uint32_t slot) {
  static const int ncpu = libbpf_num_possible_cpus();
  std::vector<ndq_counts> per_cpu(ncpu > 0 ? ncpu : 1);
  ndq_counts total{};
  if (bpf_map_lookup_elem(fd, &slot, per_cpu.data()) != 0) return total;
  for (const auto& c : per_cpu) {
    total.packets += c.packets;
    total.bytes += c.bytes;
    total.wrong_queue += c.wrong_queue;
  }
  return total;
}
}  // namespace

std::vector<FlowStats> SteeringProgram::flow_stats() const {
  std::vector<FlowStats> out;
  const auto& flows = iface_.rx.flows;
  for (uint32_t i = 0; i < flows.size(); ++i) {
    const ndq_counts c = sum_counts(counts_fd_, i);
    out.push_back(FlowStats{iface_.name, flows[i].id, false, flows[i].queue, c.packets, c.bytes, c.wrong_queue});
  }
  const ndq_counts rest = sum_counts(counts_fd_, NDQ_UNMATCHED);
  out.push_back(FlowStats{iface_.name, 0, true, 0, rest.packets, rest.bytes, 0});
  return out;
}

size_t SteeringProgram::flows_of_queue(uint16_t queue) const noexcept {
  size_t n = 0;
  for (const auto& f : iface_.rx.flows) n += f.queue == queue;
  return n;
}

uint32_t SteeringProgram::only_flow(uint16_t queue) const noexcept {
  for (const auto& f : iface_.rx.flows)
    if (f.queue == queue) return f.id;
  return 0;
}

uint64_t SteeringProgram::wrong_queue(uint16_t queue) const {
  uint64_t n = 0;
  const auto& flows = iface_.rx.flows;
  for (uint32_t i = 0; i < flows.size(); ++i)
    if (flows[i].queue == queue) n += sum_counts(counts_fd_, i).wrong_queue;
  return n;
}

}  // namespace netdaq::detail::afxdp
