#include "core/engine_descriptor.h"

#include <deque>
#include <mutex>

#include "core/engine.h"
#include "core/option_table.h"

namespace netdaq::detail {
void describe_builtin_engines();  // generated from src/engines_builtin.cpp.in

namespace {
struct Descriptors {
  std::mutex mu;
  std::deque<EngineDescriptor> all;  // a deque: pointers handed out stay valid
};
Descriptors& storage() {
  static Descriptors d;
  return d;
}
// The descriptors with every engine netdaq knows in them (described once, on first use).
Descriptors& descriptors() {
  static const bool described = (describe_builtin_engines(), true);
  (void)described;
  return storage();
}
}  // namespace

void describe_engine(EngineDescriptor d) {
  auto& s = storage();
  std::lock_guard lock(s.mu);
  for (auto& e : s.all)
    if (e.name == d.name) {
      e = std::move(d);
      return;
    }
  s.all.push_back(std::move(d));
}

const EngineDescriptor* find_descriptor(std::string_view name) {
  auto& s = descriptors();
  std::lock_guard lock(s.mu);
  for (const auto& e : s.all)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<const EngineDescriptor*> engine_descriptors() {
  auto& s = descriptors();
  std::lock_guard lock(s.mu);
  std::vector<const EngineDescriptor*> out;
  for (const auto& e : s.all) out.push_back(&e);
  return out;
}

std::vector<std::string_view> described_engine_names() {
  std::vector<std::string_view> names;
  for (const auto* d : engine_descriptors()) names.push_back(d->name);
  return names;
}

namespace option {
std::string show_list(std::span<const std::string> items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s.empty() ? "empty" : s;
}
std::string show_list(std::span<const int> items) {
  std::string s;
  for (int i : items) s += (s.empty() ? "" : ", ") + std::to_string(i);
  return s.empty() ? "empty" : s;
}
}  // namespace option

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
