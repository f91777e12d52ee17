// PLACEHOLDER: replaced by the socket engine.
#include "core/engine.h"
namespace netdaq::detail {
void register_socket_engine() {}
}  // namespace netdaq::detail
