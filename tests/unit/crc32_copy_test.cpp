// protocols::crc32_copy against ISA-L's crc32_gzip_refl + memcpy: every length across the
// vector paths' boundaries (64- and 256-byte steps), misaligned ends, chained starting values.
#include <gtest/gtest.h>
#include <isa-l/crc.h>

#include <cstring>
#include <random>
#include <vector>

#include "protocols/crc32_copy.h"

namespace netdaq::protocols {
namespace {

uint32_t reference(uint32_t crc, const std::byte* p, size_t n) {
  return n ? crc32_gzip_refl(crc, reinterpret_cast<const unsigned char*>(p), n) : crc;
}

TEST(roce_sw_crc32_copy, EqualsIsalAndMemcpyForEveryLengthAndAlignment) {
  std::mt19937 rng(7);
  std::vector<std::byte> src(5000 + 64), dst(5000 + 64);
  for (auto& b : src) b = std::byte(rng());
  const uint32_t seeds[] = {0, 0xFFFFFFFFu, 0x2144DF1Cu, 0x12345678u};
  int checked = 0;
  for (size_t n = 0; n <= 1100; ++n)
    for (size_t shift : {0, 1, 13}) {
      const uint32_t seed = seeds[(n + shift) % 4];
      std::fill(dst.begin(), dst.end(), std::byte{0xA5});
      const uint32_t got = crc32_copy(seed, dst.data() + 3, src.data() + shift, n);
      ASSERT_EQ(got, reference(seed, src.data() + shift, n)) << "n " << n << " shift " << shift;
      ASSERT_EQ(std::memcmp(dst.data() + 3, src.data() + shift, n), 0) << "n " << n;
      ASSERT_EQ(dst[2], std::byte{0xA5});  // nothing written outside [dst, dst + n)
      ASSERT_EQ(dst[3 + n], std::byte{0xA5}) << "n " << n;
      ++checked;
    }
  for (size_t n : {3840, 4096, 4170, 5000}) {
    ASSERT_EQ(crc32_copy(0x2144DF1Cu, dst.data(), src.data() + 5, n), reference(0x2144DF1Cu, src.data() + 5, n));
    ASSERT_EQ(std::memcmp(dst.data(), src.data() + 5, n), 0);
  }
  EXPECT_EQ(checked, 1101 * 3);
}

TEST(roce_sw_crc32_copy, ChainsLikeTheLibrary) {
  // A CRC continued over pieces (an ICRC over headers, then a payload in two buffers) equals
  // the CRC of the whole.
  std::vector<std::byte> src(4200), dst(4200);
  for (size_t i = 0; i < src.size(); ++i) src[i] = std::byte(i * 131 + 7);
  const uint32_t whole = reference(0xFFFFFFFFu, src.data(), src.size());
  for (size_t cut : {1, 63, 64, 255, 256, 3840, 4199}) {
    uint32_t c = crc32_copy(0xFFFFFFFFu, dst.data(), src.data(), cut);
    c = crc32_copy(c, dst.data() + cut, src.data() + cut, src.size() - cut);
    EXPECT_EQ(c, whole) << "cut " << cut;
  }
}

}  // namespace
}  // namespace netdaq::protocols
