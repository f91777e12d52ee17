// A VITA-49.2 sensor (vita49_generator.h), from the standard's packet layout.
#include "protocols/vita49_generator.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

namespace netdaq::testgen {
namespace {

constexpr uint32_t kWord = 4;
constexpr uint32_t kCif0SampleRate = 1u << 21;  // context indicator field 0: sample rate follows
constexpr int kSampleRateRadix = 20;            // the sample-rate field's fractional bits

void put_be32(std::vector<std::byte>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::byte>(v >> shift));
}
void put_be64(std::vector<std::byte>& out, uint64_t v) {
  put_be32(out, static_cast<uint32_t>(v >> 32));
  put_be32(out, static_cast<uint32_t>(v));
}

bool type_has_stream_id(uint8_t type) { return type == 1 || type == 3 || (type >= 4 && type <= 7); }

uint32_t header_word(const VrtPacketFields& f, uint16_t size_words) {
  return uint32_t{f.type} << 28 | uint32_t{f.class_id} << 27 | uint32_t{f.trailer} << 26 |
         uint32_t(f.indicators & 3u) << 24 | uint32_t(static_cast<uint8_t>(f.tsi) & 3u) << 22 |
         uint32_t(static_cast<uint8_t>(f.tsf) & 3u) << 20 | uint32_t(f.packet_count & 15u) << 16 | size_words;
}

// The time of sample `s` (counted from sample 0 of frame 0) as (integer, fractional) timestamps.
struct SampleTime {
  uint32_t integer = 0;
  uint64_t fractional = 0;
};
SampleTime time_of(const Vita49GenOptions& o, uint64_t s) {
  SampleTime t;
  const bool seconds = o.tsi != VrtTsi::none && o.sample_rate != 0;
  const uint64_t integer = seconds ? s / o.sample_rate : 0;
  if (integer > UINT32_MAX) throw std::invalid_argument("vita49 generator: integer timestamp beyond 32 bits");
  t.integer = static_cast<uint32_t>(integer);
  // A sample count restarts each integer second; a free-running count never does.
  t.fractional = seconds && o.tsf == VrtTsf::sample_count ? s % o.sample_rate : s;
  return t;
}

void check_options(const Vita49GenOptions& o) {
  if (o.tsf != VrtTsf::sample_count && o.tsf != VrtTsf::free_running)
    throw std::invalid_argument("vita49 generator: tsf must be sample_count or free_running");
  if (o.samples_per_frame == 0 || o.sample_bytes == 0 || o.samples_per_packet.empty())
    throw std::invalid_argument("vita49 generator: samples_per_frame, sample_bytes, samples_per_packet needed");
  for (uint32_t n : o.samples_per_packet)
    if (n == 0) throw std::invalid_argument("vita49 generator: a packet of 0 samples in samples_per_packet");
}

struct StreamState {
  uint32_t id = 0;                // stream id (0 for type 0 packets)
  std::vector<std::byte> samples; // every frame's bytes, one after another
  uint64_t sent = 0;              // samples sent
  uint8_t count = 0;              // the next data packet's count
  uint8_t context_count = 0;      // ... and context packet's
};

// The packet count of the next packet of a stream; counts are mod 16.
uint8_t next_count(uint8_t& count) {
  const uint8_t now = count;
  count = (count + 1) & 15;
  return now;
}

VrtPacketFields common_fields(const Vita49GenOptions& o, uint64_t sample) {
  VrtPacketFields f;
  f.class_id = o.class_id;
  f.oui = o.oui;
  f.info_class = o.info_class;
  f.packet_class = o.packet_class;
  f.tsi = o.tsi;
  f.tsf = o.tsf;
  const SampleTime t = time_of(o, sample);
  f.integer_timestamp = t.integer;
  f.fractional_timestamp = t.fractional;
  return f;
}

class Sensor {
 public:
  Sensor(const Vita49GenOptions& o, std::vector<VrtPacketFields>* fields) : o_(o), fields_(fields) {
    check_options(o_);
    frame_bytes_ = uint64_t{o_.samples_per_frame} * o_.sample_bytes;
    std::mt19937_64 rng(o_.seed);
    const std::vector<uint32_t> ids = o_.streams.empty() ? std::vector<uint32_t>{0} : o_.streams;
    for (uint32_t id : ids) {
      StreamState s;
      s.id = id;
      s.samples.resize(frame_bytes_ * o_.frames);
      for (auto& b : s.samples) b = static_cast<std::byte>(rng());
      s.count = s.context_count = o_.first_packet_count & 15;
      streams_.push_back(std::move(s));
    }
  }

  GeneratedTraffic run() {
    const uint64_t total = uint64_t{o_.samples_per_frame} * o_.frames;
    for (size_t turn = 0; streams_.front().sent < total; ++turn) {
      const uint64_t want = o_.samples_per_packet[turn % o_.samples_per_packet.size()];
      for (StreamState& s : streams_) {
        send_data(s, std::min<uint64_t>(want, total - s.sent));
        if (o_.context_every != 0 && ++data_packets_ % o_.context_every == 0) send_context(s);
      }
    }
    return std::move(out_);
  }

 private:
  uint64_t first_sample() const { return o_.first_frame * o_.samples_per_frame; }

  void send_data(StreamState& s, uint64_t samples) {
    const uint64_t bytes = samples * o_.sample_bytes;
    if (bytes % kWord != 0)
      throw std::invalid_argument("vita49 generator: a payload of " + std::to_string(bytes) + " bytes is not whole words");
    const uint64_t start = s.sent * o_.sample_bytes;  // in the stream's sample bytes
    VrtPacketFields f = common_fields(o_, first_sample() + s.sent);
    f.type = o_.streams.empty() ? kVrtSignalData : kVrtSignalDataWithStream;
    f.stream_id = s.id;
    f.trailer = o_.trailer;
    f.trailer_word = 0x000C0000u | s.count;  // arbitrary indicators: the receiver ignores them
    f.packet_count = next_count(s.count);
    f.payload.assign(s.samples.begin() + static_cast<std::ptrdiff_t>(start),
                     s.samples.begin() + static_cast<std::ptrdiff_t>(start + bytes));
    GeneratedPacket p = encode(f);
    add_truth(s, start, bytes, vrt_prologue_words(f) * kWord, p);
    s.sent += samples;
    out_.packets.push_back(std::move(p));
  }

  // One TruthSpan per frame piece of stream bytes [start, start + bytes); a frame's truth
  // is recorded when its first byte is sent (samples go out in order).
  void add_truth(const StreamState& s, uint64_t start, uint64_t bytes, uint32_t packet_offset, GeneratedPacket& p) {
    for (uint64_t at = start; at < start + bytes;) {
      const uint64_t frame = at / frame_bytes_;
      const uint64_t offset = at % frame_bytes_;
      const uint64_t take = std::min(frame_bytes_ - offset, start + bytes - at);
      p.spans.push_back({s.id, o_.first_frame + frame, offset, static_cast<uint32_t>(packet_offset + (at - start)),
                         static_cast<uint32_t>(take)});
      if (offset == 0) add_frame(s, frame);
      at += take;
    }
  }

  void add_frame(const StreamState& s, uint64_t frame) {
    FrameTruth t;
    t.stream = s.id;
    t.frame = o_.first_frame + frame;
    const auto begin = s.samples.begin() + static_cast<std::ptrdiff_t>(frame * frame_bytes_);
    t.bytes.assign(begin, begin + static_cast<std::ptrdiff_t>(frame_bytes_));
    const SampleTime time = time_of(o_, t.frame * o_.samples_per_frame);
    t.timestamp = time.integer;
    t.timestamp_frac = time.fractional;
    out_.frames.push_back(std::move(t));
  }

  // A context packet about stream s, timed at its next sample: the sample rate when known.
  void send_context(StreamState& s) {
    VrtPacketFields f = common_fields(o_, first_sample() + s.sent);
    f.type = kVrtContext;
    f.stream_id = s.id | kVrtContextStreamBit;
    f.packet_count = next_count(s.context_count);
    const bool rate = o_.sample_rate != 0 && o_.sample_rate < (uint64_t{1} << (63 - kSampleRateRadix));
    std::vector<std::byte> fields;
    put_be32(fields, rate ? kCif0SampleRate : 0);
    if (rate) put_be64(fields, o_.sample_rate << kSampleRateRadix);
    f.payload = std::move(fields);
    GeneratedPacket p = encode(f);
    p.control = true;
    out_.packets.push_back(std::move(p));
  }

  GeneratedPacket encode(const VrtPacketFields& f) {
    if (fields_) fields_->push_back(f);
    GeneratedPacket p;
    p.payload = encode_vrt_packet(f);
    return p;
  }

  const Vita49GenOptions& o_;
  std::vector<VrtPacketFields>* fields_;
  uint64_t frame_bytes_ = 0;
  std::vector<StreamState> streams_;
  uint64_t data_packets_ = 0;
  GeneratedTraffic out_;
};

}  // namespace

uint32_t vrt_prologue_words(const VrtPacketFields& f) {
  return 1 + (type_has_stream_id(f.type) ? 1 : 0) + (f.class_id ? 2 : 0) + (f.tsi != VrtTsi::none ? 1 : 0) +
         (f.tsf != VrtTsf::none ? 2 : 0);
}

std::vector<std::byte> encode_vrt_packet(const VrtPacketFields& f) {
  const uint64_t payload_words = (f.payload.size() + kWord - 1) / kWord;
  const uint64_t words = vrt_prologue_words(f) + payload_words + (f.trailer ? 1 : 0);
  if (words > UINT16_MAX) throw std::invalid_argument("vrt packet of " + std::to_string(words) + " words");
  std::vector<std::byte> out;
  out.reserve(words * kWord);
  put_be32(out, header_word(f, f.size_words.value_or(static_cast<uint16_t>(words))));
  if (type_has_stream_id(f.type)) put_be32(out, f.stream_id);
  if (f.class_id) {
    put_be32(out, f.oui & 0xFFFFFFu);  // pad-bit count 0: payloads are whole samples
    put_be32(out, uint32_t{f.info_class} << 16 | f.packet_class);
  }
  if (f.tsi != VrtTsi::none) put_be32(out, f.integer_timestamp);
  if (f.tsf != VrtTsf::none) put_be64(out, f.fractional_timestamp);
  out.insert(out.end(), f.payload.begin(), f.payload.end());
  out.resize(out.size() + (payload_words * kWord - f.payload.size()), std::byte{0});
  if (f.trailer) put_be32(out, f.trailer_word);
  return out;
}

GeneratedTraffic make_vita49(const Vita49GenOptions& options, std::vector<VrtPacketFields>* fields) {
  if (fields) fields->clear();
  return Sensor(options, fields).run();
}

}  // namespace netdaq::testgen
