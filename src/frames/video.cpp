// include/netdaq/video.h: the SDP frame rate, and the lines of a frame that miss bytes.
#include "netdaq/video.h"

#include <charconv>

#include "protocols/rtp_video_format.h"

namespace netdaq {
namespace {

bool parse_part(std::string_view s, uint32_t& out) noexcept {
  if (s.empty()) return false;
  uint32_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v == 0) return false;
  out = v;
  return true;
}

// Bits lo..hi-1 of a word (0 <= lo < hi <= 64).
uint64_t word_mask(uint64_t lo, uint64_t hi) noexcept {
  return (hi == 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1) & ~((uint64_t{1} << lo) - 1);
}

// Any granule in [first, last) missing: bits mark presence (set_is_missing false; granules
// past the words are missing) or absence (true; granules past the words are present).
bool any_missing(std::span<const uint64_t> bits, uint64_t first, uint64_t last, bool set_is_missing) noexcept {
  const uint64_t fw = first / 64, lw = (last - 1) / 64;
  for (uint64_t w = fw; w <= lw; ++w) {
    const uint64_t m = word_mask(w == fw ? first % 64 : 0, w == lw ? (last - 1) % 64 + 1 : 64);
    if (w >= bits.size()) return !set_is_missing;
    if (set_is_missing ? (bits[w] & m) != 0 : (bits[w] & m) != m) return true;
  }
  return false;
}

uint32_t missing_lines(const VideoOptions& v, std::span<const uint64_t> bits, bool set_is_missing, uint32_t granule,
                       std::span<uint64_t> missing) noexcept {
  const uint64_t line = protocols::video::line_bytes(v);
  for (uint64_t& w : missing) w = 0;  // bits past the last line stay clear
  uint32_t count = 0;
  for (uint32_t l = 0; l < v.height; ++l) {
    // Granules overlapping the line's bytes (a granule across two lines counts for both).
    const bool lost = granule == 0 || line == 0 ||
                      any_missing(bits, l * line / granule, ((l + 1) * line + granule - 1) / granule, set_is_missing);
    count += lost;
    if (lost && l / 64 < missing.size()) missing[l / 64] |= uint64_t{1} << (l % 64);
  }
  return count;
}

}  // namespace

bool parse_exactframerate(std::string_view text, uint32_t& num, uint32_t& den) noexcept {
  const size_t slash = text.find('/');
  uint32_t n = 0, d = 1;
  if (!parse_part(text.substr(0, slash), n)) return false;
  if (slash != std::string_view::npos && !parse_part(text.substr(slash + 1), d)) return false;
  num = n;
  den = d;
  return true;
}

std::string exactframerate_text(const VideoOptions& v) {
  return v.rate_den == 1 ? std::to_string(v.rate_num) : std::to_string(v.rate_num) + "/" + std::to_string(v.rate_den);
}

uint64_t video_line_bytes(const VideoOptions& v) noexcept { return protocols::video::line_bytes(v); }
uint64_t video_frame_bytes(const VideoOptions& v) noexcept { return protocols::video::frame_bytes(v); }

uint32_t video_missing_lines(const VideoOptions& v, std::span<const uint64_t> presence, uint32_t granule,
                             std::span<uint64_t> missing) noexcept {
  return missing_lines(v, presence, false, granule, missing);
}

uint32_t video_lines_of_missing_granules(const VideoOptions& v, std::span<const uint64_t> missing_granules,
                                         uint32_t granule, std::span<uint64_t> missing) noexcept {
  return missing_lines(v, missing_granules, true, granule, missing);
}

}  // namespace netdaq
