// How libnetdaq words an errno in messages and logs, in one place.
#pragma once

#include <string>

namespace netdaq::detail {

// The system's text for an errno ("Address already in use"). A negative value is read as
// -errno (libbpf and DPDK return those). Thread-safe, unlike std::strerror.
std::string errno_text(int err);

// Its symbolic name ("EADDRINUSE") for the errors setup messages name, else "errno <n>".
std::string errno_name(int err);

}  // namespace netdaq::detail
