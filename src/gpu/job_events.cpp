#include "gpu/job_events.h"

#include "core/pacer.h"
#include "gpu/cuda_check.h"

namespace netdaq::gpu {

JobEvents::JobEvents(uint32_t depth, const std::string& who)
    : who_(who), events_(new cudaEvent_t[depth]()), depth_(depth) {
  for (uint32_t i = 0; i < depth; ++i) {
    const cudaError_t err = cudaEventCreateWithFlags(&events_[i], cudaEventDisableTiming);
    if (err != cudaSuccess) {
      for (uint32_t j = 0; j < i; ++j) cudaEventDestroy(events_[j]);
      delete[] events_;
      check(err, who + ": cudaEventCreate");
    }
  }
}

JobEvents::~JobEvents() {
  for (uint32_t i = 0; i < depth_; ++i) cudaEventDestroy(events_[i]);
  delete[] events_;
}

bool JobEvents::has_room() noexcept {
  if (submitted_ - completed_ < depth_) return true;
  reap();
  return submitted_ - completed_ < depth_;
}

cudaError_t JobEvents::record(cudaStream_t stream) noexcept {
  const cudaError_t err = cudaEventRecord(events_[submitted_ % depth_], stream);
  if (err == cudaSuccess) ++submitted_;
  return err;
}

uint64_t JobEvents::reap(bool force, uint64_t now_ns) noexcept {
  // now_ns may be older than not_ready_ns_ (a caller's earlier reading): no wrap-around.
  if (!force && not_ready_ns_ && (now_ns ? now_ns : detail::monotonic_ns()) < not_ready_ns_ + kRequeryNs)
    return completed_;
  not_ready_ns_ = 0;
  while (fault_ == cudaSuccess && completed_ < submitted_) {
    const cudaError_t err = cudaEventQuery(events_[completed_ % depth_]);
    if (err == cudaErrorNotReady) {
      not_ready_ns_ = now_ns ? now_ns : detail::monotonic_ns();
      break;
    }
    if (err != cudaSuccess) {
      fault_ = err;
      break;
    }
    ++completed_;
  }
  return completed_;
}

void JobEvents::set_fault(cudaError_t err) noexcept {
  if (fault_ == cudaSuccess) fault_ = err;
}

void JobEvents::throw_if_fault() const {
  if (fault_ != cudaSuccess) check(fault_, who_);
}

}  // namespace netdaq::gpu
