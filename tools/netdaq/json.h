// A tiny JSON writer for the CLI's machine-readable output (no dependency).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace netdaq::cli {

class JsonWriter {
 public:
  JsonWriter& begin_object(std::string_view key = {}) { return open(key, '{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array(std::string_view key = {}) { return open(key, '['); }
  JsonWriter& end_array() { return close(']'); }

  JsonWriter& value(std::string_view key, std::string_view v) {
    prefix(key);
    quote(v);
    return *this;
  }
  JsonWriter& value(std::string_view key, const char* v) { return value(key, std::string_view(v)); }
  JsonWriter& value(std::string_view key, const std::string& v) { return value(key, std::string_view(v)); }
  JsonWriter& value(std::string_view key, bool v) {
    prefix(key);
    out_ += v ? "true" : "false";
    return *this;
  }
  JsonWriter& value(std::string_view key, uint64_t v) {
    prefix(key);
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& value(std::string_view key, int64_t v) {
    prefix(key);
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& value(std::string_view key, int v) { return value(key, int64_t{v}); }
  JsonWriter& value(std::string_view key, unsigned v) { return value(key, uint64_t{v}); }
  JsonWriter& value(std::string_view key, double v) {
    prefix(key);
    if (!std::isfinite(v)) {
      out_ += "null";
    } else {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g", v);
      out_ += buf;
    }
    return *this;
  }

  const std::string& str() const { return out_; }

 private:
  JsonWriter& open(std::string_view key, char c) {
    prefix(key);
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    first_.pop_back();
    out_ += '\n';
    indent();
    out_ += c;
    return *this;
  }
  void prefix(std::string_view key) {
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
      out_ += '\n';
      indent();
    }
    if (!key.empty()) {
      quote(key);
      out_ += ": ";
    }
  }
  void indent() { out_.append(first_.size() * 2, ' '); }
  void quote(std::string_view s) {
    out_ += '"';
    for (char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += ch;
      } else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out_ += buf;
      } else {
        out_ += ch;
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> first_;
};

}  // namespace netdaq::cli
