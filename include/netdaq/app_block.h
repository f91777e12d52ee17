// An application's own top-level block in a netdaq config file (the CLI's `run:`), so one
// file can hold a whole instrument's settings. The application declares each option once
// (key, member, allowed range, one-line doc) and registers the block before loading; then
// Config::load reads it with the library's file:line messages into Config::options
// (cfg.options.get<T>()), and Config::validate checks the declared ranges and runs the
// application's own check. The library does nothing else with it.
//
//   struct RunOptions { static constexpr const char* kKey = "run"; double duration_s = 5; };
//   netdaq::register_app_block(netdaq::app_block<RunOptions>(
//       {netdaq::app_option("duration_s", &RunOptions::duration_s, "seconds to send", 0)}));
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "netdaq/option_blocks.h"
#include "netdaq/status.h"

namespace netdaq {

struct Config;

// Where an option's value lives in its block.
using AppField = std::variant<bool*, uint32_t*, uint64_t*, double*, std::string*>;

struct AppOption {
  std::string key;
  std::string doc;
  // Integers: the allowed range; numbers: `min` (max is not checked); others: unused.
  int64_t min = 0;
  uint64_t max = std::numeric_limits<uint64_t>::max();
  std::string note;  // appended to the range message ("0 = until Ctrl-C")
  std::function<AppField(OptionBlock&)> field;
};

// The largest value an option of type M may hold: its type's for integers.
template <class M>
constexpr uint64_t app_option_max() {
  if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool>) return std::numeric_limits<M>::max();
  else return std::numeric_limits<uint64_t>::max();
}

// Option `key` held in T's member; integers default to their type's range.
template <class T, class M>
AppOption app_option(std::string key, M T::*member, std::string doc, int64_t min = 0,
                     uint64_t max = app_option_max<M>(), std::string note = "") {
  AppOption o{std::move(key), std::move(doc), min, max, std::move(note), {}};
  o.field = [member](OptionBlock& b) -> AppField { return &(static_cast<OptionBlockOf<T>&>(b).value.*member); };
  return o;
}

struct AppBlock {
  std::string key;  // the top-level YAML key
  std::function<std::unique_ptr<OptionBlock>()> make;
  std::vector<AppOption> options;
  // Checks beyond the declared ranges (e.g. against the memory regions); appends issues, with
  // their locations from Config::location_of.
  std::function<void(const Config&, std::vector<ConfigIssue>&)> check;
  // A file that sets this block may have no interfaces: the block is the process's whole job
  // (the CLI's event builder receives frames over UCX, not packets).
  bool without_interfaces = false;
};

// The block of T (T::kKey) with these options and an optional check.
template <class T>
AppBlock app_block(std::vector<AppOption> options,
                   std::function<void(const Config&, std::vector<ConfigIssue>&)> check = {}) {
  return {T::kKey, [] { return std::make_unique<OptionBlockOf<T>>(); }, std::move(options), std::move(check)};
}

// Registers (or replaces) an application block for every later Config::load / parse / validate.
// Throws std::invalid_argument for a key the library or an engine already uses.
void register_app_block(AppBlock block);

}  // namespace netdaq
