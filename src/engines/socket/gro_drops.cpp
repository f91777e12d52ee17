// GroDropCounter over libbpf: the embedded bpf/gro_drops.bpf.c attached with fexit.
#include "engines/socket/gro_drops.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "engines/socket/bpf/gro_drops_abi.h"
#include "util/errno_text.h"
#include "util/libbpf_log.h"

extern "C" const char netdaq_socket_gro_drops_obj[];
extern "C" const char netdaq_socket_gro_drops_obj_end[];

namespace netdaq::detail::socket_engine {
namespace {

class BpfGroDropCounter final : public GroDropCounter {
 public:
  ~BpfGroDropCounter() override { close(); }

  // Loads and attaches the first program the kernel takes; "" on success, else why not.
  std::string open() {
    route_libbpf_logs_to_debug();
    std::string why_not;
    for (const Hook& h : kHooks) {
      const char* prog = h.program;
      const std::string failure = open_with(prog);
      if (failure.empty()) {
        hook_ = h.where;
        return "";
      }
      why_not += (why_not.empty() ? "" : "; ") + std::string(prog) + ": " + failure;
      close();
    }
    return why_not;
  }

  bool watch(int fd, uint64_t* cookie, std::string* why_not) override {
    socklen_t len = sizeof(*cookie);
    if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, cookie, &len) != 0) {
      *why_not = "SO_COOKIE: " + errno_text(errno);
      return false;
    }
    const ndq_gro_drops zero{};
    if (bpf_map_update_elem(map_fd_, cookie, &zero, BPF_ANY) != 0) {
      *why_not = "cannot watch the socket (" + std::to_string(NDQ_GRO_MAX_SOCKETS) + " at most): " + errno_text(errno);
      return false;
    }
    return true;
  }

  const char* hook() const noexcept override { return hook_; }

  void unwatch(uint64_t cookie) noexcept override { bpf_map_delete_elem(map_fd_, &cookie); }

  GroDrops read(uint64_t cookie) const noexcept override {
    ndq_gro_drops d{};
    if (bpf_map_lookup_elem(map_fd_, &cookie, &d) != 0) return {};
    return {d.batches, d.datagrams};
  }

 private:
  std::string open_with(const char* prog_name) {
    LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "netdaq_gro_drops");
    obj_ = bpf_object__open_mem(netdaq_socket_gro_drops_obj,
                                netdaq_socket_gro_drops_obj_end - netdaq_socket_gro_drops_obj, &opts);
    if (!obj_) return "cannot open the embedded eBPF object: " + errno_text(errno);
    bpf_program* chosen = nullptr;
    bpf_program* p = nullptr;
    bpf_object__for_each_program(p, obj_) {
      const bool is_it = std::strcmp(bpf_program__name(p), prog_name) == 0;
      bpf_program__set_autoload(p, is_it);
      if (is_it) chosen = p;
    }
    if (!chosen) return "not in the embedded eBPF object";
    if (const int err = bpf_object__load(obj_)) {
      if (err == -EPERM || err == -EACCES) return "the kernel refused to load it (needs CAP_BPF and CAP_PERFMON, " +
                                                  std::string("and a kernel with BTF that allows it): ") + errno_text(-err);
      return "the kernel refused to load it: " + errno_text(-err);
    }
    link_ = bpf_program__attach(chosen);
    if (!link_) return "cannot attach it: " + errno_text(errno);
    map_fd_ = bpf_object__find_map_fd_by_name(obj_, "watched");
    if (map_fd_ < 0) return "its eBPF object has no map 'watched'";
    return "";
  }

  void close() noexcept {
    if (link_) bpf_link__destroy(link_);
    if (obj_) bpf_object__close(obj_);
    link_ = nullptr;
    obj_ = nullptr;
    map_fd_ = -1;
  }

  struct Hook {
    const char* program;  // in bpf/gro_drops.bpf.c
    const char* where;
  };
  static constexpr Hook kHooks[] = {{"udp_drop_tracepoint", "tracepoint udp_fail_queue_rcv_skb"},
                                    {"udp_enqueue_exit", "fexit __udp_enqueue_schedule_skb"}};

  const char* hook_ = "";
  bpf_object* obj_ = nullptr;
  bpf_link* link_ = nullptr;
  int map_fd_ = -1;
};

}  // namespace

std::shared_ptr<GroDropCounter> GroDropCounter::acquire(std::string* why_not) {
  // One program per process, shared by its GRO sockets, unloaded with the last of them.
  static std::mutex mu;
  static std::weak_ptr<GroDropCounter> current;
  std::lock_guard lock(mu);
  if (auto c = current.lock()) return c;
  auto c = std::make_shared<BpfGroDropCounter>();
  if (std::string failure = c->open(); !failure.empty()) {
    *why_not = std::move(failure);
    return nullptr;
  }
  current = c;
  return c;
}

}  // namespace netdaq::detail::socket_engine
