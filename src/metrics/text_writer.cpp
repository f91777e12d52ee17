#include "metrics/text_writer.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace netdaq::metrics {

namespace {

bool name_char(char c, bool first, bool colon) noexcept {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') return true;
  if (colon && c == ':') return true;
  return !first && c >= '0' && c <= '9';
}

bool valid_name(std::string_view n, bool colon) noexcept {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i)
    if (!name_char(n[i], i == 0, colon)) return false;
  return true;
}

}  // namespace

bool valid_metric_name(std::string_view n) noexcept { return valid_name(n, true); }
bool valid_label_name(std::string_view n) noexcept { return valid_name(n, false) && !n.starts_with("__"); }

std::string escape_label_value(std::string_view v) {
  std::string s;
  s.reserve(v.size());
  for (char c : v) {
    if (c == '\\') s += "\\\\";
    else if (c == '"') s += "\\\"";
    else if (c == '\n') s += "\\n";
    else s += c;
  }
  return s;
}

std::string escape_help(std::string_view v) {
  std::string s;
  s.reserve(v.size());
  for (char c : v) {
    if (c == '\\') s += "\\\\";
    else if (c == '\n') s += "\\n";
    else s += c;
  }
  return s;
}

void TextWriter::family(std::string_view name, std::string_view help, MetricType type) {
  if (!valid_metric_name(name)) throw std::invalid_argument("invalid metric name '" + std::string(name) + "'");
  if (type == MetricType::counter && !name.ends_with("_total"))
    throw std::invalid_argument("counter '" + std::string(name) + "' does not end in _total");
  name_ = name;
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += escape_help(help);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += type == MetricType::counter ? " counter\n" : " gauge\n";
}

void TextWriter::labels(std::initializer_list<Label> labels) {
  out_ += name_;
  if (labels.size() == 0) return;
  out_ += '{';
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!valid_label_name(k)) throw std::invalid_argument("invalid label name '" + std::string(k) + "'");
    if (!first) out_ += ',';
    first = false;
    out_ += k;
    out_ += "=\"";
    out_ += escape_label_value(v);
    out_ += '"';
  }
  out_ += '}';
}

void TextWriter::sample(std::initializer_list<Label> l, uint64_t value) {
  labels(l);
  out_ += ' ';
  out_ += std::to_string(value);
  out_ += '\n';
}

void TextWriter::sample(std::initializer_list<Label> l, double value) {
  labels(l);
  char buf[64];
  if (std::isnan(value)) std::snprintf(buf, sizeof buf, " NaN\n");
  else if (std::isinf(value)) std::snprintf(buf, sizeof buf, value > 0 ? " +Inf\n" : " -Inf\n");
  else std::snprintf(buf, sizeof buf, " %.17g\n", value);
  out_ += buf;
}

}  // namespace netdaq::metrics
