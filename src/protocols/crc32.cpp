#include "protocols/crc32.h"

#include <immintrin.h>
#include <isa-l/crc.h>

namespace netdaq::protocols {

namespace {

// ISA-L 2.30's AVX-512 CRC (crc32_gzip_refl_by16_10, chosen where the CPU has VPCLMULQDQ)
// returns without VZEROUPPER. The upper halves of the vector registers stay dirty, and on
// Intel cores every legacy-SSE instruction after it then pays for that state until the next
// VZEROUPPER: on an H200 host's Xeon (Sapphire Rapids), a 1 KiB CRC followed by 50 scalar SSE
// operations took 383-388 ns a round without it and 164-169 ns with it (the operations alone:
// 123 ns); netdaq's RoCE receive, two CRC calls a packet, paid ~440 ns a packet for it.
// VZEROUPPER faults where the CPU has no AVX, and there no vector state can be dirty.
const bool kHasAvx = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx") != 0;
}();

__attribute__((target("avx"))) void clear_upper_halves() noexcept { _mm256_zeroupper(); }

}  // namespace

uint32_t crc32_gzip(uint32_t crc, const std::byte* p, size_t n) noexcept {
  if (n == 0) return crc;
  crc = crc32_gzip_refl(crc, reinterpret_cast<const unsigned char*>(p), n);
  if (kHasAvx) clear_upper_halves();
  return crc;
}

}  // namespace netdaq::protocols
