// protocols::crc32_gzip: zlib's CRC-32 through ISA-L, and the vector state it leaves behind
// (legacy-SSE code after a dirty upper state runs ~2x slower on Intel: protocols/crc32.cpp).
#include <cpuid.h>
#include <gtest/gtest.h>
#include <isa-l/crc.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "protocols/crc32.h"
#include "require_env.h"

namespace netdaq::protocols {
namespace {

// XINUSE (XGETBV with ECX=1, where CPUID.(0DH,1):EAX[2] says it exists): the state components
// not in their initial state. Bit 2: the upper halves of YMM0-15; bit 6: the upper 256 bits of
// ZMM0-15. VZEROUPPER returns both to their initial state.
bool has_xinuse() {
  unsigned a, b, c, d;
  return __get_cpuid_count(0xD, 1, &a, &b, &c, &d) && (a & (1u << 2));
}
uint64_t xinuse() {
  uint32_t lo, hi;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  return (uint64_t(hi) << 32) | lo;
}
constexpr uint64_t kDirtyUpper = (1u << 2) | (1u << 6);

TEST(roce_sw_crc32, IsZlibsCrc32AndChains) {
  const char* check = "123456789";  // the CRC-32 catalogue's check value
  const auto* p = reinterpret_cast<const std::byte*>(check);
  EXPECT_EQ(crc32_gzip(0, p, 9), 0xCBF43926u);
  EXPECT_EQ(crc32_gzip(crc32_gzip(0, p, 4), p + 4, 5), 0xCBF43926u);
  EXPECT_EQ(crc32_gzip(0x1234u, p, 0), 0x1234u);
}

TEST(roce_sw_crc32, LeavesTheVectorRegistersUpperHalvesClean) {
  NDQ_REQUIRE(has_xinuse(), "this CPU has no XGETBV XINUSE: the state cannot be read");
  std::vector<std::byte> buf(4096);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = std::byte(i * 7);
  for (size_t n : {40ul, 1024ul, 4096ul}) {
    // ISA-L alone, for the record: dirty where it takes its AVX-512 path (which returns without
    // VZEROUPPER), clean where it takes an SSE one.
    const uint32_t want = crc32_gzip_refl(0, reinterpret_cast<const unsigned char*>(buf.data()), n);
    const uint64_t after_isal = xinuse();
    const uint32_t got = crc32_gzip(0, buf.data(), n);
    const uint64_t after = xinuse();
    EXPECT_EQ(got, want);
    EXPECT_EQ(after & kDirtyUpper, 0u) << n << " bytes: XINUSE 0x" << std::hex << after;
    std::printf("%zu bytes: XINUSE after ISA-L alone 0x%llx, after crc32_gzip 0x%llx\n", n,
                static_cast<unsigned long long>(after_isal), static_cast<unsigned long long>(after));
  }
}

}  // namespace
}  // namespace netdaq::protocols
