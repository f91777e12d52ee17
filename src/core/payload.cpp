// The netdaq test payload and exact per-stream sequence accounting (include/netdaq/payload.h).
#include "netdaq/payload.h"

#include <time.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "netdaq/burst.h"

namespace netdaq {

namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

constexpr uint64_t mix64(uint64_t z) noexcept {  // SplitMix64 finaliser
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t seed_of(uint32_t stream, uint64_t seq) noexcept { return mix64(seq + mix64(stream)); }

inline uint64_t word_at(uint64_t seed, uint64_t k) noexcept {
  const uint64_t x = seed + (k + 1) * kGolden;
  return x ^ (x >> 31);
}

template <class T>
inline T to_le(T v) noexcept {
  if constexpr (std::endian::native == std::endian::little) {
    return v;
  } else {
    T r = 0;
    for (size_t i = 0; i < sizeof(T); ++i) r = (r << 8) | ((v >> (8 * i)) & 0xFF);
    return r;
  }
}

template <class T>
inline void store_le(std::byte* p, T v) noexcept {
  v = to_le(v);
  std::memcpy(p, &v, sizeof v);
}

template <class T>
inline T load_le(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return to_le(v);
}

// Compares `words` 64-bit words (a multiple of 8) against the pattern starting at x; returns
// non-zero on a mismatch. Independent lanes so the compiler vectorises it (AVX2 clone).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define NETDAQ_PATTERN_CLONES __attribute__((target_clones("avx2", "default"), optimize("tree-vectorize")))
#else
#define NETDAQ_PATTERN_CLONES
#endif

// Pattern words in bulk: independent iterations (no loop-carried state) so that the
// compiler vectorises them; an AVX2 clone is picked at run time where the CPU has it.
NETDAQ_PATTERN_CLONES
uint64_t check_words(const std::byte* src, size_t words, uint64_t x) noexcept {
  uint64_t diff = 0;
  for (size_t k = 0; k < words; ++k) {
    const uint64_t e = x + k * kGolden;
    uint64_t v;
    std::memcpy(&v, src + 8 * k, 8);
    diff |= to_le(v) ^ (e ^ (e >> 31));
  }
  return diff;
}

NETDAQ_PATTERN_CLONES
void fill_words(std::byte* dst, size_t words, uint64_t x) noexcept {
  for (size_t k = 0; k < words; ++k) {
    const uint64_t e = x + k * kGolden;
    const uint64_t v = to_le(e ^ (e >> 31));
    std::memcpy(dst + 8 * k, &v, 8);
  }
}

// Pattern over payload bytes [offset, offset + n) (offset >= header size).
void fill_impl(std::byte* dst, size_t n, uint64_t seed, size_t offset) noexcept {
  size_t rel = offset - kPayloadHeaderSize;
  // Leading partial word.
  if (size_t head = rel & 7; head && n) {
    std::byte tmp[8];
    store_le(tmp, word_at(seed, rel >> 3));
    const size_t k = std::min(n, 8 - head);
    std::memcpy(dst, tmp + head, k);
    dst += k;
    n -= k;
    rel += k;
  }
  uint64_t x = seed + ((rel >> 3) + 1) * kGolden;
  if (n >= 64) {
    const size_t words = (n / 64) * 8;
    fill_words(dst, words, x);
    x += words * kGolden;
    dst += words * 8;
    n -= words * 8;
  }
  for (; n >= 8; n -= 8, dst += 8, x += kGolden) store_le(dst, x ^ (x >> 31));
  if (n) {
    std::byte tmp[8];
    store_le(tmp, x ^ (x >> 31));
    std::memcpy(dst, tmp, n);
  }
}

bool check_impl(const std::byte* src, size_t n, uint64_t seed, size_t offset) noexcept {
  size_t rel = offset - kPayloadHeaderSize;
  if (size_t head = rel & 7; head && n) {
    std::byte tmp[8];
    store_le(tmp, word_at(seed, rel >> 3));
    const size_t k = std::min(n, 8 - head);
    if (std::memcmp(src, tmp + head, k) != 0) return false;
    src += k;
    n -= k;
    rel += k;
  }
  uint64_t x = seed + ((rel >> 3) + 1) * kGolden;
  uint64_t diff = 0;
  if (n >= 64) {
    const size_t words = (n / 64) * 8;
    diff = check_words(src, words, x);
    if (diff) return false;
    x += words * kGolden;
    src += words * 8;
    n -= words * 8;
  }
  for (; n >= 8; n -= 8, src += 8, x += kGolden) diff |= load_le<uint64_t>(src) ^ (x ^ (x >> 31));
  if (diff) return false;
  if (n) {
    std::byte tmp[8];
    store_le(tmp, x ^ (x >> 31));
    if (std::memcmp(src, tmp, n) != 0) return false;
  }
  return true;
}

PayloadStatus read_header(const std::byte* p, PayloadHeader* out) noexcept {
  PayloadHeader h;
  h.magic = load_le<uint32_t>(p);
  if (h.magic != kPayloadMagic) return PayloadStatus::bad_magic;
  h.stream = load_le<uint32_t>(p + 4);
  h.sequence = load_le<uint64_t>(p + 8);
  h.send_ns = load_le<uint64_t>(p + 16);
  if (out) *out = h;
  return PayloadStatus::ok;
}

}  // namespace

const char* to_string(PayloadStatus s) noexcept {
  switch (s) {
    case PayloadStatus::ok: return "ok";
    case PayloadStatus::too_short: return "too_short";
    case PayloadStatus::bad_magic: return "bad_magic";
    case PayloadStatus::corrupt: return "corrupt";
  }
  return "?";
}

uint64_t payload_clock_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

bool write_payload_header(std::span<std::byte> buf, uint32_t stream, uint64_t seq, uint64_t send_ns) noexcept {
  if (buf.size() < kPayloadHeaderSize) return false;
  std::byte* p = buf.data();
  store_le<uint32_t>(p, kPayloadMagic);
  store_le<uint32_t>(p + 4, stream);
  store_le<uint64_t>(p + 8, seq);
  store_le<uint64_t>(p + 16, send_ns);
  return true;
}

bool write_payload(std::span<std::byte> buf, uint32_t stream, uint64_t seq, uint64_t send_ns) noexcept {
  if (!write_payload_header(buf, stream, seq, send_ns)) return false;
  fill_impl(buf.data() + kPayloadHeaderSize, buf.size() - kPayloadHeaderSize, seed_of(stream, seq), kPayloadHeaderSize);
  return true;
}

void stamp_payload(std::span<std::byte> buf, uint64_t send_ns) noexcept {
  if (buf.size() >= kPayloadHeaderSize) store_le<uint64_t>(buf.data() + 16, send_ns);
}

PayloadStatus parse_payload(std::span<const std::byte> buf, PayloadHeader* out) noexcept {
  if (buf.size() < kPayloadHeaderSize) return PayloadStatus::too_short;
  return read_header(buf.data(), out);
}

PayloadStatus verify_payload(std::span<const std::byte> buf, PayloadHeader* out) noexcept {
  PayloadHeader h;
  const PayloadStatus st = parse_payload(buf, &h);
  if (st != PayloadStatus::ok) return st;
  if (out) *out = h;
  const auto rest = buf.subspan(kPayloadHeaderSize);
  return check_impl(rest.data(), rest.size(), seed_of(h.stream, h.sequence), kPayloadHeaderSize)
             ? PayloadStatus::ok
             : PayloadStatus::corrupt;
}

PayloadStatus verify_payload(const Packet& pkt, PayloadHeader* out, bool check) noexcept {
  const unsigned nseg = pkt.segments();
  if (nseg <= 1) {
    const auto s = pkt.segment(0);
    if (!check) return parse_payload(s, out);
    return verify_payload(s, out);
  }
  // Gather the header, which may straddle segments.
  std::byte hdr[kPayloadHeaderSize];
  size_t have = 0;
  for (unsigned i = 0; i < nseg && have < kPayloadHeaderSize; ++i) {
    const auto s = pkt.segment(i);
    const size_t k = std::min(s.size(), kPayloadHeaderSize - have);
    std::memcpy(hdr + have, s.data(), k);
    have += k;
  }
  if (have < kPayloadHeaderSize) return PayloadStatus::too_short;
  PayloadHeader h;
  const PayloadStatus st = read_header(hdr, &h);
  if (st != PayloadStatus::ok) return st;
  if (out) *out = h;
  if (!check) return PayloadStatus::ok;
  const uint64_t seed = seed_of(h.stream, h.sequence);
  size_t offset = 0;  // payload offset of the current segment's first byte
  for (unsigned i = 0; i < nseg; ++i) {
    auto s = pkt.segment(i);
    size_t skip = offset < kPayloadHeaderSize ? std::min(s.size(), kPayloadHeaderSize - offset) : 0;
    if (s.size() > skip && !check_impl(s.data() + skip, s.size() - skip, seed, offset + skip))
      return PayloadStatus::corrupt;
    offset += s.size();
  }
  return PayloadStatus::ok;
}

void fill_pattern(std::span<std::byte> dst, uint32_t stream, uint64_t seq, size_t offset) noexcept {
  if (offset < kPayloadHeaderSize) return;
  fill_impl(dst.data(), dst.size(), seed_of(stream, seq), offset);
}

bool check_pattern(std::span<const std::byte> src, uint32_t stream, uint64_t seq, size_t offset) noexcept {
  if (offset < kPayloadHeaderSize) return false;
  return check_impl(src.data(), src.size(), seed_of(stream, seq), offset);
}

// ---- SequenceTracker ----

SequenceTracker::SequenceTracker(uint64_t window, uint64_t first) : first_(first), next_(first) {
  uint64_t w = 64;
  while (w < window && w < (uint64_t{1} << 40)) w <<= 1;
  words_.assign(w / 64, 0);
  mask_ = w - 1;
}

// Counts and clears the seen bits of sequence numbers [a, b), b - a <= window.
static uint64_t take_bits(std::vector<uint64_t>& words, uint64_t mask, uint64_t a, uint64_t b) noexcept {
  uint64_t seen = 0;
  uint64_t slot = a & mask;
  uint64_t n = b - a;
  while (n) {
    const uint64_t off = slot & 63;
    const uint64_t k = std::min<uint64_t>(n, 64 - off);
    const uint64_t m = (k == 64 ? ~uint64_t{0} : ((uint64_t{1} << k) - 1)) << off;
    uint64_t& w = words[slot >> 6];
    seen += static_cast<uint64_t>(std::popcount(w & m));
    w &= ~m;
    slot = (slot + k) & mask;
    n -= k;
  }
  return seen;
}

void SequenceTracker::advance(uint64_t new_next) noexcept {
  const uint64_t W = mask_ + 1;
  const uint64_t old_lo = next_ - first_ > W ? next_ - W : first_;
  const uint64_t new_lo = new_next - first_ > W ? new_next - W : first_;
  // Sequence numbers that were in the window and leave it: unseen ones are lost.
  const uint64_t leave_end = std::min(new_lo, next_);
  if (leave_end > old_lo) {
    const uint64_t n = leave_end - old_lo;
    const uint64_t unseen = n - take_bits(words_, mask_, old_lo, leave_end);
    lost_ += unseen;
    pending_ -= unseen;
  }
  // New numbers [next_, new_next): the ones below new_lo skip the window (lost at once),
  // the rest are gaps in the window until filled.
  if (new_lo > next_) {
    lost_ += new_lo - next_;
    pending_ += new_next - new_lo;
  } else {
    pending_ += new_next - next_;
  }
  next_ = new_next;
}

bool SequenceTracker::test_and_set(uint64_t seq) noexcept {
  uint64_t& w = words_[(seq & mask_) >> 6];
  const uint64_t bit = uint64_t{1} << (seq & 63);
  const bool was = (w & bit) != 0;
  w |= bit;
  return was;
}

bool SequenceTracker::add(uint64_t seq) noexcept {
  ++received_;
  if (finished_ || seq < first_) {
    ++late_;
    return false;
  }
  if (seq >= next_) {
    advance(seq + 1);
    test_and_set(seq);  // a new slot: always clear
    --pending_;
    ++unique_;
    return true;
  }
  const uint64_t lo = next_ - first_ > mask_ + 1 ? next_ - (mask_ + 1) : first_;
  if (seq < lo) {
    ++late_;
    return false;
  }
  if (test_and_set(seq)) {
    ++duplicates_;
    return false;
  }
  --pending_;
  ++unique_;
  ++reordered_;
  return true;
}

void SequenceTracker::finish() noexcept {
  if (finished_) return;
  finished_ = true;
  lost_ += pending_;
  pending_ = 0;
}

void SequenceTracker::finish(uint64_t expected_total) noexcept {
  if (finished_) return;
  finish();
  const uint64_t end = first_ + expected_total;
  if (end > next_) lost_ += end - next_;
}

}  // namespace netdaq
