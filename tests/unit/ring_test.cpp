#include <gtest/gtest.h>
#include "core/ring.h"
TEST(SpscRing, Basic) { netdaq::detail::SpscRing<int> r(4); EXPECT_TRUE(r.push(1)); }
