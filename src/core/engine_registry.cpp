// The engines netdaq knows: their descriptions (core/engine_descriptor.h) and the runtimes
// built in (core/engine.h), both filled once, on first use, from the generated lists.
#include <deque>
#include <map>
#include <mutex>

#include "core/engine.h"
#include "core/engine_descriptor.h"

namespace netdaq::detail {
void describe_builtin_engines();  // generated from src/engines_builtin.cpp.in
void register_builtin_engines();

namespace {
struct Registry {
  std::mutex mu;
  std::map<std::string, EngineFactory> factories;
  std::deque<EngineDescriptor> descriptors;  // a deque: pointers handed out stay valid
};
Registry& storage() {
  static Registry r;
  return r;
}
// The registry with the built-in engines in it.
Registry& registry() {
  static const bool builtins = (describe_builtin_engines(), register_builtin_engines(), true);
  (void)builtins;
  return storage();
}
}  // namespace

void Engine::add_flow(const FlowConfig& flow) {
  throw Error(Errc::unsupported, "flow " + std::to_string(flow.id) + ": this engine cannot add flows at run time");
}
void Engine::remove_flow(uint32_t id) {
  throw Error(Errc::unsupported, "flow " + std::to_string(id) + ": this engine cannot remove flows at run time");
}

void register_engine(const std::string& name, EngineFactory factory) {
  auto& r = storage();
  std::lock_guard lock(r.mu);
  r.factories[name] = factory;
}

EngineFactory find_engine(const std::string& name) {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.factories.find(name);
  return it == r.factories.end() ? nullptr : it->second;
}

void describe_engine(EngineDescriptor d) {
  auto& r = storage();
  std::lock_guard lock(r.mu);
  for (auto& e : r.descriptors)
    if (e.name == d.name) {
      e = std::move(d);
      return;
    }
  r.descriptors.push_back(std::move(d));
}

const EngineDescriptor* find_descriptor(std::string_view name) {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  for (const auto& e : r.descriptors)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<const EngineDescriptor*> engine_descriptors() {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<const EngineDescriptor*> out;
  for (const auto& e : r.descriptors) out.push_back(&e);
  return out;
}

std::vector<std::string> registered_engines() {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<std::string> names;
  for (auto& [n, f] : r.factories) names.push_back(n);
  return names;
}

}  // namespace netdaq::detail
