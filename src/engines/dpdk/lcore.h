// Threads that poll DPDK queues (netdaq's workers, the application's thread in direct mode)
// register as DPDK lcores on their first burst, so mempool caches work for them; they leave
// again when the thread ends.
#pragma once

#include <rte_lcore.h>

namespace netdaq::detail::dpdk {

void register_thread_slow() noexcept;

inline void ensure_lcore() noexcept {
  if (__builtin_expect(rte_lcore_id() == LCORE_ID_ANY, 0)) register_thread_slow();
}

}  // namespace netdaq::detail::dpdk
