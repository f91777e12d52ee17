#include "check/sysfs_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace netdaq::cli::check {

namespace fs = std::filesystem;

SysReader::SysReader(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::optional<std::string> SysReader::read(const std::string& path) const {
  std::ifstream f(root_ + path);
  if (!f) return std::nullopt;
  std::stringstream s;
  s << f.rdbuf();
  if (f.bad()) return std::nullopt;  // sysfs attributes the driver refuses (EINVAL, EOPNOTSUPP)
  std::string t = s.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ' || t.back() == '\t' || t.back() == '\0')) t.pop_back();
  return t;
}

std::optional<int64_t> SysReader::read_int(const std::string& path) const {
  const auto t = read(path);
  if (!t || t->empty()) return std::nullopt;
  try {
    size_t used = 0;
    const int64_t v = std::stoll(*t, &used, 0);
    return used == t->size() ? std::optional<int64_t>(v) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<std::string> SysReader::lines(const std::string& path) const {
  std::vector<std::string> out;
  std::ifstream f(root_ + path);
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}

std::optional<std::vector<uint8_t>> SysReader::read_bytes(const std::string& path, size_t max_bytes) const {
  std::ifstream f(root_ + path, std::ios::binary);
  if (!f) return std::nullopt;
  std::vector<uint8_t> out(max_bytes);
  f.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(max_bytes));
  if (f.bad()) return std::nullopt;
  out.resize(static_cast<size_t>(f.gcount()));
  return out;
}

std::vector<std::string> SysReader::list(const std::string& dir) const {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(root_ + dir, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool SysReader::exists(const std::string& path) const {
  std::error_code ec;
  return fs::exists(root_ + path, ec);
}

std::optional<std::string> SysReader::realpath(const std::string& path) const {
  std::error_code ec;
  const fs::path p = fs::canonical(root_ + path, ec);
  if (ec) return std::nullopt;
  std::string s = p.string();
  if (root_.empty()) return s;
  const std::string base = fs::canonical(root_, ec).string();
  if (ec || s.compare(0, base.size(), base) != 0) return std::nullopt;  // a link out of the snapshot
  s = s.substr(base.size());
  return s.empty() ? "/" : s;
}

std::optional<std::string> SysReader::link_name(const std::string& path) const {
  std::error_code ec;
  const fs::path target = fs::read_symlink(root_ + path, ec);
  if (ec) return std::nullopt;
  return target.filename().string();
}

}  // namespace netdaq::cli::check
