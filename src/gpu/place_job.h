// The unit of GPU work of the data plane: place the samples of a burst's packets into
// frame slots of an output ring in device memory, converting sample formats on the way.
// Plain data, shared by host code and device code (kernels, persistent kernel, graphs).
#pragma once

#include <cstddef>
#include <cstdint>

#include "netdaq/sample_format.h"

// Functions host code and device code both call.
#ifdef __CUDACC__
#define NDQ_HOST_DEVICE __host__ __device__
#else
#define NDQ_HOST_DEVICE
#endif

namespace netdaq::gpu {

// One packet -> one output slot. src == 0 means "no packet": the slot is zero-filled
// (how a flushed, incomplete frame gets zeros where packets are missing).
struct PlacementEntry {
  uint64_t src = 0;       // device-accessible address of the packet's input samples
  uint32_t dst_slot = 0;  // slot index in the output ring (byte offset = dst_slot * out_slot_bytes)
  // Staged launches only (a staging buffer passed with the job): k + 1 = first gather src
  // into staging place k (staged_at), then place from there; 0: place from src.
  uint32_t stage = 0;
};
static_assert(sizeof(PlacementEntry) == 16);

// One span of the placement model (protocols/decoder.h) -> its own place in the output ring.
// src == 0: zero-fill `bytes` output bytes at dst (the missing bytes of a closed frame).
struct SpanEntry {
  uint64_t src = 0;    // device-accessible address of the span's input bytes
  uint64_t dst = 0;    // byte offset in the output ring (output bytes)
  uint32_t bytes = 0;  // input bytes (zero-fill: output bytes)
  uint32_t stage = 0;  // as PlacementEntry::stage
};
static_assert(sizeof(SpanEntry) == 24);

struct PlaceJob {
  // Device-accessible (device or mapped pinned memory): PlacementEntry, or SpanEntry when spans.
  union {
    const PlacementEntry* entries = nullptr;
    const SpanEntry* span_entries;
  };
  uint32_t count = 0;                       // entries
  uint32_t in_bytes = 0;                    // input bytes per packet (all packets the same)
  std::byte* out = nullptr;                 // output ring base (device memory)
  uint32_t out_slot_bytes = 0;              // output bytes per slot (= converted in_bytes)
  SampleFormat in_format = SampleFormat::raw;
  SampleFormat out_format = SampleFormat::raw;
  ByteOrder in_order = ByteOrder::little;   // byte order of multi-byte input samples
  // 1: span_entries, each with its own length and destination; in_bytes is then the largest
  // span (staging places and threads per entry are sized by it), out_slot_bytes unused.
  uint8_t spans = 0;
};
static_assert(sizeof(PlaceJob) == 32, "the persistent kernel relays a job as 8 words");

// Staging place k of a staged launch for a packet at src: places are in_bytes rounded up to 16,
// plus 16, apart (room for the whole 16-byte vectors that hold the packet), and each copy
// lands at src's offset modulo 16, so the gather's reads from host memory are aligned 16-byte
// vectors whatever the payload's offset in its buffer.
NDQ_HOST_DEVICE constexpr uint64_t staging_stride(uint32_t in_bytes) noexcept { return (uint64_t{in_bytes} + 15) / 16 * 16 + 16; }
NDQ_HOST_DEVICE constexpr uint64_t staged_at(uint32_t k, uint64_t src, uint32_t in_bytes) noexcept {
  return uint64_t{k} * staging_stride(in_bytes) + (src & 15);
}

// Output bytes for in_bytes of input converted from `in` to `out` (raw -> raw keeps size).
constexpr uint64_t converted_bytes(uint64_t in_bytes, SampleFormat in, SampleFormat out) noexcept {
  if (in == SampleFormat::raw || out == SampleFormat::raw) return in_bytes;
  return in_bytes * 8 / sample_bits(in) * sample_bits(out) / 8;
}

}  // namespace netdaq::gpu
