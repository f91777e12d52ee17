// Runs PlaceJobs on the GPU, three ways (ARCHITECTURE §5): one kernel launch per burst,
// a CUDA graph replayed per burst, or a persistent kernel fed through a doorbell ring of
// burst descriptors in mapped memory. Jobs complete in submission order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "gpu/place_job.h"
#include "netdaq/config.h"  // LaunchMode

namespace netdaq::gpu {

class PlaceExecutor {
 public:
  virtual ~PlaceExecutor() = default;
  // Queues a job. Returns false, queueing nothing, when `depth` jobs are already in flight.
  // The job's entries must stay valid and unchanged until completed() counts it.
  // Never throws, never allocates.
  virtual bool submit(const PlaceJob& job) noexcept = 0;
  // Jobs finished so far (monotonic, in submission order). Non-blocking.
  virtual uint64_t completed() noexcept = 0;
  virtual uint64_t submitted() const noexcept = 0;
  // Blocks until every submitted job has finished; throws Error on a CUDA fault.
  virtual void synchronize() = 0;
  // The stream work is ordered on (per_burst, graph); persistent: a stream for copies.
  virtual cudaStream_t stream() const noexcept = 0;
  virtual LaunchMode mode() const noexcept = 0;
};

struct ExecutorOptions {
  int gpu = 0;
  uint32_t depth = 4;          // jobs in flight at most
  uint32_t max_entries = 1024; // largest job (entries); graph/persistent size buffers by it
  uint32_t blocks = 0;         // persistent: CTAs of the kernel (0 = 1 per SM)
  // persistent: the CTAs split into this many groups, burst k placed by group k % groups, so
  // up to `groups` bursts run at once (0 = min(depth, 4); clamped to depth and blocks). A burst
  // gets blocks / groups CTAs: more groups help small bursts at depth >= 2, 1 gives one big
  // burst every CTA.
  uint32_t groups = 0;
};

// Throws Error on setup failure (no GPU, bad index, launch failure of the persistent kernel).
std::unique_ptr<PlaceExecutor> make_executor(LaunchMode mode, const ExecutorOptions& opts);

}  // namespace netdaq::gpu
