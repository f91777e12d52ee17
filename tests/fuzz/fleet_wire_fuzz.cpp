// libFuzzer target: the fleet's wire format (src/fleet/wire.h), what a builder decodes from any
// sender on its network. Each input is one message's header bytes, handed to every decoder:
//   - decode_fragment: accepted only with the magic, version and a length that is exactly the
//     header plus its presence words (at most kMaxPresenceWords, and then a granule), with
//     bytes_present <= bytes; the presence span lies inside the input; re-encoding the decoded
//     header (and its words) gives back the same bytes, apart from the reserved field;
//   - decode_seq: whenever decode_fragment accepts, the same slot id;
//   - decode_credit / decode_hello: accepted only at their exact length; what they accept
//     re-encodes to the same fields.
// Never a crash or a read outside the input (ASan), never undefined behaviour (UBSan).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fleet/wire.h"

namespace {

using namespace netdaq::fleet::detail;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fleet_wire_fuzz: %s\n", what);
  std::abort();
}
#define CHECK(cond)           \
  do {                        \
    if (!(cond)) fail(#cond); \
  } while (0)

void check_fragment(const std::byte* data, size_t size) {
  FragmentHeader h;
  if (!decode_fragment(data, size, h)) return;
  CHECK(size == kFragmentHeaderBytes + h.presence.size() * 8);
  CHECK(h.presence.size() <= kMaxPresenceWords);
  CHECK(h.presence.empty() || h.meta.granule > 0);
  CHECK(h.meta.bytes_present <= h.meta.bytes);
  const auto* words = reinterpret_cast<const std::byte*>(h.presence.data());
  CHECK(words == data + kFragmentHeaderBytes);
  uint64_t seq = ~h.seq;
  CHECK(decode_seq(data, size, seq) && seq == h.seq);
  std::vector<std::byte> again(size);
  std::memcpy(again.data() + kFragmentHeaderBytes, words, h.presence.size() * 8);
  CHECK(encode_fragment(h.meta, h.seq, uint32_t(h.presence.size()), again.data()) == size);
  // The flags word keeps only the complete bit, and bytes 20..23 are reserved (written 0).
  for (size_t i = 0; i < size; ++i)
    if (i != 6 && i != 7 && (i < 20 || i >= 24)) CHECK(again[i] == data[i]);
  FragmentHeader back;
  CHECK(decode_fragment(again.data(), again.size(), back));
  CHECK(back.meta.frame == h.meta.frame && back.meta.offset == h.meta.offset && back.seq == h.seq &&
        back.meta.complete == h.meta.complete && back.presence.size() == h.presence.size());
}

void check_credit(const std::byte* data, size_t size) {
  Credit c;
  if (!decode_credit(data, size, c)) return;
  CHECK(size == kCreditBytes);
  CHECK(c.status == CreditStatus::placed || c.status == CreditStatus::refused);
  std::byte again[kCreditBytes];
  encode_credit(c, again);
  Credit back;
  CHECK(decode_credit(again, sizeof again, back));
  CHECK(back.status == c.status && back.reason == c.reason && back.seq == c.seq && back.frame == c.frame &&
        back.bytes == c.bytes);
  CHECK(std::memcmp(again, data, 32) == 0);
}

void check_hello(const std::byte* data, size_t size) {
  uint32_t node = 0;
  if (!decode_hello(data, size, node)) return;
  CHECK(size == kHelloBytes);
  std::byte again[kHelloBytes];
  encode_hello(node, again);
  uint32_t back = ~node;
  CHECK(decode_hello(again, sizeof again, back) && back == node);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes: ASan sees any read past the message's end.
  std::vector<std::byte> msg(size);
  if (size) std::memcpy(msg.data(), data, size);
  const std::byte* p = size ? msg.data() : nullptr;
  check_fragment(p, size);
  check_credit(p, size);
  check_hello(p, size);
  uint64_t seq = 0;
  (void)decode_seq(p, size, seq);
  return 0;
}
