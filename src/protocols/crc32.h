// CRC-32 as gzip / IEEE 802.3 / zlib's crc32 (reflected 0x04C11DB7, pre- and post-inverted),
// continued from `crc`: ISA-L's crc32_gzip_refl (Debian libisal-dev), the one place netdaq calls
// it (RoCEv2's ICRC, protocols/roce.cpp; the tail of protocols::crc32_copy).
#pragma once

#include <cstddef>
#include <cstdint>

namespace netdaq::protocols {

uint32_t crc32_gzip(uint32_t crc, const std::byte* p, size_t n) noexcept;

}  // namespace netdaq::protocols
