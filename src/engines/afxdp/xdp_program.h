// The steering program on one interface: loaded from the embedded object, filled with the
// config's flows, attached native or generic, detached on destruction. A program left by a
// netdaq process that died (SIGKILL) is recognised by its owner map and replaced.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engines/afxdp/interface_info.h"
#include "netdaq/config.h"
#include "netdaq/engines/afxdp.h"
#include "netdaq/stats.h"
#include "util/unique_fd.h"

struct bpf_object;

namespace netdaq::detail::afxdp {

class SteeringProgram {
 public:
  // Throws Error: privileges, foreign XDP program, live netdaq owner, attach failure.
  SteeringProgram(const NetdevInfo& dev, const InterfaceConfig& iface, const std::string& context);
  ~SteeringProgram();
  SteeringProgram(const SteeringProgram&) = delete;
  SteeringProgram& operator=(const SteeringProgram&) = delete;

  // Sends the flows of NIC queue `queue` to this XSK (and stops doing so).
  void add_xsk(uint32_t queue, int xsk_fd);
  void remove_xsk(uint32_t queue) noexcept;

  bool native() const noexcept { return native_; }
  // Loaded frags-aware (multi-buffer XDP: jumbo frames in several buffers); false on a kernel
  // without it (before 5.18), where frames larger than one buffer never reach the program.
  bool frags() const noexcept { return frags_; }
  std::vector<FlowStats> flow_stats() const;
  // Flows steered to `queue`; with one, packets carry no flow tag and its id is only_flow().
  size_t flows_of_queue(uint16_t queue) const noexcept;
  uint32_t only_flow(uint16_t queue) const noexcept;
  // Packets of the flows steered to `queue` that arrived on another NIC queue.
  uint64_t wrong_queue(uint16_t queue) const;

 private:
  void replace_stale_or_throw(const std::string& context);
  void attach(XdpAttach how, const std::string& context);
  void fill_maps(const std::string& context);
  void detach() noexcept;
  int open_and_load(bool frags, const std::string& context);

  const NetdevInfo dev_;
  const InterfaceConfig& iface_;
  bpf_object* obj_ = nullptr;
  UniqueFd netns_;  // the namespace the interface lives in (ifindex is per namespace)
  int prog_fd_ = -1, rules_fd_ = -1, counts_fd_ = -1, owner_fd_ = -1, xsks_fd_ = -1;
  bool native_ = false;
  bool attached_ = false;
  bool frags_ = true;
  uint32_t nrules_ = 0;
};

}  // namespace netdaq::detail::afxdp
