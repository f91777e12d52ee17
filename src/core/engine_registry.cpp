#include <map>
#include <mutex>

#include "core/engine.h"

namespace netdaq::detail {
void register_builtin_engines();  // generated from src/engines_builtin.cpp.in

namespace {
struct Registry {
  std::mutex mu;
  std::map<std::string, EngineFactory> factories;
};
Registry& storage() {
  static Registry r;
  return r;
}
// The registry with the built-in engines in it (registered once, on first use).
Registry& registry() {
  static const bool builtins = (register_builtin_engines(), true);
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

std::vector<std::string> registered_engines() {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  std::vector<std::string> names;
  for (auto& [n, f] : r.factories) names.push_back(n);
  return names;
}

}  // namespace netdaq::detail
