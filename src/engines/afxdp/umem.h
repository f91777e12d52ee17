// A UMEM: one memory region's buffer pool registered with AF_XDP, shared by every XSK of the
// interface that uses the region. Its first XSK takes the fill/completion rings made with it.
#pragma once

#include <xdp/xsk.h>

#include <string>

#include "core/buffer_pool.h"
#include "netdaq/config.h"
#include "netdaq/engines/afxdp.h"

namespace netdaq::detail::afxdp {

class Umem {
 public:
  // Throws Error: chunk size, memory lock limit, privileges.
  Umem(BufferPool& pool, const AfxdpOptions& opts, const std::string& context);
  ~Umem();
  Umem(const Umem&) = delete;
  Umem& operator=(const Umem&) = delete;

  xsk_umem* get() const noexcept { return umem_; }
  BufferPool& pool() const noexcept { return pool_; }
  uint64_t chunk() const noexcept { return pool_.stride(); }
  // The rings made with the UMEM, for its first socket (nullptr once taken).
  bool first_rings_free() const noexcept { return !first_taken_; }
  void take_first_rings(xsk_ring_prod** fill, xsk_ring_cons** comp) noexcept;
  // How the first socket bound; later sockets sharing the UMEM inherit it.
  bool zero_copy = false;
  bool need_wakeup = false;
  bool multi_buffer = false;       // bound with XDP_USE_SG (the kernel keeps it in the UMEM)
  std::string multi_buffer_refused;  // why XDP_USE_SG was refused ("" if it was not)

 private:
  BufferPool& pool_;
  xsk_umem* umem_ = nullptr;
  xsk_ring_prod fill_{};
  xsk_ring_cons comp_{};
  bool first_taken_ = false;
};

// The message for a failed UMEM/XSK call that needs privileges or locked memory.
std::string privilege_or_memlock_hint(int err, size_t bytes);

}  // namespace netdaq::detail::afxdp
