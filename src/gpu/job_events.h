// Completion tracking of the per_burst and graph executors: one event per job slot, recorded
// after each job on the executor's stream and queried in submission order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace netdaq::gpu {

class JobEvents {
 public:
  JobEvents(uint32_t depth, const std::string& who);  // creates the events; throws Error
  ~JobEvents();
  JobEvents(const JobEvents&) = delete;
  JobEvents& operator=(const JobEvents&) = delete;

  // True when a job slot is free, after counting the jobs that finished.
  bool has_room() noexcept;
  // Records the event of the next job on `stream` and counts the job as submitted.
  cudaError_t record(cudaStream_t stream) noexcept;
  // Counts finished jobs in order (cudaEventQuery); stops at the first unfinished one and
  // at a CUDA fault, which it keeps for throw_if_fault(). A query costs the host about as
  // much as placing a few dozen packets, and callers ask once per burst or more: within
  // kRequeryNs of an answer "not ready" it answers from what it knows, unless `force`.
  // now_ns: the caller's detail::monotonic_ns() reading (0: read it here when needed).
  uint64_t reap(bool force = false, uint64_t now_ns = 0) noexcept;
  static constexpr uint64_t kRequeryNs = 1000;
  // Remembers the first fault of the hot path (a failed launch) for throw_if_fault().
  void set_fault(cudaError_t err) noexcept;
  // Throws Error "<who>: <fault>" when a fault was seen.
  void throw_if_fault() const;

  uint64_t submitted() const noexcept { return submitted_; }
  uint64_t completed() const noexcept { return completed_; }

 private:
  std::string who_;
  cudaEvent_t* events_ = nullptr;
  uint32_t depth_;
  uint64_t submitted_ = 0;
  uint64_t completed_ = 0;
  uint64_t not_ready_ns_ = 0;  // when a query last answered "not ready" (0: since then, one did not)
  cudaError_t fault_ = cudaSuccess;
};

}  // namespace netdaq::gpu
