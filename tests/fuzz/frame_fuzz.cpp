// libFuzzer target: the afxdp engine's received-frame parser never reads past the frame and
// only accepts payloads that lie inside it.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "net/frame_headers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::byte> frame(reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
  const auto u = netdaq::detail::find_udp_payload(frame.data(), static_cast<uint32_t>(frame.size()));
  if (u.ok && (u.offset > size || u.size > size - u.offset)) std::abort();
  return 0;
}
