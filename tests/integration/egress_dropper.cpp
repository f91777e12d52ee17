#include "egress_dropper.h"

#include <stdexcept>

#if NETDAQ_TEST_EGRESS_DROPPER
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>

#include <cerrno>
#include <string>

#include "bpf/drop_every_nth_abi.h"
#include "util/errno_text.h"

extern "C" const char netdaq_test_drop_every_nth_obj[];
extern "C" const char netdaq_test_drop_every_nth_obj_end[];

namespace ndqtest {

struct EgressDropper::Impl {
  NetnsLab& lab;
  bpf_object* obj = nullptr;
  int map_fd = -1;
  bpf_tc_hook hook{};
  bpf_tc_opts opts{};
  bool attached = false;

  explicit Impl(NetnsLab& l) : lab(l) {}

  ndq_test_dropper read() const {
    ndq_test_dropper d{};
    const uint32_t zero = 0;
    if (bpf_map_lookup_elem(map_fd, &zero, &d) != 0)
      throw std::runtime_error("egress dropper: reading its map: " + netdaq::detail::errno_text(errno));
    return d;
  }

  // In namespace B (tc's netlink socket is the calling thread's namespace's).
  void attach(uint16_t port, uint32_t every, uint32_t phase) {
    auto fail = [](const std::string& what, int err) {
      throw std::runtime_error("egress dropper: " + what + ": " + netdaq::detail::errno_text(err));
    };
    obj = bpf_object__open_mem(netdaq_test_drop_every_nth_obj,
                               netdaq_test_drop_every_nth_obj_end - netdaq_test_drop_every_nth_obj, nullptr);
    if (!obj) fail("opening the embedded eBPF object", errno);
    if (const int e = bpf_object__load(obj)) fail("loading drop_every_nth", e);
    map_fd = bpf_object__find_map_fd_by_name(obj, "dropper");
    const ndq_test_dropper d{every, phase, port, {}, 0, 0};
    const uint32_t zero = 0;
    if (bpf_map_update_elem(map_fd, &zero, &d, BPF_ANY) != 0) fail("setting its map", errno);
    hook.sz = sizeof hook;
    hook.ifindex = static_cast<int>(if_nametoindex(lab.b().veth.c_str()));
    hook.attach_point = BPF_TC_EGRESS;
    if (hook.ifindex == 0) fail(lab.b().veth, errno);
    if (const int e = bpf_tc_hook_create(&hook); e && e != -EEXIST) fail("the clsact queueing discipline", e);
    opts.sz = sizeof opts;
    opts.prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "drop_every_nth"));
    if (const int e = bpf_tc_attach(&hook, &opts)) fail("attaching at " + lab.b().veth + "'s egress", e);
    attached = true;
  }

  void detach() noexcept {
    if (attached) {
      bpf_tc_opts o{};
      o.sz = sizeof o;
      o.handle = opts.handle;
      o.priority = opts.priority;
      bpf_tc_detach(&hook, &o);
      hook.attach_point = static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS);
      bpf_tc_hook_destroy(&hook);  // the clsact qdisc
    }
    bpf_object__close(obj);
  }
};

EgressDropper::EgressDropper(NetnsLab& lab, uint16_t port, uint32_t every, uint32_t phase)
    : impl_(std::make_unique<Impl>(lab)) {
  try {
    lab.run_in(lab.b().ns, [&] { impl_->attach(port, every, phase); });
  } catch (...) {
    lab.run_in(lab.b().ns, [&] { impl_->detach(); });
    throw;
  }
}

EgressDropper::~EgressDropper() {
  try {
    impl_->lab.run_in(impl_->lab.b().ns, [&] { impl_->detach(); });
  } catch (...) {  // the namespace is going with the lab: so are the program and its qdisc
  }
}

uint64_t EgressDropper::seen() const { return impl_->read().seen; }
uint64_t EgressDropper::dropped() const { return impl_->read().dropped; }

}  // namespace ndqtest

#else  // built without the afxdp engine (libbpf, clang): nothing to load

namespace ndqtest {
struct EgressDropper::Impl {};
EgressDropper::EgressDropper(NetnsLab&, uint16_t, uint32_t, uint32_t) {
  throw std::runtime_error("egress dropper: netdaq was built without the afxdp engine (libbpf, clang)");
}
EgressDropper::~EgressDropper() = default;
uint64_t EgressDropper::seen() const { return 0; }
uint64_t EgressDropper::dropped() const { return 0; }
}  // namespace ndqtest

#endif
