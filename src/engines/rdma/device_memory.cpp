#include "engines/rdma/device_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

#include "core/log.h"
#include "netdaq/status.h"

namespace netdaq::detail::rdma {

namespace {

constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

std::string region_text(const MemoryRegion& region, ibv_context* device) {
  return "memory region '" + region.name() + "' (" + std::to_string(region.size() >> 20) + " MiB" +
         (region.gpu() >= 0 ? ", GPU " + std::to_string(region.gpu()) : "") + ") with " + device_name(device);
}

// Host memory: ibv_reg_mr, with the memlock limit named when that is what refused it.
MemoryRegistration register_host(ibv_pd* pd, const MemoryRegion& region, const std::string& what) {
  MemoryRegistration mr(ibv_reg_mr(pd, region.base(), region.size(), kAccess));
  if (mr) return mr;
  const int err = errno;
  std::string why = what + ": ibv_reg_mr: " + last_error();
  rlimit lim{};
  if ((err == ENOMEM || err == EPERM || err == EFAULT) && getrlimit(RLIMIT_MEMLOCK, &lim) == 0 &&
      lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < region.size())
    why += "; the locked-memory limit is " + std::to_string(lim.rlim_cur >> 10) +
           " KiB (raise it: ulimit -l unlimited, or LimitMEMLOCK= in a systemd unit)";
  throw Error(Errc::resource, why);
}

}  // namespace

std::string device_name(ibv_context* device) { return device ? ibv_get_device_name(device->device) : "?"; }

MemoryRegistration register_dmabuf(ibv_pd* pd, const DmaBuf& buf, void* iova, std::string& why) {
  // The work requests name buffers by their address in the region (iova = base), as for host
  // memory; the dma-buf's pages behind them start at buf.offset.
  MemoryRegistration mr(
      ibv_reg_dmabuf_mr(pd, buf.offset, buf.size, reinterpret_cast<uintptr_t>(iova), buf.fd, kAccess));
  if (!mr) {
    const int err = errno;
    why = "ibv_reg_dmabuf_mr: " + last_error();
    if (err == EOPNOTSUPP || err == ENOSYS)
      why += " (this device or its driver cannot map dma-bufs; rxe never can; ConnectX needs kernel >= 5.12 "
             "and rdma-core >= 34)";
  }
  return mr;
}

MemoryRegistration register_device_memory(ibv_pd* pd, const MemoryRegion& region, const std::string& what) {
  // 1. dma-buf: the GPU driver exports the memory, the NIC driver maps it (no extra module).
  std::string dmabuf_why;
  MemoryRegistration mr;
  try {
    const DmaBuf buf = region.export_dmabuf();
    mr = register_dmabuf(pd, buf, region.base(), dmabuf_why);
    ::close(buf.fd);  // the registration holds its own reference
  } catch (const Error& e) {
    dmabuf_why = e.what();
  }
  if (mr) return mr;
  // 2. nvidia-peermem: the NIC driver pins the device pointer through the peer-memory API.
  mr.reset(ibv_reg_mr(pd, region.base(), region.size(), kAccess));
  if (mr) {
    log()->warn("{}: dma-buf registration failed ({}); registered through nvidia-peermem instead", what, dmabuf_why);
    return mr;
  }
  const std::string peermem_why = "ibv_reg_mr on the device pointer: " + last_error() +
                                  " (needs the nvidia_peermem module with a MOFED or inbox peer-memory NIC driver)";
  throw Error(Errc::unsupported,
              what + ": GPU memory cannot be registered; tried 1. dma-buf: " + dmabuf_why + "; 2. nvidia-peermem: " +
                  peermem_why +
                  ". GPUDirect RDMA needs dma-buf (open GPU kernel modules >= 515, kernel >= 5.12) or nvidia-peermem; "
                  "without either, put the queue in a pinned region (kind: pinned) and move the data to the GPU "
                  "from there");
}

DeviceMemory::DeviceMemory(ibv_context* device) : device_(device), pd_(ibv_alloc_pd(device)) {
  if (!pd_) throw Error(Errc::system, "rdma device " + device_name(device) + ": ibv_alloc_pd: " + last_error());
}

ibv_mr* DeviceMemory::registration(const MemoryRegion& region, const std::string& context) {
  std::lock_guard lock(mu_);
  if (auto it = registrations_.find(&region); it != registrations_.end()) return it->second.get();
  const std::string what = context + ": registering " + region_text(region, device_);
  MemoryRegistration mr = region.cpu_accessible() ? register_host(pd_.get(), region, what)
                                                  : register_device_memory(pd_.get(), region, what);
  return registrations_.emplace(&region, std::move(mr)).first->second.get();
}

}  // namespace netdaq::detail::rdma
