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
  // A staged job (launch_place's stage): the same kernel first gathers the entries with a
  // stage index into `stage`, device memory the caller keeps until the job completed.
  // per_burst and graph; persistent only into the staging places given in ExecutorOptions.
  virtual bool submit_staged(const PlaceJob& job, std::byte* stage) noexcept {
    (void)job;
    (void)stage;
    return false;
  }
  // Jobs finished so far (monotonic, in submission order). Non-blocking.
  virtual uint64_t completed() noexcept = 0;
  // The same, from a caller that has just read detail::monotonic_ns() (now_ns): the executors
  // that throttle their queries by time use it instead of reading the clock again.
  virtual uint64_t completed_at(uint64_t now_ns) noexcept {
    (void)now_ns;
    return completed();
  }
  virtual uint64_t submitted() const noexcept = 0;
  // Blocks until every submitted job has finished; throws Error on a CUDA fault.
  virtual void synchronize() = 0;
  // The stream work is ordered on (per_burst, graph); persistent: a stream for copies.
  virtual cudaStream_t stream() const noexcept = 0;
  virtual LaunchMode mode() const noexcept = 0;
};

// One burst's GPU times (ns of %globaltimer), written by the persistent kernel when
// PersistentTuning::trace is set. "Last CTA": the one whose arrival completed the burst (the
// leader itself for a burst it placed alone); its stamps are thread 0's.
struct alignas(64) PersistentTraceRecord {
  uint64_t seq_plus_1;  // 0: never written
  uint64_t ready;       // the leader accepted the READY descriptor
  uint64_t relayed;     // the last CTA had the job (= ready for the leader)
  uint64_t go;          // it passed the barrier after which its threads place
  uint64_t own;         // its thread 0 had placed its own share (before the CTA barrier)
  uint64_t placed;      // all its threads had placed (after the barrier)
  uint64_t arrived;     // its arrival returned (= placed when placed alone)
  uint64_t done;        // its DONE store was issued (the release fence done)
  uint64_t solo;        // 1: placed by the leader alone
  uint64_t sm_cycles;   // clock64() cycles of the last CTA's thread 0 from `relayed` to `done` (its SM clock)
  uint64_t reserved[6];
};
static_assert(sizeof(PersistentTraceRecord) == 128);

// persistent: how the kernel runs each burst's chain (bench/gpu/README.md, "Persistent kernel:
// where the latency goes"). The defaults are the faster variants on an H200 (gpu_latency's
// `chain` rows flip each one alone); `legacy()` gives the chain as it was before them. Every
// combination is correct (in-order completion, groups, stop) and covered by
// tests/gpu/persistent_chain_test.cpp.
struct PersistentTuning {
  // Poll of the doorbell: ld.acquire.sys of the 64-byte descriptor (no fence once READY is
  // seen) instead of ld.relaxed.sys followed by a system-scope fence (measured ~0.45 us).
  bool acquire_load = true;
  // Leader -> group relay: the job and its sequence number in one 64-byte line of 8 words,
  // each a 32-bit tag (seq + 1) beside 32 bits of the job: one store, one load, no fence.
  // false: the job, then a `go` word stored with release (a fence on the leader, a second
  // dependent load on every other CTA).
  bool tagged_relay = true;
  // Bursts of at most this many bytes (count x max(in_bytes, out_slot_bytes)) are placed by
  // the group's leader alone, which then stores DONE itself: no relay wait, no arrivals. A
  // group of one CTA always goes this way. 0: off (every burst by the whole group). Above
  // 0 but without tagged_relay: only groups of one CTA. 64 KB: 64 x 1 KB bursts were faster
  // alone, 16 x 8 KB (128 KB) slower (one CTA's loads in flight bound it).
  uint32_t solo_max_bytes = 65536;
  // Arrivals: one atom.inc.acq_rel (it wraps to 0 at the group's size, so no reset store) per
  // CTA, instead of __threadfence + fetch_add(acq_rel) + a reset store by the last CTA.
  bool inc_arrival = true;
  // Polls (leader's doorbell, other CTAs' relay) without __nanosleep after each burst, then
  // the 32..128 ns backoff. 0: back off from the first poll.
  uint32_t spin_polls = 256;
  // Bench / debug only: per-burst %globaltimer stamps into device memory, record seq %
  // trace_records (PersistentTraceRecord). nullptr: off (one predicate per burst).
  PersistentTraceRecord* trace = nullptr;
  uint32_t trace_records = 0;

  static constexpr PersistentTuning legacy() noexcept {
    PersistentTuning t;
    t.acquire_load = false;
    t.tagged_relay = false;
    t.solo_max_bytes = 0;
    t.inc_arrival = false;
    t.spin_polls = 0;
    return t;
  }
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
  PersistentTuning persistent;  // persistent only
  // persistent, staging copy: device memory of depth places of stage_slot_bytes each; job k's
  // staged entries (submit_staged) are gathered into place k % depth, which submit_staged's
  // `stage` must be. nullptr: submit_staged refused (the kernel reads every packet in place).
  std::byte* stage = nullptr;
  uint64_t stage_slot_bytes = 0;
};

// Throws Error on setup failure (no GPU, bad index, launch failure of the persistent kernel).
std::unique_ptr<PlaceExecutor> make_executor(LaunchMode mode, const ExecutorOptions& opts);

}  // namespace netdaq::gpu
