// Names of enums and small lookups on Config and QueueStats.
#include "core/config_limits.h"
#include "netdaq/config.h"
#include "netdaq/stats.h"

namespace netdaq {

namespace {
// The name of an enum value from its table in core/config_limits.h (the YAML reader's too).
template <class E, size_t N>
const char* name_of(E value, const std::array<std::string_view, N>& names) noexcept {
  const auto i = static_cast<size_t>(value);
  return i < N ? names[i].data() : "?";
}
}  // namespace

const char* to_string(MemoryKind k) noexcept { return name_of(k, detail::kMemoryKindNames); }
const char* to_string(PollMode m) noexcept { return name_of(m, detail::kPollModeNames); }
const char* to_string(SampleFormat f) noexcept { return name_of(f, detail::kSampleFormatNames); }
const char* to_string(ByteOrder o) noexcept { return name_of(o, detail::kByteOrderNames); }
const char* to_string(ReorderMode m) noexcept { return name_of(m, detail::kReorderModeNames); }
const char* to_string(Staging s) noexcept { return name_of(s, detail::kStagingNames); }
const char* to_string(LaunchMode m) noexcept { return name_of(m, detail::kLaunchModeNames); }
const char* to_string(FrameTarget t) noexcept { return name_of(t, detail::kFrameTargetNames); }
const char* to_string(VideoSampling s) noexcept { return name_of(s, detail::kVideoSamplingNames); }
const char* to_string(VideoUnpack u) noexcept { return name_of(u, detail::kVideoUnpackNames); }
const char* to_string(VideoRows r) noexcept { return name_of(r, detail::kVideoRowsNames); }

const char* to_string(DropReason r) noexcept {
  switch (r) {
    case DropReason::ring_full: return "ring_full";
    case DropReason::pool_empty: return "pool_empty";
    case DropReason::kernel: return "kernel";
    case DropReason::malformed: return "malformed";
    case DropReason::oversize: return "oversize";
    case DropReason::flow_miss: return "flow_miss";
    case DropReason::tx_full: return "tx_full";
    case DropReason::tx_error: return "tx_error";
    case DropReason::tx_unsent: return "tx_unsent";
    case DropReason::count_: break;
  }
  return "?";
}

uint64_t QueueStats::total_drops() const noexcept {
  uint64_t n = 0;
  for (auto d : drops) n += d;
  return n;
}

const MemoryRegionConfig* Config::find_region(const std::string& name) const {
  for (const auto& r : memory_regions)
    if (r.name == name) return &r;
  return nullptr;
}

const InterfaceConfig* Config::find_interface(const std::string& name) const {
  for (const auto& i : interfaces)
    if (i.name == name) return &i;
  return nullptr;
}

SourceLocation Config::location_of(const std::string& key) const {
  std::string k = key;
  for (;;) {
    if (auto it = locations.find(k); it != locations.end()) return it->second;
    const auto cut = k.find_last_of(".[");
    if (cut == std::string::npos || cut == 0) break;
    k.resize(cut);
  }
  return SourceLocation{source, 0, 0};
}

}  // namespace netdaq
