// rx.reorder mode roce (docs/roce-software.md): the checks of the `roce:` block, called by
// config_validate_reorder.cpp, which checks what every span mode shares.
#pragma once

#include <cstdint>
#include <string>

#include "core/config_check.h"

namespace netdaq::detail {

// The `roce:` block was written in YAML, or differs from its defaults in C++.
bool roce_set(const Checker& c, const ReorderConfig& g, const std::string& path);

// frame_bytes when left out: the largest queue_pairs[].slot_size; 0 while a queue pair has
// none (then frame_bytes is its size and must be given).
uint64_t roce_frame_bytes(const ReorderConfig& g) noexcept;

// The roce block of a reorder in mode roce; `q`: its rx queue (null when it has none).
void check_roce(Checker& c, const InterfaceConfig& iface, const QueueConfig* q, const ReorderConfig& g,
                const std::string& path);

}  // namespace netdaq::detail
