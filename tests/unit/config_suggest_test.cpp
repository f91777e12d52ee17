// "Did you mean" suggestions for misspelt keys and names.
#include <gtest/gtest.h>

#include <array>
#include <string_view>

#include "core/config_suggest.h"

namespace netdaq::detail {
namespace {

constexpr std::array<std::string_view, 5> kKeys{"batch_size", "ring_depth", "timeout_us", "cpu_core", "id"};

TEST(ConfigSuggest, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("batch_sise", "batch_size"), 1u);  // substitution
  EXPECT_EQ(edit_distance("bacth_size", "batch_size"), 1u);  // neighbours swapped
  EXPECT_EQ(edit_distance("Batch_Size", "batch_size"), 0u);  // case does not count
}

TEST(ConfigSuggest, ClosestPlausibleMatch) {
  EXPECT_EQ(closest_match("batchsize", kKeys), "batch_size");
  EXPECT_EQ(closest_match("ring_dept", kKeys), "ring_depth");
  EXPECT_EQ(closest_match("cpu", kKeys), "cpu_core");    // a prefix
  EXPECT_EQ(closest_match("ring", kKeys), "ring_depth");
  EXPECT_EQ(closest_match("warning", std::array<std::string_view, 2>{"warn", "error"}), "warn");
  EXPECT_EQ(closest_match("co", kKeys), std::nullopt);    // prefixes count from 3 letters
  EXPECT_EQ(closest_match("xx", kKeys), std::nullopt);   // a whole short word replaced
  EXPECT_EQ(closest_match("ip", kKeys), "id");
  EXPECT_EQ(closest_match("completely_unrelated", kKeys), std::nullopt);
  EXPECT_EQ(did_you_mean("timeout", kKeys), " (did you mean 'timeout_us'?)");
  EXPECT_EQ(did_you_mean("zzz", kKeys), "");
}

}  // namespace
}  // namespace netdaq::detail
