#include "gpu/host/doorbell_ring.h"

#include <atomic>
#include <new>
#include <string>

#include "netdaq/status.h"

namespace netdaq::gpu {
namespace {

// The words are shared with another agent (GPU or thread) that uses them as atomics, while
// the structs stay plain data that device code can read: hence atomic_ref, not std::atomic.
std::atomic_ref<uint32_t> word(uint32_t& w) noexcept { return std::atomic_ref<uint32_t>(w); }

uint32_t load_state(BurstDescriptor& d) noexcept { return word(d.state).load(std::memory_order_acquire); }

}  // namespace

DoorbellRing::DoorbellRing(void* memory, uint32_t slots) : slots_(slots) {
  if (slots == 0) throw Error(Errc::invalid_config, "doorbell ring: needs at least 1 slot");
  if (memory == nullptr || reinterpret_cast<uintptr_t>(memory) % kAlign != 0)
    throw Error(Errc::invalid_config, "doorbell ring: memory must be non-null and 64-byte aligned");
  static_assert(std::atomic_ref<uint32_t>::required_alignment <= alignof(uint32_t));
  control_ = new (memory) RingControl{};
  desc_ = reinterpret_cast<BurstDescriptor*>(static_cast<std::byte*>(memory) + sizeof(RingControl));
  for (uint32_t i = 0; i < slots; ++i) new (desc_ + i) BurstDescriptor{};
  // The consumer must start after this (thread start and kernel launch order these writes).
}

BurstDescriptor* DoorbellRing::acquire() noexcept {
  BurstDescriptor& d = desc_[head_];
  return load_state(d) == static_cast<uint32_t>(DescState::free) ? &d : nullptr;
}

void DoorbellRing::publish(BurstDescriptor& d) noexcept {
  d.seq = published_;
  // Release: the job (written by the caller before publish) is visible before seq_check, so a
  // consumer that sees seq_check of this burst also sees the job's second half beside it.
  std::atomic_ref<uint64_t>(d.seq_check).store(published_, std::memory_order_release);
  word(d.state).store(static_cast<uint32_t>(DescState::ready), std::memory_order_release);
  ++published_;
  if (++head_ == slots_) head_ = 0;
}

uint32_t DoorbellRing::poll_done() noexcept {
  uint32_t n = 0;
  while (completed_ < published_) {
    BurstDescriptor& d = desc_[tail_];
    if (load_state(d) != static_cast<uint32_t>(DescState::done)) break;
    word(d.state).store(static_cast<uint32_t>(DescState::free), std::memory_order_relaxed);
    ++completed_;
    ++n;
    if (++tail_ == slots_) tail_ = 0;
  }
  return n;
}

void DoorbellRing::request_stop() noexcept { word(control_->stop).store(1, std::memory_order_release); }

bool DoorbellRing::stop_requested() const noexcept {
  return word(control_->stop).load(std::memory_order_acquire) != 0;
}

bool DoorbellRing::consumer_started() const noexcept {
  return word(control_->started).load(std::memory_order_acquire) != 0;
}

}  // namespace netdaq::gpu
