#include "core/app_blocks.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <type_traits>

#include "core/config_check.h"
#include "core/engine_descriptor.h"
#include "core/yaml_reader.h"

namespace netdaq {

namespace {
struct AppRegistry {
  std::mutex mu;
  std::vector<AppBlock> blocks;
};
AppRegistry& registry() {
  static AppRegistry r;
  return r;
}
}  // namespace

void register_app_block(AppBlock block) {
  // The library's own top-level keys, and the engines' top-level blocks (eal:).
  const bool taken = block.key == "memory_regions" || block.key == "interfaces" || block.key == "log" ||
                     std::ranges::any_of(detail::engine_descriptors(), [&](const auto* engine) {
                       return std::ranges::any_of(engine->blocks, [&](const auto& b) { return b.key == block.key; });
                     });
  if (block.key.empty() || taken)
    throw std::invalid_argument("app block '" + block.key + "': that top-level key belongs to netdaq or an engine");
  auto& r = registry();
  std::lock_guard lock(r.mu);
  auto same = std::ranges::find(r.blocks, block.key, &AppBlock::key);
  if (same != r.blocks.end()) *same = std::move(block);
  else r.blocks.push_back(std::move(block));
}

namespace detail {

std::vector<AppBlock> app_blocks() {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  return r.blocks;
}

void read_app_block(YamlReader& r, const YAML::Node& node, const std::string& path, const AppBlock& spec,
                    OptionBlock& block) {
  std::vector<YamlReader::Field> fields;
  for (const auto& o : spec.options)
    fields.push_back({o.key, [&r, &o, &block](const YAML::Node& v, const std::string& p) {
                        std::visit(
                            [&](auto* out) {
                              using T = std::remove_pointer_t<decltype(out)>;
                              if constexpr (std::is_same_v<T, bool>) r.boolean(v, p, *out);
                              else if constexpr (std::is_same_v<T, std::string>) r.text(v, p, *out);
                              else if constexpr (std::is_same_v<T, double>) r.number(v, p, *out, double(o.min));
                              else r.integer(v, p, *out, Range{o.min, o.max});
                            },
                            o.field(block));
                      }});
  r.map(node, path, fields);
}

bool app_block_without_interfaces(const Config& cfg) {
  for (const auto& spec : app_blocks())
    if (spec.without_interfaces && cfg.options.find(spec.key)) return true;
  return false;
}

void check_app_blocks(Checker& c) {
  const Config& cfg = c.config();
  for (const auto& spec : app_blocks()) {
    if (const OptionBlock* set = cfg.options.find(spec.key)) {
      auto block = set->clone();  // AppOption::field hands out mutable pointers
      for (const auto& o : spec.options) {
        const std::string key = spec.key + "." + o.key;
        const std::string note = o.note.empty() ? "" : " (" + o.note + ")";
        std::visit(
            [&](auto* v) {
              using T = std::remove_pointer_t<decltype(v)>;
              if constexpr (std::is_same_v<T, double>) {
                if (!std::isfinite(*v) || *v < double(o.min))
                  c.error(key, show(*v), "must be a number >= " + show(double(o.min)) + note);
              } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
                if (!Range{o.min, o.max}.contains(uint64_t{*v}))
                  c.error(key, std::to_string(*v), Range{o.min, o.max}.describe() + note);
              }
            },
            o.field(*block));
      }
    }
    if (spec.check) {
      std::vector<ConfigIssue> issues;
      spec.check(cfg, issues);
      for (auto& i : issues) c.add(std::move(i));
    }
  }
}

}  // namespace detail
}  // namespace netdaq
