// Engine option blocks: each engine declares its options in its own public header
// (netdaq/engines/<name>.h) as plain structs with a `kKey`, the YAML key of the block
// (`dpdk:` on an interface, `eal:` at the top level). A Config and each InterfaceConfig hold
// the blocks that were set, so the core's structs name no engine.
//
//   iface.options.get<netdaq::DpdkOptions>().rx_desc = 2048;
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace netdaq {

// One block of options, type-erased (the core reads, copies and compares blocks it does not know).
class OptionBlock {
 public:
  virtual ~OptionBlock() = default;
  virtual std::unique_ptr<OptionBlock> clone() const = 0;
};

// The block holding a T.
template <class T>
class OptionBlockOf final : public OptionBlock {
 public:
  T value{};
  std::unique_ptr<OptionBlock> clone() const override { return std::make_unique<OptionBlockOf<T>>(*this); }
};

// The option blocks of an interface or of a Config: a block missing reads as its defaults.
class OptionBlocks {
 public:
  OptionBlocks() = default;
  OptionBlocks(const OptionBlocks& o) { *this = o; }
  OptionBlocks(OptionBlocks&&) noexcept = default;
  OptionBlocks& operator=(const OptionBlocks& o) {
    if (this == &o) return *this;
    blocks_.clear();
    for (const auto& [key, block] : o.blocks_) blocks_.emplace(key, block->clone());
    return *this;
  }
  OptionBlocks& operator=(OptionBlocks&&) noexcept = default;

  // T's block, created with T's defaults when it was not set.
  template <class T>
  T& get() {
    auto it = blocks_.find(std::string_view(T::kKey));
    if (it == blocks_.end()) it = blocks_.emplace(std::string(T::kKey), std::make_unique<OptionBlockOf<T>>()).first;
    return of<T>(*it->second);
  }
  // T's block, or T's defaults when it was not set.
  template <class T>
  const T& get() const {
    static const T defaults{};
    auto it = blocks_.find(std::string_view(T::kKey));
    return it == blocks_.end() ? defaults : of<T>(*it->second);
  }

  // Type-erased access by key (the YAML reader and validator): nullptr when not set.
  const OptionBlock* find(std::string_view key) const {
    auto it = blocks_.find(key);
    return it == blocks_.end() ? nullptr : it->second.get();
  }
  // The block under `key`, made with `make` when missing.
  template <class Make>
  OptionBlock& find_or_make(std::string_view key, Make make) {
    auto it = blocks_.find(key);
    if (it == blocks_.end()) it = blocks_.emplace(std::string(key), make()).first;
    return *it->second;
  }

 private:
  // A key belongs to one engine's struct; two structs claiming one key is a programming error.
  template <class T>
  static T& of(OptionBlock& b) {
    if (auto* typed = dynamic_cast<OptionBlockOf<T>*>(&b)) return typed->value;
    throw std::logic_error(std::string("option block '") + T::kKey + "' holds another type");
  }
  template <class T>
  static const T& of(const OptionBlock& b) {
    return of<T>(const_cast<OptionBlock&>(b));
  }

  std::map<std::string, std::unique_ptr<OptionBlock>, std::less<>> blocks_;
};

}  // namespace netdaq
