// A memcpy that computes the CRC-32 (gzip / IEEE 802.3, reflected) of the bytes it copies, in
// the same pass: RoCE's ICRC over a payload that is being placed reads each cold line once
// instead of twice (bench/roce_sw.md). Same result as memcpy + ISA-L's crc32_gzip_refl; no
// Debian library offers the copy variant (ISA-L has none; zlib-ng's is internal).
#pragma once

#include <cstddef>
#include <cstdint>

namespace netdaq::protocols {

// Copies n bytes from src to dst (not overlapping) and returns crc32_gzip_refl(crc, src, n).
uint32_t crc32_copy(uint32_t crc, std::byte* dst, const std::byte* src, size_t n) noexcept;

}  // namespace netdaq::protocols
