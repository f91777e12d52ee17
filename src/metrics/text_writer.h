// The Prometheus text exposition format (0.0.4), written family by family: a family's
// "# HELP" and "# TYPE" lines, then its samples, each "name{label="value",...} value".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace netdaq::metrics {

enum class MetricType { counter, gauge };

using Label = std::pair<std::string_view, std::string_view>;  // name (a valid label name), value (any text)

// Label value escaping: backslash, double quote and line feed become \\, \" and \n.
std::string escape_label_value(std::string_view v);
// HELP text escaping: backslash and line feed become \\ and \n.
std::string escape_help(std::string_view v);

class TextWriter {
 public:
  // Starts a family. name must be a valid metric name (checked: throws std::invalid_argument,
  // a programming error); counters must end in _total.
  void family(std::string_view name, std::string_view help, MetricType type);
  // A sample of the current family.
  void sample(std::initializer_list<Label> labels, uint64_t value);
  void sample(std::initializer_list<Label> labels, double value);

  const std::string& text() const noexcept { return out_; }
  std::string take() noexcept { return std::move(out_); }

 private:
  void labels(std::initializer_list<Label> labels);
  std::string out_;
  std::string name_;
};

// A valid metric name: [a-zA-Z_:][a-zA-Z0-9_:]*; label names: [a-zA-Z_][a-zA-Z0-9_]*.
bool valid_metric_name(std::string_view n) noexcept;
bool valid_label_name(std::string_view n) noexcept;

}  // namespace netdaq::metrics
