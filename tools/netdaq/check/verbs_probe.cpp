#include "check/verbs_probe.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstring>

#include "check/dl_symbol.h"

namespace netdaq::cli::check {

namespace {

// ibv_* objects stay opaque: only pointers pass through (rdma-core's stable ABI).
struct Api {
  void** (*get_device_list)(int*) = nullptr;
  void (*free_device_list)(void**) = nullptr;
  const char* (*get_device_name)(void*) = nullptr;
  void* (*open_device)(void*) = nullptr;
  int (*close_device)(void*) = nullptr;
  void* (*alloc_pd)(void*) = nullptr;
  int (*dealloc_pd)(void*) = nullptr;
  void* (*reg_dmabuf_mr)(void*, uint64_t, size_t, uint64_t, int, int) = nullptr;
  int (*dereg_mr)(void*) = nullptr;
};
constexpr int kAccess = 1 | 2 | 4;  // IBV_ACCESS_LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ

}  // namespace

std::vector<DmabufRegistration> register_dmabuf_everywhere(int fd, size_t size, uint64_t iova, std::string* why) {
  std::vector<DmabufRegistration> out;
  void* lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return *why = "libibverbs.so.1 cannot be loaded (apt-get install libibverbs1)", out;
  Api a;
  if (!(dl_symbol(lib, "ibv_get_device_list", a.get_device_list) && dl_symbol(lib, "ibv_free_device_list", a.free_device_list) &&
        dl_symbol(lib, "ibv_get_device_name", a.get_device_name) && dl_symbol(lib, "ibv_open_device", a.open_device) &&
        dl_symbol(lib, "ibv_close_device", a.close_device) && dl_symbol(lib, "ibv_alloc_pd", a.alloc_pd) &&
        dl_symbol(lib, "ibv_dealloc_pd", a.dealloc_pd) && dl_symbol(lib, "ibv_dereg_mr", a.dereg_mr))) {
    *why = "libibverbs.so.1 lacks the calls the probe needs";
    return out;
  }
  if (!dl_symbol(lib, "ibv_reg_dmabuf_mr", a.reg_dmabuf_mr)) {
    *why = "libibverbs has no ibv_reg_dmabuf_mr (rdma-core older than 34)";
    return out;
  }
  int n = 0;
  void** list = a.get_device_list(&n);
  if (!list || n == 0) {
    if (list) a.free_device_list(list);
    *why = "no RDMA device";
    return out;
  }
  for (int i = 0; i < n; ++i) {
    DmabufRegistration r;
    r.device = a.get_device_name(list[i]);
    void* ctx = a.open_device(list[i]);
    void* pd = ctx ? a.alloc_pd(ctx) : nullptr;
    if (!ctx || !pd) {
      r.detail = std::string(!ctx ? "ibv_open_device: " : "ibv_alloc_pd: ") + std::strerror(errno);
    } else if (void* mr = a.reg_dmabuf_mr(pd, 0, size, iova, fd, kAccess)) {
      r.ok = true;
      a.dereg_mr(mr);
    } else {
      const int err = errno;
      r.unsupported = err == EOPNOTSUPP || err == ENOSYS;
      r.detail = std::string("ibv_reg_dmabuf_mr: ") + std::strerror(err) + " (errno " + std::to_string(err) + ")";
    }
    if (pd) a.dealloc_pd(pd);
    if (ctx) a.close_device(ctx);
    out.push_back(std::move(r));
  }
  a.free_device_list(list);
  return out;
}

}  // namespace netdaq::cli::check
