// Every /sys and /proc read of `netdaq check` goes through here, so that `--root DIR` can point
// the checks at a recorded snapshot (tests/check/fixtures) instead of this machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace netdaq::cli::check {

class SysReader {
 public:
  explicit SysReader(std::string root = {});
  bool live() const noexcept { return root_.empty(); }  // this machine, not a snapshot
  const std::string& root() const noexcept { return root_; }

  // The file's text with trailing whitespace removed; nullopt when it cannot be read.
  std::optional<std::string> read(const std::string& path) const;
  std::optional<int64_t> read_int(const std::string& path) const;  // decimal or 0x hex
  std::vector<std::string> lines(const std::string& path) const;
  // The file's bytes as read (binary: a PCI device's `config`); at most max_bytes; nullopt when it
  // cannot be opened. sysfs may return fewer bytes than the file's size (config space: 64 without root).
  std::optional<std::vector<uint8_t>> read_bytes(const std::string& path, size_t max_bytes = 4096) const;
  // Entry names of a directory, sorted; empty when missing.
  std::vector<std::string> list(const std::string& dir) const;
  bool exists(const std::string& path) const;
  // The path with every link resolved, as seen from the root ("/sys/devices/pci0000:00/...").
  std::optional<std::string> realpath(const std::string& path) const;
  // The last component of a link's target ("mlx5_core" for .../driver).
  std::optional<std::string> link_name(const std::string& path) const;

 private:
  std::string root_;
};

}  // namespace netdaq::cli::check
