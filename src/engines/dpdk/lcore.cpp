#include "engines/dpdk/lcore.h"

#include "core/log.h"

namespace netdaq::detail::dpdk {

namespace {
struct Registration {
  bool tried = false;
  bool registered = false;
  ~Registration() {
    if (registered) rte_thread_unregister();
  }
};
thread_local Registration registration;
}  // namespace

void register_thread_slow() noexcept {
  if (registration.tried) return;  // no lcore left: run without mempool caches
  registration.tried = true;
  registration.registered = rte_thread_register() == 0;
  if (!registration.registered)
    log()->warn("dpdk: cannot register this thread as an lcore (all {} in use): mempool caches are off for it",
                RTE_MAX_LCORE);
}

}  // namespace netdaq::detail::dpdk
