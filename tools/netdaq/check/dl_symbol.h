// Looks up a symbol of a library netdaq check loads at run time (libcuda, NVML, libibverbs are
// the driver's and rdma-core's: dlopened so the CLI runs, and says why, where they are absent).
#pragma once

#include <dlfcn.h>

namespace netdaq::cli::check {

// Sets f to the symbol `name` of lib; false when lib has no such symbol.
template <class F>
bool dl_symbol(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

}  // namespace netdaq::cli::check
