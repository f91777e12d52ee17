// "Did you mean ...?" for misspelt keys and names: the closest candidate by edit distance.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace netdaq::detail {

// Optimal-string-alignment distance (insertions, deletions, substitutions and swaps of two
// neighbouring characters), comparing ASCII letters case-insensitively.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if it is close enough to be a plausible typo or one of the
// two starts the other ("warning" / "warn").
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string_view> candidates);
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

}  // namespace netdaq::detail
