// Names of enums and small lookups on Config and QueueStats.
#include "netdaq/config.h"
#include "netdaq/stats.h"

namespace netdaq {

const char* to_string(MemoryKind k) noexcept {
  switch (k) {
    case MemoryKind::host: return "host";
    case MemoryKind::huge: return "huge";
    case MemoryKind::pinned: return "pinned";
    case MemoryKind::mapped: return "mapped";
    case MemoryKind::device: return "device";
  }
  return "?";
}

const char* to_string(PollMode m) noexcept { return m == PollMode::worker ? "worker" : "direct"; }

const char* to_string(SampleFormat f) noexcept {
  switch (f) {
    case SampleFormat::raw: return "raw";
    case SampleFormat::int4: return "int4";
    case SampleFormat::int8: return "int8";
    case SampleFormat::int16: return "int16";
    case SampleFormat::fp16: return "fp16";
    case SampleFormat::bf16: return "bf16";
    case SampleFormat::fp32: return "fp32";
  }
  return "?";
}

const char* to_string(ByteOrder o) noexcept { return o == ByteOrder::big ? "big" : "little"; }

const char* to_string(ReorderMode m) noexcept { return m == ReorderMode::arrival ? "arrival" : "sequence"; }

const char* to_string(Staging s) noexcept {
  switch (s) {
    case Staging::automatic: return "auto";
    case Staging::copy: return "copy";
    case Staging::direct: return "direct";
  }
  return "?";
}

const char* to_string(LaunchMode m) noexcept {
  switch (m) {
    case LaunchMode::per_burst: return "per_burst";
    case LaunchMode::graph: return "graph";
    case LaunchMode::persistent: return "persistent";
  }
  return "?";
}

const char* to_string(XdpAttach a) noexcept {
  switch (a) {
    case XdpAttach::automatic: return "auto";
    case XdpAttach::native: return "native";
    case XdpAttach::generic: return "generic";
  }
  return "?";
}

const char* to_string(XskMode m) noexcept {
  switch (m) {
    case XskMode::automatic: return "auto";
    case XskMode::zero_copy: return "zero_copy";
    case XskMode::copy: return "copy";
  }
  return "?";
}

const char* to_string(DpdkLoopback l) noexcept {
  switch (l) {
    case DpdkLoopback::none: return "none";
    case DpdkLoopback::software: return "software";
    case DpdkLoopback::hardware: return "hardware";
  }
  return "?";
}

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
