#include "core/engine_descriptor.h"

#include "core/engine.h"

namespace netdaq::detail {

std::vector<std::string_view> described_engine_names() {
  std::vector<std::string_view> names;
  for (const auto* d : engine_descriptors()) names.push_back(d->name);
  return names;
}

}  // namespace netdaq::detail

namespace netdaq {

namespace {
EngineInfo info_of(const detail::EngineDescriptor& d) {
  return EngineInfo{d.name, detail::find_engine(d.name) != nullptr, d.capabilities};
}
}  // namespace

std::vector<EngineInfo> known_engines() {
  std::vector<EngineInfo> out;
  for (const auto* d : detail::engine_descriptors()) out.push_back(info_of(*d));
  return out;
}

std::optional<EngineInfo> engine_info(std::string_view name) {
  const auto* d = detail::find_descriptor(name);
  if (!d) return std::nullopt;
  return info_of(*d);
}

std::optional<EngineCapabilities> capabilities_of(const InterfaceConfig& iface) {
  const auto* d = detail::find_descriptor(iface.engine);
  if (!d) return std::nullopt;
  return d->capabilities_of ? d->capabilities_of(iface) : d->capabilities;
}

}  // namespace netdaq
