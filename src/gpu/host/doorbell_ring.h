// Doorbell ring between a host thread and a persistent kernel: N burst descriptors in
// memory both sides see (mapped pinned memory on a GPU build; plain memory in unit tests).
// No CUDA header: the same layout is read by device code and tested on the CPU.
//
// Protocol, per descriptor (state word, 32 bits):
//   host: FREE -> (fill job, seq) -> READY   release store; the consumer's acquire load of
//                                             READY makes job and seq visible
//   GPU:  READY -> (place) -> DONE           release store after the placed bytes are visible
//   host: DONE -> FREE                       in order, by poll_done()
// Burst k goes to descriptor k % N, so the consumer knows which descriptor to watch next.
// The control block's stop word asks the consumer to quit; `started` is the consumer's
// "I am running" reply.
//
// One host thread owns the ring (acquire, publish, poll_done); the consumer is the GPU or a
// test thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/place_job.h"

namespace netdaq::gpu {

enum class DescState : uint32_t { free = 0, ready = 1, done = 2 };

// One cache line: the host's write of a descriptor and the GPU's DONE never share a line
// with a neighbour, so a slot being filled does not bounce the line the GPU is polling.
struct alignas(64) BurstDescriptor {
  uint32_t state = 0;   // DescState; only touched through atomic refs
  uint32_t reserved = 0;
  uint64_t seq = 0;     // burst number (0, 1, ...): the consumer checks it is the one it waits for
  PlaceJob job;
  uint64_t seq_check = 0;  // = seq, written with the job before READY: a consumer that reads the
                           // whole descriptor in one request checks both halves are this burst's
};
static_assert(sizeof(BurstDescriptor) == 64);
static_assert(offsetof(BurstDescriptor, seq_check) == 48);
static_assert(offsetof(BurstDescriptor, state) == 0);

struct alignas(64) RingControl {
  uint32_t stop = 0;     // host -> consumer: 1 = quit
  uint32_t started = 0;  // consumer -> host: 1 once it polls the ring
};
static_assert(sizeof(RingControl) == 64);

class DoorbellRing {
 public:
  static constexpr size_t kAlign = 64;
  // Bytes of memory a ring of `slots` descriptors needs: control block, then descriptors.
  static constexpr size_t bytes_for(uint32_t slots) noexcept {
    return sizeof(RingControl) + size_t{slots} * sizeof(BurstDescriptor);
  }

  // Lays the ring over `memory` (bytes_for(slots), 64-byte aligned) and initialises it:
  // every descriptor FREE, stop and started 0. Throws Error(invalid_config) on bad arguments.
  DoorbellRing(void* memory, uint32_t slots);
  DoorbellRing(const DoorbellRing&) = delete;
  DoorbellRing& operator=(const DoorbellRing&) = delete;

  // The next descriptor in order when it is FREE, else nullptr (ring full: `slots` bursts
  // published and not yet recycled by poll_done). Fill its job, then publish() it.
  BurstDescriptor* acquire() noexcept;
  // Makes the descriptor acquire() returned READY with the next sequence number.
  void publish(BurstDescriptor& d) noexcept;
  // Recycles DONE descriptors to FREE in publication order, stopping at the first that is
  // not DONE; returns how many.
  uint32_t poll_done() noexcept;

  void request_stop() noexcept;
  bool stop_requested() const noexcept;
  bool consumer_started() const noexcept;

  uint64_t published() const noexcept { return published_; }
  uint64_t completed() const noexcept { return completed_; }
  uint32_t in_flight() const noexcept { return static_cast<uint32_t>(published_ - completed_); }
  uint32_t slots() const noexcept { return slots_; }
  RingControl* control() const noexcept { return control_; }
  BurstDescriptor* descriptors() const noexcept { return desc_; }

 private:
  RingControl* control_;
  BurstDescriptor* desc_;
  uint32_t slots_;
  uint32_t head_ = 0;  // descriptor of the next publish (published_ % slots_)
  uint32_t tail_ = 0;  // descriptor of the next completion (completed_ % slots_)
  uint64_t published_ = 0;
  uint64_t completed_ = 0;
};

}  // namespace netdaq::gpu
