#include "engines/afxdp/umem.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "netdaq/status.h"
#include "util/errno_text.h"

namespace netdaq::detail::afxdp {

std::string privilege_or_memlock_hint(int err, size_t bytes) {
  err = err < 0 ? -err : err;
  if (err == EPERM || err == EACCES)
    return "insufficient privileges: AF_XDP sockets need root or CAP_NET_RAW (+ CAP_NET_ADMIN, CAP_BPF)";
  if (err == ENOBUFS || err == ENOMEM) {
    rlimit lim{};
    getrlimit(RLIMIT_MEMLOCK, &lim);
    const std::string limit = lim.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(lim.rlim_cur >> 10) + " KiB";
    return "cannot lock " + std::to_string(bytes >> 10) + " KiB of UMEM (memlock limit " + limit +
           "): raise it (ulimit -l unlimited, or LimitMEMLOCK=infinity for a service), run with CAP_IPC_LOCK, "
           "or use fewer/smaller buffers";
  }
  return errno_text(err);
}

Umem::Umem(BufferPool& pool, const AfxdpOptions& opts, const std::string& context) : pool_(pool) {
  const size_t chunk = pool.stride();
  const long page = sysconf(_SC_PAGESIZE);
  if (chunk < 2048 || chunk > static_cast<size_t>(page) || (chunk & (chunk - 1)))
    throw Error(Errc::invalid_config, context + ": region '" + pool.region().name() + "' has buffers of " +
                                          std::to_string(pool.buf_size()) +
                                          " B; an AF_XDP UMEM needs 2048 or 4096 (a power of two up to the page size)");
  if (opts.fill_ring > pool.capacity())
    throw Error(Errc::invalid_config, context + ": UMEM too small for the rings: fill_ring " +
                                          std::to_string(opts.fill_ring) + " > " + std::to_string(pool.capacity()) +
                                          " buffers of region '" + pool.region().name() + "'");
  xsk_umem_config cfg{};
  cfg.fill_size = opts.fill_ring;
  cfg.comp_size = opts.comp_ring;
  cfg.frame_size = static_cast<uint32_t>(chunk);
  cfg.frame_headroom = 0;
  cfg.flags = 0;
  const size_t bytes = chunk * pool.capacity();
  if (int err = xsk_umem__create(&umem_, pool.address(0), bytes, &fill_, &comp_, &cfg))
    throw Error(Errc::resource, context + ": cannot register region '" + pool.region().name() +
                                    "' as AF_XDP UMEM (" + errno_text(err) + "): " +
                                    privilege_or_memlock_hint(err, bytes));
}

Umem::~Umem() {
  if (umem_) xsk_umem__delete(umem_);
}

void Umem::take_first_rings(xsk_ring_prod** fill, xsk_ring_cons** comp) noexcept {
  first_taken_ = true;
  *fill = &fill_;
  *comp = &comp_;
}

}  // namespace netdaq::detail::afxdp
