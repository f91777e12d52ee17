// GroDropCounter where netdaq was built without libbpf or clang: never available.
#include "engines/socket/gro_drops.h"

namespace netdaq::detail::socket_engine {

std::shared_ptr<GroDropCounter> GroDropCounter::acquire(std::string* why_not) {
  *why_not = "netdaq was built without libbpf and clang (apt-get install libbpf-dev clang, then rebuild)";
  return nullptr;
}

}  // namespace netdaq::detail::socket_engine
