// SPEAD traffic as a sensor sends it (SPEAD protocol rev. 1, 2012: SPEAD-64-48 and -64-40),
// written from the spec alone (never from src/protocols): heaps cut into packets, each with
// the 8-byte header, immediate item pointers heap counter (0x1), heap size (0x2), heap offset
// (0x3) and payload length (0x4), optional stream / metadata items, and a piece of the heap.
// The truth (generated.h): one frame per heap (frame = heap counter), one span per packet
// that carries payload bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "protocols/generated.h"

namespace netdaq::testgen {

// One item pointer: immediate (value in the address field) or absolute (a heap address).
struct SpeadPointer {
  bool immediate = true;
  uint64_t id = 0;
  uint64_t value = 0;  // truncated to the heap address width when encoded
};

// One packet, field by field, to write odd packets by hand (a wrong magic, a count that lies).
struct SpeadPacketSpec {
  uint8_t magic = 0x53;
  uint8_t version = 4;
  uint8_t item_pointer_width = 2;  // bytes: 2 + 6 = SPEAD-64-48, 3 + 5 = SPEAD-64-40
  uint8_t heap_address_width = 6;
  uint16_t reserved = 0;
  std::optional<uint16_t> item_count;  // the header's count; unset: pointers.size()
  std::vector<SpeadPointer> pointers;
  std::vector<std::byte> payload;
};
std::vector<std::byte> encode_spead_packet(const SpeadPacketSpec& spec);

// The widths of a flavour given by its heap address bits (48 or 40).
SpeadPacketSpec spead_packet_of_flavour(unsigned heap_address_bits);

// An immediate item sent with every heap, e.g. a timestamp: value = base + heap_index *
// per_heap + stream * per_stream (heap_index counts the stream's heaps from 0).
struct SpeadExtraItem {
  uint64_t id = 0;
  uint64_t base = 0;
  uint64_t per_heap = 0;
  uint64_t per_stream = 0;
};

struct SpeadGenOptions {
  unsigned heap_address_bits = 48;            // 48 (SPEAD-64-48) or 40 (SPEAD-64-40)
  unsigned streams = 1;
  unsigned heaps_per_stream = 4;
  std::vector<uint64_t> heap_sizes = {4096};  // bytes, cycled over each stream's heaps (0: an empty heap)
  uint32_t max_payload = 1024;                // payload bytes per packet at most
  bool random_payload_sizes = false;          // each packet 1..max_payload bytes, not max_payload
  bool send_heap_size = true;                 // item 0x2 in every packet
  uint64_t stream_item = 0;                   // non-zero: an immediate item = the stream number, every packet
  std::vector<SpeadExtraItem> extra_items;    // immediate metadata of each heap ...
  bool extra_items_every_packet = false;      // ... in its first packet only (as spead2 sends), or in all
  uint64_t address_item = 0;                  // non-zero: an absolute item pointer (address 0) in each
                                              // heap's first packet, the way data items are described
  bool interleave = true;                     // streams' packets round robin; false: one stream after another
  bool shuffle_pointers = false;              // item pointers in a random order in each packet
  bool stop_packets = false;                  // each stream ends with a stream-control stop (no payload)
  uint64_t first_heap_counter = 1;
  uint64_t heap_counter_step = 1;
  uint64_t seed = 1;                          // payload bytes and random choices
};

// What a decoder should say about one packet beyond the spans: its immediate metadata items
// (in packet order), its stream item, and its heap size.
struct SpeadPacketTruth {
  std::vector<SpeadPointer> items;  // immediate items other than 0x1..0x6 and the stream item
  bool has_stream = false;
  uint64_t stream = 0;
  uint64_t heap_size = 0;           // 0 when not sent
  bool stop = false;                // a stream-control stop packet
};

struct SpeadTraffic {
  GeneratedTraffic traffic;
  std::vector<SpeadPacketTruth> packets;  // one per traffic.packets entry
};

// Throws std::invalid_argument for options SPEAD cannot express (a width other than 48 / 40,
// max_payload 0, a heap counter or size that needs more than the address bits).
SpeadTraffic make_spead_traffic(const SpeadGenOptions& options);
GeneratedTraffic make_spead(const SpeadGenOptions& options);

}  // namespace netdaq::testgen
