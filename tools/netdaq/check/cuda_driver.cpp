#include "check/cuda_driver.h"

#include <dlfcn.h>
#include <unistd.h>

#include "check/dl_symbol.h"
#include "check/sys_values.h"

namespace netdaq::cli::check {

namespace {

// Driver API values (cuda.h), spelled out: the CLI is compiled without the CUDA headers.
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUdeviceptr = unsigned long long;
constexpr int kAttrGpuDirectRdmaSupported = 116;  // CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED
constexpr int kAttrDmaBufSupported = 124;         // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
constexpr int kHandleTypeDmaBufFd = 1;            // CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD

struct Api {
  void* lib = nullptr;
  std::string why;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemGetHandleForAddressRange)(void*, CUdeviceptr, size_t, int, unsigned long long) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
};

const Api& api() {
  static const Api a = [] {
    Api x;
    x.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!x.lib) {
      x.why = "no NVIDIA driver: libcuda.so.1 cannot be loaded";
      return x;
    }
    // The _v2 names are the current ABI of the calls cuda.h renames with macros.
    const bool ok = dl_symbol(x.lib, "cuInit", x.cuInit) && dl_symbol(x.lib, "cuDriverGetVersion", x.cuDriverGetVersion) &&
                    dl_symbol(x.lib, "cuDeviceGetCount", x.cuDeviceGetCount) && dl_symbol(x.lib, "cuDeviceGet", x.cuDeviceGet) &&
                    dl_symbol(x.lib, "cuDeviceGetName", x.cuDeviceGetName) &&
                    dl_symbol(x.lib, "cuDeviceGetPCIBusId", x.cuDeviceGetPCIBusId) &&
                    dl_symbol(x.lib, "cuDeviceTotalMem_v2", x.cuDeviceTotalMem) &&
                    dl_symbol(x.lib, "cuDeviceGetAttribute", x.cuDeviceGetAttribute) &&
                    dl_symbol(x.lib, "cuDevicePrimaryCtxRetain", x.cuDevicePrimaryCtxRetain) &&
                    dl_symbol(x.lib, "cuDevicePrimaryCtxRelease_v2", x.cuDevicePrimaryCtxRelease) &&
                    dl_symbol(x.lib, "cuCtxPushCurrent_v2", x.cuCtxPushCurrent) &&
                    dl_symbol(x.lib, "cuCtxPopCurrent_v2", x.cuCtxPopCurrent) && dl_symbol(x.lib, "cuMemAlloc_v2", x.cuMemAlloc) &&
                    dl_symbol(x.lib, "cuMemFree_v2", x.cuMemFree) && dl_symbol(x.lib, "cuGetErrorName", x.cuGetErrorName);
    if (!ok) {
      x.why = "libcuda.so.1 lacks a driver API call netdaq check needs (driver too old)";
      x.cuInit = nullptr;
      return x;
    }
    (void)dl_symbol(x.lib, "cuMemGetHandleForAddressRange", x.cuMemGetHandleForAddressRange);  // driver >= 515
    return x;
  }();
  return a;
}

std::string error_name(CUresult r) {
  const char* n = nullptr;
  if (api().cuGetErrorName) api().cuGetErrorName(r, &n);
  return n ? n : "CUresult " + std::to_string(r);
}

}  // namespace

CudaDriverInfo query_cuda_driver() {
  CudaDriverInfo info;
  const Api& a = api();
  if (!a.cuInit) {
    info.why = a.why;
    return info;
  }
  if (const CUresult r = a.cuInit(0); r != 0) {
    info.why = "cuInit failed: " + error_name(r);
    return info;
  }
  info.usable = true;
  a.cuDriverGetVersion(&info.version);
  int n = 0;
  a.cuDeviceGetCount(&n);
  for (int i = 0; i < n; ++i) {
    CUdevice dev = 0;
    if (a.cuDeviceGet(&dev, i) != 0) continue;
    CudaGpu g;
    g.index = i;
    char buf[256] = {};
    if (a.cuDeviceGetName(buf, sizeof buf, dev) == 0) g.name = buf;
    char bus[64] = {};
    if (a.cuDeviceGetPCIBusId(bus, sizeof bus, dev) == 0) g.bdf = normalize_bdf(bus).value_or(bus);
    size_t mem = 0;
    if (a.cuDeviceTotalMem(&mem, dev) == 0) g.memory_bytes = mem;
    int v = 0;
    if (a.cuDeviceGetAttribute(&v, kAttrDmaBufSupported, dev) == 0) g.dmabuf = v != 0;
    if (a.cuDeviceGetAttribute(&v, kAttrGpuDirectRdmaSupported, dev) == 0) g.gdr = v != 0;
    info.gpus.push_back(std::move(g));
  }
  return info;
}

bool with_device_dmabuf(int gpu, size_t bytes, const std::function<void(int, uint64_t, size_t)>& use,
                        std::string* why) {
  const Api& a = api();
  if (!a.cuInit) return *why = a.why, false;
  if (!a.cuMemGetHandleForAddressRange)
    return *why = "the driver has no cuMemGetHandleForAddressRange (older than 515)", false;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if (CUresult r = a.cuDeviceGet(&dev, gpu); r != 0) return *why = "cuDeviceGet: " + error_name(r), false;
  if (CUresult r = a.cuDevicePrimaryCtxRetain(&ctx, dev); r != 0)
    return *why = "cuDevicePrimaryCtxRetain: " + error_name(r), false;
  a.cuCtxPushCurrent(ctx);
  bool ok = false;
  CUdeviceptr p = 0;
  if (CUresult r = a.cuMemAlloc(&p, bytes); r != 0) {
    *why = "cuMemAlloc of " + bytes_text(bytes) + ": " + error_name(r);
  } else {
    int fd = -1;
    if (CUresult r2 = a.cuMemGetHandleForAddressRange(&fd, p, bytes, kHandleTypeDmaBufFd, 0); r2 != 0 || fd < 0) {
      *why = "cuMemGetHandleForAddressRange(DMA_BUF_FD): " + error_name(r2);
    } else {
      use(fd, p, bytes);
      ::close(fd);
      ok = true;
    }
    a.cuMemFree(p);
  }
  CUcontext popped = nullptr;
  a.cuCtxPopCurrent(&popped);
  a.cuDevicePrimaryCtxRelease(dev);
  return ok;
}

}  // namespace netdaq::cli::check
