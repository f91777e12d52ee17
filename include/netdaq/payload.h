// The netdaq test payload: what `netdaq run` / `netdaq bench` send, and the exact
// per-stream sequence accounting their receivers do (docs/cli.md, "Payload format").
//
// Layout of every datagram / message (all integers little-endian):
//
//   offset  size  field
//        0     4  magic      0x3151444E ("NDQ1" in memory order)
//        4     4  stream     sender's stream id (netdaq run: tx queue index)
//        8     8  sequence   0, 1, 2, ... per stream
//       16     8  send time  CLOCK_MONOTONIC nanoseconds when the packet was filled
//       24   ...  pattern    deterministic bytes derived from (stream, sequence)
//
// Pattern: seed = mix(sequence + mix(stream)), word k (k = 0, 1, ...) is
// w = x ^ (x >> 31) with x = seed + (k + 1) * 0x9E3779B97F4A7C15, stored little-endian at
// offset 24 + 8k; a final partial word keeps its low bytes. mix() is the SplitMix64
// finaliser. A packet from another stream or sequence, a truncated or shifted packet, or
// flipped bytes all fail verification.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace netdaq {

class Packet;

inline constexpr uint32_t kPayloadMagic = 0x3151444E;  // "NDQ1"
inline constexpr size_t kPayloadHeaderSize = 24;

struct PayloadHeader {
  uint32_t magic = kPayloadMagic;
  uint32_t stream = 0;
  uint64_t sequence = 0;
  uint64_t send_ns = 0;
};

enum class PayloadStatus : uint8_t {
  ok,
  too_short,  // fewer than kPayloadHeaderSize bytes
  bad_magic,  // not a netdaq payload
  corrupt,    // header fine, pattern bytes wrong (stream/sequence of the header is valid)
};
const char* to_string(PayloadStatus s) noexcept;

// CLOCK_MONOTONIC in nanoseconds (the clock of the send-time field).
uint64_t payload_clock_ns() noexcept;

// Writes header + pattern over all of buf. Returns false (writes nothing) when buf is
// shorter than the header.
bool write_payload(std::span<std::byte> buf, uint32_t stream, uint64_t seq, uint64_t send_ns) noexcept;

// Writes the header only, leaving the rest of buf as it is: for a receiver that checks
// headers only (netdaq bench --no-verify), as perftest sends whatever its buffers hold.
// Returns false (writes nothing) when buf is shorter than the header.
bool write_payload_header(std::span<std::byte> buf, uint32_t stream, uint64_t seq, uint64_t send_ns) noexcept;

// Rewrites only the send-time field (e.g. just before a retried send). The pattern does
// not depend on it.
void stamp_payload(std::span<std::byte> buf, uint64_t send_ns) noexcept;

// Reads the header only (no pattern check).
PayloadStatus parse_payload(std::span<const std::byte> buf, PayloadHeader* out) noexcept;

// Reads the header and checks every pattern byte. *out is filled whenever the header is
// readable (status ok or corrupt).
PayloadStatus verify_payload(std::span<const std::byte> buf, PayloadHeader* out) noexcept;
// The same over a received packet's segments (header-data split: the payload may be spread
// over segments 0 and 1). check_pattern = false checks the header only.
PayloadStatus verify_payload(const Packet& pkt, PayloadHeader* out, bool check_pattern = true) noexcept;

// Pattern bytes of (stream, seq) for payload offsets [offset, offset + dst.size()),
// offset >= kPayloadHeaderSize. check_pattern returns true when src matches.
void fill_pattern(std::span<std::byte> dst, uint32_t stream, uint64_t seq, size_t offset) noexcept;
bool check_pattern(std::span<const std::byte> src, uint32_t stream, uint64_t seq, size_t offset) noexcept;

// Exact sequence accounting of one stream.
//
// Counters (all exact):
//   received   = unique + duplicates + late + malformed   (every packet offered)
//   unique     packets whose sequence number was seen for the first time
//   duplicates packets whose sequence number had already been seen (within the window)
//   reordered  unique packets that arrived after a higher sequence number
//   lost       sequence numbers never received: finalised gaps, see below
//   malformed  packets counted with add_malformed() (bad pattern etc.)
//   late       packets older than the window: they cannot be told apart from duplicates;
//              their sequence number was already counted lost and stays so
//
// The tracker keeps a bitmap of the last `window` sequence numbers below the highest seen
// + 1. O(1) per packet (amortised: a jump forward of J costs O(min(J, window) / 64) word
// operations once), no allocation after construction. A sequence number that leaves the
// window unseen is counted lost for good: a packet reordered by more than `window`
// positions is counted lost + late, not reordered. A jump forward of any size is fine:
// the skipped numbers are counted missing (lost once they leave the window or at
// finish()).
class SequenceTracker {
 public:
  // window: power of two >= 64 (rounded up). first: the first sequence number expected.
  explicit SequenceTracker(uint64_t window = 65536, uint64_t first = 0);

  // Accounts one well-formed packet. Returns true if it was unique.
  bool add(uint64_t seq) noexcept;
  void add_malformed(uint64_t n = 1) noexcept {
    received_ += n;
    malformed_ += n;
  }

  // Closes the books: every gap still in the window becomes lost, and with expected_total
  // (the number of packets the sender sent, sequences first .. first+expected_total-1)
  // the missing tail too. Idempotent; after it, add() counts every packet as late.
  void finish() noexcept;
  void finish(uint64_t expected_total) noexcept;

  uint64_t received() const noexcept { return received_; }
  uint64_t unique() const noexcept { return unique_; }
  uint64_t duplicates() const noexcept { return duplicates_; }
  uint64_t reordered() const noexcept { return reordered_; }
  uint64_t malformed() const noexcept { return malformed_; }
  uint64_t late() const noexcept { return late_; }
  // Gaps that can no longer be filled (left the window, or finished).
  uint64_t lost() const noexcept { return lost_; }
  // Gaps still in the window (may yet arrive reordered).
  uint64_t missing() const noexcept { return pending_; }
  // lost() + missing(): every sequence number below highest()+1 not yet seen.
  uint64_t lost_so_far() const noexcept { return lost_ + pending_; }
  // Highest sequence number seen + 1 (first when nothing seen yet).
  uint64_t next_expected() const noexcept { return next_; }
  uint64_t window() const noexcept { return mask_ + 1; }
  bool finished() const noexcept { return finished_; }

 private:
  bool test_and_set(uint64_t seq) noexcept;
  void advance(uint64_t new_next) noexcept;

  std::vector<uint64_t> words_;
  uint64_t mask_ = 0;        // window - 1
  uint64_t first_ = 0;
  uint64_t next_ = 0;        // highest seen + 1
  uint64_t received_ = 0, unique_ = 0, duplicates_ = 0, reordered_ = 0;
  uint64_t malformed_ = 0, late_ = 0, lost_ = 0, pending_ = 0;
  bool finished_ = false;
};

}  // namespace netdaq
