// libbpf's messages (load failures, verifier logs) go to netdaq's debug log, not stderr.
#pragma once

namespace netdaq::detail {

// Installs the hook once per process; safe to call from every libbpf user.
void route_libbpf_logs_to_debug();

}  // namespace netdaq::detail
