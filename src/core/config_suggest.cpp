#include "core/config_suggest.h"

#include <algorithm>
#include <vector>

namespace netdaq::detail {

namespace {

char fold(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Close enough (besides prefixes): at most a third of the word's letters wrong (at least one, at most three),
// and never the whole word.
bool plausible(size_t distance, size_t length) {
  const size_t allowed = std::clamp<size_t>(length / 3, 1, 3);
  return distance <= allowed && distance < length;
}

// One word starts the other ("warning" / "warn", "cpu" / "cpu_core"), ignoring case.
bool is_prefix_pair(std::string_view a, std::string_view b) {
  if (a.size() > b.size()) std::swap(a, b);
  if (a.size() < 3) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (fold(a[i]) != fold(b[i])) return false;
  return true;
}

template <class Str>
std::optional<std::string> closest(std::string_view word, std::span<const Str> candidates) {
  std::optional<std::string> best;
  size_t best_distance = 0;
  for (const auto& c : candidates) {
    const std::string_view cand(c);
    const bool prefix = is_prefix_pair(word, cand);
    const size_t a = word.size(), b = cand.size();
    if (!prefix && (a > b ? a - b : b - a) > 3) continue;  // too far apart to be a typo
    const size_t d = edit_distance(word, cand);
    if ((prefix || plausible(d, std::max(a, b))) && (!best || d < best_distance)) {
      best = std::string(c);
      best_distance = d;
    }
  }
  return best;
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: i-2, i-1 and i.
  std::vector<size_t> older(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = fold(a[i - 1]) == fold(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]))
        cur[j] = std::min(cur[j], older[j - 2] + 1);
    }
    std::swap(older, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest_match(std::string_view word, std::span<const std::string_view> candidates) {
  return closest(word, candidates);
}

std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates) {
  return closest(word, candidates);
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  auto m = closest_match(word, candidates);
  return m ? " (did you mean '" + *m + "'?)" : "";
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  auto m = closest_match(word, candidates);
  return m ? " (did you mean '" + *m + "'?)" : "";
}

}  // namespace netdaq::detail
