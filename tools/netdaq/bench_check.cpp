#include "bench_check.h"

#include <algorithm>
#include <array>

#include "format.h"

namespace netdaq::cli {

uint64_t gro_batch_limit(uint32_t size) noexcept {
  return std::max<uint64_t>(1, std::min<uint64_t>(128, 65507 / std::max<uint32_t>(size, 1)));
}

bool kernel_drops_per_batch(const QueueStats& s) noexcept {
  // the socket engine's mode without its per-datagram counter (udp_rx.cpp watch_gro_drops)
  return s.is_rx && s.mode.find("counted per batch") != std::string::npos;
}

BenchAccounting bench_accounting(uint64_t lost, const std::vector<QueueStats>& stats, uint32_t size) {
  BenchAccounting a;
  a.lost = lost;
  std::array<uint64_t, kDropReasons> by_reason{};
  for (const QueueStats& s : stats) {
    for (size_t i = 0; i < kDropReasons; ++i) {
      const auto r = static_cast<DropReason>(i);
      if (r == DropReason::tx_full || r == DropReason::tx_unsent) continue;
      by_reason[i] += s.drops[i];
      a.counted += s.drops[i];
    }
    if (kernel_drops_per_batch(s)) {
      a.batch_kernel += s.drop(DropReason::kernel);
      a.kernel_drops_counted = "per batch";
    }
  }
  if (a.batch_kernel) a.batch = gro_batch_limit(size);
  for (size_t i = 0; i < kDropReasons; ++i)
    if (by_reason[i])
      a.reasons += (a.reasons.empty() ? "" : ", ") + std::string(to_string(static_cast<DropReason>(i))) + "=" +
                   format_count(by_reason[i]);
  if (a.reasons.empty()) a.reasons = "none";
  return a;
}

std::string BenchAccounting::describe() const {
  std::string s = "lost " + format_count(lost) + (holds() ? " == " : " != ") + "counted drops ";
  s += most() == counted ? format_count(counted)
                         : format_count(counted) + " to " + format_count(most()) + " (" + format_count(batch_kernel) +
                               " kernel drops of GRO batches of up to " + std::to_string(batch) + " datagrams)";
  return s + " (" + reasons + ")";
}

}  // namespace netdaq::cli
