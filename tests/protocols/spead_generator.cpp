#include "protocols/spead_generator.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>

namespace netdaq::testgen {

namespace {

// SPEAD's own item identifiers (spec section "ItemPointers").
constexpr uint64_t kHeapCounter = 0x1, kHeapSize = 0x2, kHeapOffset = 0x3, kPayloadLength = 0x4;
constexpr uint64_t kStreamControl = 0x6, kStreamStop = 2;

void put_be(std::vector<std::byte>& out, uint64_t v, unsigned bytes) {
  for (unsigned i = bytes; i-- > 0;) out.push_back(static_cast<std::byte>(v >> (8 * i)));
}

// The address field's bits, capped so that odd hand-written widths still encode.
unsigned address_bits_of(uint8_t heap_address_width) { return std::min(8u * heap_address_width, 63u); }
uint64_t low_bits(unsigned bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

uint64_t encode_pointer(const SpeadPointer& p, unsigned address_bits) {
  const uint64_t mode = p.immediate ? uint64_t{1} << 63 : 0;
  const uint64_t id = (p.id << address_bits) & low_bits(63);
  return mode | id | (p.value & low_bits(address_bits));
}

// One packet before encoding, and what the truth says of it.
struct PlannedPacket {
  GeneratedPacket packet;
  SpeadPacketTruth truth;
  std::optional<FrameTruth> begins;  // the frame whose first packet this is
};

class Planner {
 public:
  explicit Planner(const SpeadGenOptions& o)
      : o_(o), address_bits_(o.heap_address_bits), address_mask_(low_bits(address_bits_)),
        id_mask_(low_bits(63 - address_bits_)), rng_(o.seed) {
    check_options();
  }

  std::vector<PlannedPacket> stream(unsigned s) {
    std::vector<PlannedPacket> out;
    uint64_t counter = o_.first_heap_counter;
    for (unsigned k = 0; k < o_.heaps_per_stream; ++k, counter += o_.heap_counter_step)
      heap(s, k, counter & address_mask_, out);
    if (o_.stop_packets) out.push_back(stop(s, counter & address_mask_));
    return out;
  }

 private:
  void check_options() const {
    if (o_.heap_address_bits != 48 && o_.heap_address_bits != 40)
      throw std::invalid_argument("make_spead: heap_address_bits must be 48 or 40");
    if (o_.max_payload == 0) throw std::invalid_argument("make_spead: max_payload must be > 0");
    if (o_.heap_sizes.empty()) throw std::invalid_argument("make_spead: no heap sizes");
    for (uint64_t size : o_.heap_sizes)
      if (size > address_mask_) throw std::invalid_argument("make_spead: a heap size needs more than the address bits");
    const uint64_t last = o_.first_heap_counter + uint64_t{o_.heaps_per_stream} * o_.heap_counter_step;
    if (o_.first_heap_counter > address_mask_ || last > address_mask_)
      throw std::invalid_argument("make_spead: heap counters need more than the address bits");
    check_id(o_.stream_item);
    check_id(o_.address_item);
    for (const auto& item : o_.extra_items) {
      if (item.id == 0) throw std::invalid_argument("make_spead: extra item id 0 (SPEAD's null item)");
      check_id(item.id);
    }
  }
  void check_id(uint64_t id) const {
    if (id == 0) return;
    if (id <= kStreamControl) throw std::invalid_argument("make_spead: item id " + std::to_string(id) + " is SPEAD's own");
    if (id > id_mask_) throw std::invalid_argument("make_spead: item id " + std::to_string(id) + " too wide");
  }

  uint32_t next_payload_bytes(uint64_t left) {
    uint64_t n = o_.max_payload;
    if (o_.random_payload_sizes) n = 1 + rng_() % o_.max_payload;
    return static_cast<uint32_t>(std::min(n, left));
  }

  void heap(unsigned s, unsigned k, uint64_t counter, std::vector<PlannedPacket>& out) {
    const uint64_t size = o_.heap_sizes[k % o_.heap_sizes.size()];
    FrameTruth frame{s, counter, std::vector<std::byte>(size)};
    for (auto& b : frame.bytes) b = static_cast<std::byte>(rng_());

    std::vector<SpeadPointer> metadata;
    for (const auto& item : o_.extra_items)
      metadata.push_back({true, item.id, (item.base + k * item.per_heap + s * item.per_stream) & address_mask_});

    uint64_t offset = 0;
    do {
      const bool first = offset == 0;
      const uint32_t bytes = next_payload_bytes(size - offset);
      PlannedPacket p;
      std::vector<SpeadPointer> pointers = {{true, kHeapCounter, counter}};
      if (o_.send_heap_size) pointers.push_back({true, kHeapSize, size});
      pointers.push_back({true, kHeapOffset, offset});
      pointers.push_back({true, kPayloadLength, bytes});
      add_stream_item(s, pointers, p.truth);
      if (first || o_.extra_items_every_packet) pointers.insert(pointers.end(), metadata.begin(), metadata.end());
      if (first && o_.address_item) pointers.push_back({false, o_.address_item, 0});
      p.truth.heap_size = o_.send_heap_size ? size : 0;

      const auto payload = std::span(frame.bytes).subspan(offset, bytes);
      const uint32_t payload_start = encode(pointers, payload, p.packet.payload);
      p.truth.items = metadata_of(pointers);
      if (bytes > 0) p.packet.spans.push_back({s, counter, offset, payload_start, bytes});
      if (first) p.begins = frame;
      out.push_back(std::move(p));
      offset += bytes;
    } while (offset < size);
    out.back().packet.marker = size > 0;  // the heap's last byte; an empty heap's packet ends nothing
  }

  // Stream control "stop" (spec: value 2), as its own heap with no payload.
  PlannedPacket stop(unsigned s, uint64_t counter) {
    PlannedPacket p;
    std::vector<SpeadPointer> pointers = {{true, kHeapCounter, counter}};
    if (o_.send_heap_size) pointers.push_back({true, kHeapSize, 0});
    pointers.push_back({true, kHeapOffset, 0});
    pointers.push_back({true, kPayloadLength, 0});
    pointers.push_back({true, kStreamControl, kStreamStop});
    add_stream_item(s, pointers, p.truth);
    p.truth.stop = true;
    encode(pointers, {}, p.packet.payload);
    return p;
  }

  void add_stream_item(unsigned s, std::vector<SpeadPointer>& pointers, SpeadPacketTruth& truth) const {
    if (!o_.stream_item) return;
    pointers.push_back({true, o_.stream_item, s});
    truth.has_stream = true;
    truth.stream = s;
  }

  // The immediate items that are neither SPEAD's own nor the stream item, in packet order.
  std::vector<SpeadPointer> metadata_of(const std::vector<SpeadPointer>& pointers) const {
    std::vector<SpeadPointer> out;
    for (const auto& p : pointers)
      if (p.immediate && p.id > kStreamControl && p.id != o_.stream_item) out.push_back(p);
    return out;
  }

  // Shuffles the pointers when asked; returns where the payload starts.
  uint32_t encode(std::vector<SpeadPointer>& pointers, std::span<const std::byte> payload, std::vector<std::byte>& out) {
    if (o_.shuffle_pointers) std::shuffle(pointers.begin(), pointers.end(), rng_);
    SpeadPacketSpec spec = spead_packet_of_flavour(o_.heap_address_bits);
    spec.pointers = pointers;
    spec.payload.assign(payload.begin(), payload.end());
    out = encode_spead_packet(spec);
    return static_cast<uint32_t>(out.size() - payload.size());
  }

  const SpeadGenOptions& o_;
  const unsigned address_bits_;
  const uint64_t address_mask_, id_mask_;
  std::mt19937_64 rng_;
};

}  // namespace

std::vector<std::byte> encode_spead_packet(const SpeadPacketSpec& spec) {
  std::vector<std::byte> out;
  const uint16_t count = spec.item_count.value_or(static_cast<uint16_t>(spec.pointers.size()));
  out.reserve(8 + 8 * spec.pointers.size() + spec.payload.size());
  put_be(out, spec.magic, 1);
  put_be(out, spec.version, 1);
  put_be(out, spec.item_pointer_width, 1);
  put_be(out, spec.heap_address_width, 1);
  put_be(out, spec.reserved, 2);
  put_be(out, count, 2);
  const unsigned address_bits = address_bits_of(spec.heap_address_width);
  for (const auto& p : spec.pointers) put_be(out, encode_pointer(p, address_bits), 8);
  out.insert(out.end(), spec.payload.begin(), spec.payload.end());
  return out;
}

SpeadPacketSpec spead_packet_of_flavour(unsigned heap_address_bits) {
  SpeadPacketSpec spec;
  spec.heap_address_width = static_cast<uint8_t>(heap_address_bits / 8);
  spec.item_pointer_width = static_cast<uint8_t>(8 - spec.heap_address_width);
  return spec;
}

SpeadTraffic make_spead_traffic(const SpeadGenOptions& options) {
  Planner planner(options);
  std::vector<std::deque<PlannedPacket>> streams;
  for (unsigned s = 0; s < options.streams; ++s) {
    auto planned = planner.stream(s);
    streams.emplace_back(std::make_move_iterator(planned.begin()), std::make_move_iterator(planned.end()));
  }

  SpeadTraffic out;
  auto send = [&](PlannedPacket& p) {
    if (p.begins) out.traffic.frames.push_back(std::move(*p.begins));
    out.traffic.packets.push_back(std::move(p.packet));
    out.packets.push_back(std::move(p.truth));
  };
  if (options.interleave) {
    for (bool any = true; any;) {  // one packet of each stream in turn
      any = false;
      for (auto& q : streams) {
        if (q.empty()) continue;
        send(q.front());
        q.pop_front();
        any = true;
      }
    }
  } else {
    for (auto& q : streams)
      for (auto& p : q) send(p);
  }
  return out;
}

GeneratedTraffic make_spead(const SpeadGenOptions& options) { return make_spead_traffic(options).traffic; }

}  // namespace netdaq::testgen
