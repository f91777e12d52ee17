// FramePipeline: the CPU side of the GPU data plane. For each burst it reads the sequence
// numbers (host memory), asks the FrameTracker where each packet goes, writes a placement
// list and hands the job to an executor (one launch per job, a CUDA graph, or the persistent
// kernel); with staging copy the job's launch gathers the samples into device memory first.
// Bursts are held until the GPU has read them; frames come out once the last job that wrote
// them has completed.
#include <algorithm>
#include <bit>
#include <numeric>
#include <vector>

#include "core/log.h"
#include "core/pacer.h"
#include "core/reorder_layout.h"
#include "gpu/cuda_check.h"
#include "gpu/frame_unpack.h"
#include "gpu/host/frame_tracker.h"
#include "gpu/host/packet_fields.h"
#include "gpu/host/span_tracker.h"
#include "gpu/place_executor.h"
#include "netdaq/gpu.h"
#include "netdaq/session.h"
#include "netdaq/video_unpack.h"
#include "protocols/decoder.h"

namespace netdaq::gpu {
namespace {

// launch persistent: the SMs its kernel occupies, one CTA each. A CTA takes its SM's whole
// register file (512 threads x 128 registers), so no other kernel runs on those SMs while the
// pipeline lives; auto leaves half the GPU to the application's kernels and video.unpack.
uint32_t persistent_sms(const ReorderConfig& c, const std::string& who) {
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c.gpu), who + ": SM count");
  if (!c.persistent_sms) return static_cast<uint32_t>(std::max(1, sms / 2));
  if (*c.persistent_sms > static_cast<uint32_t>(sms))
    throw Error(Errc::invalid_config, who + ": persistent_sms " + std::to_string(*c.persistent_sms) + " but gpu " +
                                          std::to_string(c.gpu) + " has " + std::to_string(sms) + " SMs");
  // The unpack kernel needs an SM the persistent kernel leaves free, or no frame comes out.
  if (c.mode == ReorderMode::rtp_video && c.video.unpack != VideoUnpack::none &&
      *c.persistent_sms == static_cast<uint32_t>(sms))
    throw Error(Errc::invalid_config, who + ": video.unpack with persistent_sms " + std::to_string(sms) +
                                          ", every SM of gpu " + std::to_string(c.gpu) +
                                          ": the unpack kernel would never run; leave SMs free (auto: half)");
  return *c.persistent_sms;
}

TrackerConfig tracker_config(const ReorderConfig& c) {
  TrackerConfig t;
  if (places_spans(c.mode)) return TrackerConfig{1, 1, 1, 64, false, 0};  // unused: SpanTracker places
  t.packets_per_frame = c.packets_per_frame;
  t.max_open_frames = c.max_open_frames;
  t.frame_buffers = c.frame_buffers;
  t.seq_bits = c.mode == ReorderMode::immediate ? 32 : c.seq_bits;  // immediates are 32 bits
  t.arrival_order = c.mode == ReorderMode::arrival;
  t.timeout_ns = uint64_t{c.frame_timeout_us ? c.frame_timeout_us : kFrameTimeoutUs} * 1000;
  return t;
}

// A job under construction or in flight: its placement list (mapped pinned memory the GPU
// reads) and the bursts whose buffers it reads.
struct JobSlot {
  PlacementEntry* entries = nullptr;
  SpanEntry* span_entries = nullptr;  // span modes (the same memory)
  uint32_t count = 0;
  std::byte* stage = nullptr;  // staging copy: its device staging buffer
  uint32_t nsrc = 0;           // entries with a staging place
  std::vector<RxBurst> bursts;     // 1, or up to job_packets when small bursts are gathered
  uint32_t nbursts = 0;
  void release_bursts() noexcept {
    for (uint32_t i = 0; i < nbursts; ++i) bursts[i].release();
    nbursts = 0;
  }
};

struct PendingFrame {
  ClosedFrame frame;
  uint64_t ready_after = 0;  // the executor must have completed this many jobs
};

}  // namespace

struct FramePipeline::Impl {
  ReorderConfig cfg;
  bool copy = true;                // staging copy (else the kernel reads packets in place)
  uint32_t max_batch = 1024;       // packets per burst at most
  uint32_t job_packets = 0;        // a job goes once it holds this many (0: one per burst)
  uint32_t job_capacity = 0;       // entries per job
  uint32_t in_bytes = 0, out_slot_bytes = 0;
  size_t frame_bytes = 0;
  unsigned seq_bytes = 8;
  uint32_t fast_len = UINT32_MAX;  // mode sequence: a first segment this long holds seq and samples

  FrameTracker tracker;
  // Span modes (fields, spead, vita49): the decoder says where each packet goes.
  bool span_mode = false;
  std::unique_ptr<protocols::Decoder> decoder;
  std::unique_ptr<SpanTracker> spans;
  protocols::Decoded decoded;
  PlacedSpan placed_spans[protocols::kMaxSpans];  // a member: a local array is zeroed per packet
  uint64_t frame_in_bytes = 0;     // input bytes of the largest frame
  uint64_t decoder_malformed = 0, control = 0;
  const char* last_reason = "";       // why the last malformed packet was
  const char* warned[8] = {};         // reasons already logged (each once, at warn level)
  void note_malformed(const char* why) noexcept;
  std::unique_ptr<PlaceExecutor> exec;
  std::byte* frames = nullptr;     // frame_buffers * frame_bytes, device memory
  std::byte* stage_mem = nullptr;  // staging copy: depth * job_capacity staging places
  cudaStream_t alloc_stream = nullptr;
  PlacementEntry* entry_mem = nullptr;  // depth * job_capacity, mapped pinned
  std::vector<JobSlot> slots;      // depth
  uint64_t retired = 0;            // jobs whose bursts were given back
  std::vector<uint64_t> missing;   // frame_buffers * words: bit set = packet missing
  std::vector<uint64_t> no_missing;  // span modes: the missing bitmap of every complete frame (zeros)
  std::vector<PendingFrame> pending;  // FIFO ring, frame_buffers long
  size_t pending_head = 0, pending_count = 0;
  PipelineStats stats;
  bool building = false;           // a job of the current slot holds entries not yet submitted
  JobSlot* cur = nullptr;          // the job being built (valid while building)
  uint64_t job_start_ns = 0;       // when it began (gathering small bursts)
  // The clock read by the last submit(), not yet used by next_frame(): an application that
  // asks for frames after each burst pays for one clock read per burst, not two.
  uint64_t submit_ns = 0;
  uint32_t piece_align = 1;  // span modes: bytes a span's second piece starts at a multiple of
  // Mode rtp_video with video.unpack: each frame is unpacked into its buffer's planes on the
  // executor's stream once its placement is ordered there (per_burst, graph: submitted;
  // persistent: completed, seen from the host), and handed out once its event has passed.
  std::unique_ptr<FrameUnpacker> unpack;
  size_t unpack_launched = 0;  // the first this many pending frames have their unpack queued
  void launch_unpacks() noexcept;

  explicit Impl(const ReorderConfig& c) : cfg(c), tracker(tracker_config(c)) {
    if (c.frames == FrameTarget::host)
      throw Error(Errc::invalid_config, "reorder '" + c.name +
                                            "' has frames: host: HostFrameAssembler (netdaq/host_frames.h) assembles "
                                            "its frames, not the GPU pipeline");
    if (c.launch == LaunchMode::rings)
      throw Error(Errc::invalid_config, "reorder '" + c.name +
                                            "' has launch: rings: gpu::XskFrameReceiver (netdaq/gpu_xsk.h) takes the "
                                            "queue's packets from its rings, not the GPU pipeline");
  }
  uint32_t span_words() const noexcept { return spans->words_per_frame(); }
  uint64_t out_of(uint64_t in) const noexcept { return converted_bytes(in, cfg.input, cfg.output); }
  void add_span(uint64_t src, uint64_t dst, uint32_t bytes, bool staged) noexcept;
  void place_span_packet(const Packet& p, uint64_t now) noexcept;
  void take_closed_spans() noexcept;
  void zero_fill_spans(const SpanClosedFrame& f) noexcept;
  ~Impl();

  // max_span: span modes, the largest packet payload (the queue's buffers).
  void setup(uint32_t batch, bool copy_staging, uint32_t queue_bursts, uint32_t max_span);
  void retire(uint64_t now_ns = 0) noexcept;
  void wait_for_slot() noexcept;
  void submit_current() noexcept;
  void begin_job() noexcept;
  void add_entry(uint64_t src, uint32_t slot, bool staged) noexcept;  // staged: gets a staging place
  void take_closed() noexcept;
  void zero_fill(const ClosedFrame& f) noexcept;
  void place_burst(RxBurst&& burst) noexcept;
  void place_one(const Packet& p, uint64_t now) noexcept;
  const Packet* place_run(const Packet* pk, const Packet* end) noexcept;
  void submit_if_due(uint64_t now) noexcept;
};

FramePipeline::Impl::~Impl() {
  if (exec) {
    try {
      exec->synchronize();
    } catch (const std::exception& e) {
      detail::log()->error("gpu pipeline: {}", e.what());
    }
  }
  for (auto& s : slots) s.release_bursts();
  if (unpack && exec) cudaStreamSynchronize(exec->stream());  // unpacks in flight read frames, write planes
  unpack.reset();
  exec.reset();
  // Stream-ordered: no device-wide synchronization (a persistent kernel may run).
  if (frames) cudaFreeAsync(frames, alloc_stream);
  if (stage_mem) cudaFreeAsync(stage_mem, alloc_stream);
  if (frames || stage_mem) cudaStreamSynchronize(alloc_stream);
  if (alloc_stream) cudaStreamDestroy(alloc_stream);
  if (entry_mem) cudaFreeHost(entry_mem);
}

// queue_bursts: bursts the queue has (ring_depth), or 0 when unknown (no session).
void FramePipeline::Impl::setup(uint32_t batch, bool copy_staging, uint32_t queue_bursts, uint32_t max_span) {
  const std::string who = "gpu frame pipeline '" + cfg.name + "'";
  use_device(cfg.gpu, who);
  copy = copy_staging;
  max_batch = batch;
  span_mode = places_spans(cfg.mode);
  if (span_mode) {
    // in_bytes: the largest span (a packet's payload), which sizes staging places.
    in_bytes = cfg.payload_size ? cfg.payload_size : max_span;
    frame_in_bytes = protocols::frame_bytes_of(cfg);
    frame_bytes = out_of(frame_in_bytes);
    out_slot_bytes = static_cast<uint32_t>(std::min<uint64_t>(out_of(in_bytes), UINT32_MAX));
    decoder = protocols::make_decoder(cfg);
    spans = std::make_unique<SpanTracker>(span_tracker_config(cfg));
    // A span's piece in a second buffer starts at whole input samples (the conversion's unit).
    const bool converts = cfg.input != SampleFormat::raw && cfg.output != SampleFormat::raw;
    piece_align = converts ? std::lcm(sample_bits(cfg.input), 8u) / 8 : 1;
  } else {
    in_bytes = cfg.payload_size;
    out_slot_bytes = static_cast<uint32_t>(converted_bytes(in_bytes, cfg.input, cfg.output));
    frame_bytes = size_t{out_slot_bytes} * cfg.packets_per_frame;
  }
  seq_bytes = cfg.seq_bits / 8;
  if (cfg.mode == ReorderMode::sequence)
    fast_len = std::max(cfg.payload_offset + in_bytes, cfg.seq_offset + seq_bytes);
  // A burst's packets plus the zeros of frames it closes, on top of what a job gathers (at
  // most bursts_per_job bursts); more entries spill into extra jobs.
  job_packets = detail::job_packets_of(cfg);
  const uint32_t bursts_per_job = detail::bursts_per_job(cfg, queue_bursts);
  job_capacity = std::max(max_batch, 1024u) +
                 static_cast<uint32_t>(std::min<uint64_t>(job_packets, uint64_t{bursts_per_job} * max_batch));
  const uint32_t depth = std::max(cfg.bursts_in_flight, 1u);

  // Stream-ordered allocation: cudaMalloc/cudaFree may synchronize the whole device, which
  // never finishes while another pipeline's persistent kernel runs.
  check(cudaStreamCreateWithFlags(&alloc_stream, cudaStreamNonBlocking), who + ": cudaStreamCreate");
  check(cudaMallocAsync(reinterpret_cast<void**>(&frames), frame_bytes * cfg.frame_buffers, alloc_stream),
        who + ": cudaMallocAsync of " + std::to_string(frame_bytes * cfg.frame_buffers) + " bytes of frame buffers");
  if (copy) {
    const uint64_t n = uint64_t{depth} * job_capacity * staging_stride(in_bytes);
    check(cudaMallocAsync(reinterpret_cast<void**>(&stage_mem), n, alloc_stream),
          who + ": cudaMallocAsync of " + std::to_string(n) + " bytes of staging buffers");
  }
  check(cudaStreamSynchronize(alloc_stream), who + ": frame and staging buffer allocation");
  if (cfg.mode == ReorderMode::rtp_video && cfg.video.unpack != VideoUnpack::none)
    unpack = std::make_unique<FrameUnpacker>(cfg, frames, frame_bytes, alloc_stream, who);
  const size_t entry_size = span_mode ? sizeof(SpanEntry) : sizeof(PlacementEntry);
  check(cudaHostAlloc(reinterpret_cast<void**>(&entry_mem), entry_size * job_capacity * depth,
                      cudaHostAllocMapped | cudaHostAllocPortable),
        who + ": cudaHostAlloc of placement lists");
  slots.resize(depth);
  for (uint32_t k = 0; k < depth; ++k) {
    slots[k].entries = entry_mem + size_t{k} * job_capacity;
    slots[k].span_entries = reinterpret_cast<SpanEntry*>(entry_mem) + size_t{k} * job_capacity;
    slots[k].bursts.resize(bursts_per_job);
    if (copy) slots[k].stage = stage_mem + uint64_t{k} * job_capacity * staging_stride(in_bytes);
  }
  ExecutorOptions opts;
  opts.gpu = cfg.gpu;
  opts.depth = depth;
  opts.max_entries = job_capacity;
  // persistent: with two jobs in flight the CPU builds the next job while one runs; in two
  // CTA groups the running job gets half the SMs and the other group idles meanwhile. A job
  // that fills the GPU alone (>= 4 MiB) then goes faster on one group of every CTA: 8 KB
  // samples, jobs of 1,024, bursts_in_flight 2 (H100): 0.75x -> 0.83x pinned H2D in
  // gpu_pipeline, 0.69x -> 0.79x end to end (bench/pipeline.sh). Four in flight keep 4 groups
  // (0.85x on an H200).
  const uint64_t job_bytes = uint64_t{job_packets ? job_packets : max_batch} * in_bytes;
  if (depth <= 2 && job_bytes >= (uint64_t{4} << 20)) opts.groups = 1;
  if (copy) {  // persistent: job slot k's staging place is the kernel's for descriptor slot k
    opts.stage = stage_mem;
    opts.stage_slot_bytes = uint64_t{job_capacity} * staging_stride(in_bytes);
  }
  if (cfg.launch == LaunchMode::persistent) opts.blocks = persistent_sms(cfg, who);
  exec = make_executor(cfg.launch, opts);
  missing.assign(size_t{cfg.frame_buffers} * (span_mode ? span_words() : tracker.words_per_frame()), 0);
  if (span_mode) no_missing.assign(span_words(), 0);
  pending.resize(cfg.frame_buffers);
  const std::string shape = span_mode ? "mode " + std::string(to_string(cfg.mode)) + ", granule " +
                                            std::to_string(protocols::granule_of(cfg)) + " B, up to " +
                                            std::to_string(cfg.max_streams) + " streams, " + to_string(cfg.output)
                                      : std::to_string(cfg.packets_per_frame) + " x " + std::to_string(out_slot_bytes) +
                                            " B " + to_string(cfg.output);
  detail::log()->info("{}: gpu {}, {} B frames ({}), staging {}, launch {}{}, {} jobs in flight, jobs of {}",
                      who, cfg.gpu, frame_bytes, shape, copy ? "copy" : "direct", to_string(cfg.launch),
                      opts.blocks ? " on " + std::to_string(opts.blocks) + " SMs" : std::string(), depth,
                      job_packets ? ">= " + std::to_string(job_packets) + " packets, " +
                                        std::to_string(slots[0].bursts.size()) + " bursts or " +
                                        std::to_string(cfg.job_timeout_us) + " us"
                                  : std::string("one burst"));
}

void FramePipeline::Impl::retire(uint64_t now_ns) noexcept {
  const uint64_t done = now_ns ? exec->completed_at(now_ns) : exec->completed();
  while (retired < done) {
    slots[retired % slots.size()].release_bursts();
    ++retired;
  }
}

// The next job slot must be free: its previous job has completed.
void FramePipeline::Impl::wait_for_slot() noexcept {
  retire();
  if (exec->submitted() - retired < slots.size()) return;
  ++stats.waits;
  const uint64_t t0 = detail::monotonic_ns();
  while (exec->submitted() - retired >= slots.size()) retire();
  stats.wait_ns += detail::monotonic_ns() - t0;
}

// Called only while building. The CUDA calls of submit() and next_frame() are all here (and
// event queries, which need no current device): the device is set once per job.
void FramePipeline::Impl::submit_current() noexcept {
  JobSlot& s = *cur;
  if (s.count == 0 && s.nbursts == 0) {
    building = false;
    return;
  }
  cudaSetDevice(cfg.gpu);
  if (span_mode) {
    // Each span its own length (staged or read in place alike).
    uint64_t n = 0;
    for (uint32_t i = 0; i < s.count; ++i) n += s.span_entries[i].src ? s.span_entries[i].bytes : 0;
    stats.bytes_to_gpu += n;
  } else if (copy) {
    stats.bytes_to_gpu += uint64_t{s.nsrc} * in_bytes;
  } else {
    // In place: the kernel reads the packets; count the sample bytes it pulls.
    uint64_t n = 0;
    for (uint32_t i = 0; i < s.count; ++i) n += s.entries[i].src != 0;
    stats.bytes_to_gpu += n * in_bytes;
  }
  PlaceJob job;
  if (span_mode) job.span_entries = s.span_entries;  // 24-byte entries: their own place in the slot
  else job.entries = s.entries;
  job.count = s.count;
  job.in_bytes = in_bytes;
  job.out = frames;
  job.out_slot_bytes = out_slot_bytes;
  job.in_format = cfg.input;
  job.out_format = cfg.output;
  job.in_order = cfg.sample_byte_order;
  job.spans = span_mode;
  // The slot was free when building started, so the executor has room: false is a CUDA
  // fault (synchronize() throws it). The burst goes back; its frames never complete.
  // Staging copy: one launch gathers the job's packets, then places them.
  if (!(copy && s.nsrc ? exec->submit_staged(job, s.stage) : exec->submit(job))) {
    if (stats.gpu_errors++ == 0) detail::log()->error("gpu pipeline '{}': a GPU job could not be queued", cfg.name);
    s.release_bursts();
    s.count = 0;
    building = false;
    return;
  }
  ++stats.jobs;
  building = false;
  if (unpack && cfg.launch != LaunchMode::persistent) launch_unpacks();
}

// Queues the unpack of each pending frame whose placement is ordered before it on the
// executor's stream, in frame order.
void FramePipeline::Impl::launch_unpacks() noexcept {
  const uint64_t placed = cfg.launch == LaunchMode::persistent ? exec->completed() : exec->submitted();
  while (unpack_launched < pending_count) {
    const PendingFrame& f = pending[(pending_head + unpack_launched) % pending.size()];
    if (f.ready_after > placed) return;
    cudaSetDevice(cfg.gpu);
    if (unpack->launch(f.frame.buffer, exec->stream()) != cudaSuccess && stats.gpu_errors++ == 0)
      detail::log()->error("gpu pipeline '{}': a video unpack could not be queued", cfg.name);
    ++unpack_launched;
  }
}

// Starts a job in the next free slot, kept in `cur` so that add_entry() does no division or
// virtual call per packet.
void FramePipeline::Impl::begin_job() noexcept {
  wait_for_slot();
  cur = &slots[exec->submitted() % slots.size()];
  cur->count = 0;
  cur->nsrc = 0;
  cur->nbursts = 0;
  job_start_ns = detail::monotonic_ns();
  building = true;
}

void FramePipeline::Impl::add_entry(uint64_t src, uint32_t slot, bool staged) noexcept {
  if (!building) begin_job();
  if (cur->count == job_capacity) {  // spill: this job goes now, the rest into the next one
    submit_current();
    begin_job();
  }
  cur->entries[cur->count++] = PlacementEntry{src, slot, staged ? ++cur->nsrc : 0};
}

// Missing slots of an incomplete frame get zeros (src == 0 entries).
void FramePipeline::Impl::zero_fill(const ClosedFrame& f) noexcept {
  const uint64_t* present = tracker.presence(f.buffer);
  uint64_t* miss = &missing[size_t{f.buffer} * tracker.words_per_frame()];
  const uint32_t ppf = cfg.packets_per_frame;
  for (uint32_t w = 0; w < tracker.words_per_frame(); ++w) {
    uint64_t m = ~present[w];
    if (w == tracker.words_per_frame() - 1 && ppf % 64) m &= (uint64_t{1} << (ppf % 64)) - 1;
    miss[w] = m;
  }
  if (f.complete) return;
  for (uint32_t i = 0; i < ppf; ++i)
    if (miss[i / 64] >> (i % 64) & 1) add_entry(0, f.buffer * ppf + i, false);
}

// Moves frames the tracker closed into the pending FIFO; each is ready once the jobs that
// wrote it have completed (the job being built, or those already submitted).
void FramePipeline::Impl::take_closed() noexcept {
  ClosedFrame f;
  while (tracker.pop_closed(&f)) {
    zero_fill(f);
    // The zeros (and this burst's packets) go with the job being built.
    const uint64_t after = exec->submitted() + (building ? 1 : 0);
    pending[(pending_head + pending_count) % pending.size()] = PendingFrame{f, after};
    ++pending_count;
  }
}

// The general way for one packet: any segment layout, any mode, frames opening and closing.
void FramePipeline::Impl::place_one(const Packet& p, uint64_t now) noexcept {
  const bool by_seq = cfg.mode == ReorderMode::sequence;
  const bool by_imm = cfg.mode == ReorderMode::immediate;
  const std::byte* samples = packet_bytes(p, cfg.payload_offset, in_bytes);
  const std::byte* seq_at = by_seq ? packet_bytes(p, cfg.seq_offset, seq_bytes) : samples;
  const std::optional<uint32_t> imm = p.immediate();
  if (!samples || !seq_at || (by_imm && !imm)) {
    ++stats.malformed;
    return;
  }
  const uint64_t seq = by_imm ? *imm : by_seq ? load_uint(seq_at, seq_bytes, cfg.seq_byte_order) : 0;
  uint32_t slot = 0;
  if (tracker.place(seq, now, &slot) == Placement::placed)
    add_entry(reinterpret_cast<uint64_t>(samples), slot, copy);
  if (tracker.has_closed()) take_closed();
}

// The common case, in registers: sequence number and samples in the first segment, the
// frame of the packet before (FrameTracker::place_hot), room in the job being built. Returns
// at the first packet that needs place_one(), or at the end.
const Packet* FramePipeline::Impl::place_run(const Packet* pk, const Packet* end) noexcept {
  JobSlot& s = *cur;
  uint32_t count = s.count, nsrc = s.nsrc;
  if (end - pk > job_capacity - count) end = pk + (job_capacity - count);
  PlacementEntry* const entries = s.entries;
  const uint32_t min_len = fast_len, payload_offset = cfg.payload_offset, seq_offset = cfg.seq_offset;
  const unsigned width = seq_bytes;
  const ByteOrder order = cfg.seq_byte_order;
  const bool staged = copy;
  for (; pk != end; ++pk) {
    const auto seg0 = pk->segment(0);
    if (seg0.size() < min_len) break;
    uint32_t slot;
    if (!tracker.place_hot(load_uint(seg0.data() + seq_offset, width, order), &slot)) break;
    const auto src = reinterpret_cast<uint64_t>(seg0.data() + payload_offset);
    entries[count++] = PlacementEntry{src, slot, staged ? ++nsrc : 0};
  }
  s.count = count;
  s.nsrc = nsrc;
  return pk;
}

void FramePipeline::Impl::add_span(uint64_t src, uint64_t dst, uint32_t bytes, bool staged) noexcept {
  if (!building) begin_job();
  if (cur->count == job_capacity) {  // spill: this job goes now, the rest into the next one
    submit_current();
    begin_job();
  }
  cur->span_entries[cur->count++] = SpanEntry{src, dst, bytes, staged ? ++cur->nsrc : 0};
}

// The missing bytes of a closed frame get zeros, one entry per run of missing granules; the
// frame's missing bitmap is kept for the application.
void FramePipeline::Impl::zero_fill_spans(const SpanClosedFrame& f) noexcept {
  const FrameMeta& m = spans->meta(f.buffer);
  const uint64_t* present = spans->presence(f.buffer);
  const uint32_t words = span_words();
  uint64_t* miss = &missing[size_t{f.buffer} * words];
  const uint64_t g = spans->granule(), units = (m.size + g - 1) / g;
  if (f.complete) return;  // its Frame points at no_missing: no pass over its bits
  for (uint32_t w = 0; w < words; ++w) {
    uint64_t bits = ~present[w];
    if (uint64_t{w} * 64 >= units) bits = 0;
    else if (units - uint64_t{w} * 64 < 64) bits &= (uint64_t{1} << (units - uint64_t{w} * 64)) - 1;
    miss[w] = bits;
  }
  const uint64_t base = uint64_t{f.buffer} * frame_bytes;
  for (uint64_t u = 0; u < units;) {
    if (!(miss[u / 64] >> (u % 64) & 1)) {
      ++u;
      continue;
    }
    uint64_t end = u + 1;
    while (end < units && (miss[end / 64] >> (end % 64) & 1)) ++end;
    // Output bytes [out(u g), out(min(end g, size))), in pieces a 32-bit entry holds.
    uint64_t from = out_of(u * g);
    const uint64_t to = out_of(std::min(end * g, m.size));
    while (from < to) {
      const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(to - from, 1u << 30));
      add_span(0, base + from, n, false);
      from += n;
    }
    u = end;
  }
}

void FramePipeline::Impl::take_closed_spans() noexcept {
  SpanClosedFrame f;
  while (spans->pop_closed(&f)) {
    zero_fill_spans(f);
    const uint64_t after = exec->submitted() + (building ? 1 : 0);
    pending[(pending_head + pending_count) % pending.size()] =
        PendingFrame{ClosedFrame{spans->meta(f.buffer).frame, f.buffer, 0, f.complete}, after};
    ++pending_count;
  }
}

// A packet of a span mode: the decoder says where its bytes go, the tracker whether they go.
void FramePipeline::Impl::place_span_packet(const Packet& p, uint64_t now) noexcept {
  // Every span no larger than a staging place (in_bytes) and readable in one segment.
  decode_for_spans(*decoder, p, in_bytes, decoded, piece_align);
  const bool split = p.segments() > 1;
  if (decoded.verdict != protocols::Verdict::data) {
    if (decoded.verdict == protocols::Verdict::control) {
      ++control;
      return;
    }
    ++decoder_malformed;
    note_malformed(decoded.reason);
    return;
  }
  const uint64_t stream = decoded.has_stream ? decoded.stream : p.flow();
  PlacedSpan* const placed = placed_spans;
  SpanOutcome outcome;
  const uint32_t n = spans->place_packet(decoded, stream, now, placed, &outcome);
  if (outcome == SpanOutcome::malformed) note_malformed(spans->last_malformed());
  for (uint32_t i = 0; i < n; ++i) {
    const PlacedSpan& ps = placed[i];
    const uint64_t dst = uint64_t{ps.buffer} * frame_bytes;
    if (!split) {
      const std::byte* src = p.segment(0).data() + ps.packet_offset;
      add_span(reinterpret_cast<uint64_t>(src), dst + out_of(ps.offset), ps.bytes, copy);
      continue;
    }
    // A span across two buffers goes as two entries (decode_for_spans kept each piece whole
    // input samples).
    for_each_piece(p, ps.packet_offset, ps.bytes, [&](const std::byte* src, uint32_t len, uint32_t at) {
      add_span(reinterpret_cast<uint64_t>(src), dst + out_of(ps.offset + at), len, copy);
    });
  }
  if (spans->has_closed()) take_closed_spans();
}

// The first packet of each kind of malformed is logged (a misconfigured decoder shows at
// once, with why); the rest are counted. Reasons are static strings: compared by address.
void FramePipeline::Impl::note_malformed(const char* why) noexcept {
  last_reason = why;
  for (const char*& w : warned) {
    if (w == why) return;
    if (!w) {
      w = why;
      detail::log()->warn("gpu pipeline '{}': malformed packet ({} mode {}): {}; such packets are counted as "
                          "malformed",
                          cfg.name, "rx.reorder", to_string(cfg.mode), why);
      return;
    }
  }
}

void FramePipeline::Impl::place_burst(RxBurst&& burst) noexcept {
  const uint64_t now = submit_ns = detail::monotonic_ns();
  if (building) submit_if_due(now);
  const Packet* pk = burst.begin();
  const Packet* const end = burst.end();
  const uint32_t n = static_cast<uint32_t>(end - pk);
  if (span_mode) {
    spans->expire(now);
    take_closed_spans();
    for (; pk != end; ++pk) place_span_packet(*pk, now);
  } else {
    tracker.expire(now);
    take_closed();
  }
  while (pk != end) {
    if (building && fast_len != UINT32_MAX && (pk = place_run(pk, end)) == end) break;
    place_one(*pk++, now);
  }
  stats.packets_in += n;
  if (!building) {
    // Nothing placed: the burst's buffers go back now.
    burst.release();
    return;
  }
  cur->bursts[cur->nbursts++] = std::move(burst);
  // One job per burst, or gather small bursts until the job is big enough (job_packets).
  if (job_packets == 0 || cur->count >= job_packets || cur->nbursts == cur->bursts.size()) submit_current();
}

// A job gathering small bursts goes once it is job_timeout_us old (frames wait for it).
void FramePipeline::Impl::submit_if_due(uint64_t now) noexcept {
  // `now` may be older than job_start_ns (next_frame() reuses submit()'s clock reading).
  if (building && (job_packets == 0 || now >= job_start_ns + uint64_t{cfg.job_timeout_us} * 1000)) submit_current();
}

// ---------------------------------------------------------------------------------------

// Span modes without a session: spans up to payload_size, or a jumbo frame's payload.
constexpr uint32_t kDefaultMaxSpan = 9216;

FramePipeline::FramePipeline(const ReorderConfig& cfg) : impl_(std::make_unique<Impl>(cfg)) {
  if (impl_->cfg.name.empty()) impl_->cfg.name = "reorder";
  impl_->setup(1024, !detail::reads_in_place(cfg.staging, nullptr), 0, kDefaultMaxSpan);
}

FramePipeline::FramePipeline(Session& session, std::string_view interface, const ReorderConfig& cfg) {
  Config check = session.config();
  InterfaceConfig* iface = nullptr;
  for (auto& i : check.interfaces)
    if (i.name == interface) iface = &i;
  if (!iface) throw Error(Errc::not_found, "gpu frame pipeline: no interface '" + std::string(interface) + "'");
  // Validate this reorder against the session's queues and regions, as the config would be.
  std::erase_if(iface->rx.reorder, [&](const ReorderConfig& r) { return r.queue == cfg.queue; });
  iface->rx.reorder.push_back(cfg);
  check.validate_or_throw();
  const QueueConfig* q = nullptr;
  for (const auto& rq : iface->rx.queues)
    if (rq.id == cfg.queue) q = &rq;
  // Span modes read spans anywhere in a packet: its first segment's region decides, and the
  // largest span is what the queue's buffers hold.
  const bool by_spans = places_spans(cfg.mode);
  const MemoryRegionConfig* samples = by_spans ? detail::segment_region(check, *q, 0, 1)
                                               : detail::segment_region(check, *q, cfg.payload_offset, cfg.payload_size);
  uint64_t buffer_bytes = 0;
  for (const auto& name : q->memory_regions)
    if (const auto* r = check.find_region(name)) buffer_bytes += r->buf_size;
  impl_ = std::make_unique<Impl>(cfg);
  if (impl_->cfg.name.empty()) impl_->cfg.name = std::string(interface) + "/reorder" + std::to_string(cfg.queue);
  impl_->setup(q->batch_size, !detail::reads_in_place(cfg.staging, samples), q->ring_depth,
               static_cast<uint32_t>(std::min<uint64_t>(buffer_bytes ? buffer_bytes : kDefaultMaxSpan, 1u << 20)));
}

FramePipeline::~FramePipeline() = default;

void FramePipeline::submit(RxBurst&& burst) noexcept {
  if (!burst) return;
  impl_->place_burst(std::move(burst));
}

Frame FramePipeline::next_frame() noexcept {
  Impl& m = *impl_;
  const uint64_t now = m.submit_ns ? m.submit_ns : detail::monotonic_ns();
  m.submit_ns = 0;
  if (m.span_mode) {
    m.spans->expire(now);
    m.take_closed_spans();
  } else {
    m.tracker.expire(now);
    m.take_closed();
  }
  m.submit_if_due(now);  // zeros of frames that just timed out; a gathering job when due
  m.retire(now);
  if (m.pending_count == 0) return {};
  if (m.unpack) m.launch_unpacks();
  const PendingFrame& p = m.pending[m.pending_head];
  if (m.exec->completed() < p.ready_after) return {};
  Frame f;
  if (m.unpack) {
    if (m.unpack_launched == 0) return {};
    const cudaError_t e = m.unpack->query(p.frame.buffer);
    if (e == cudaErrorNotReady) return {};
    if (e != cudaSuccess && m.stats.gpu_errors++ == 0)
      detail::log()->error("gpu pipeline '{}': a video unpack failed: {}", m.cfg.name, cudaGetErrorString(e));
    f.planes_ = &m.unpack->planes(p.frame.buffer);
    --m.unpack_launched;
  }
  f.owner_ = this;
  f.buffer_ = p.frame.buffer;
  f.data_ = m.frames + size_t{p.frame.buffer} * m.frame_bytes;
  FrameInfo& info = f.info_;
  info.index = p.frame.index;
  if (m.span_mode) {
    const FrameMeta& meta = m.spans->meta(p.frame.buffer);
    const uint64_t g = m.spans->granule(), units = (meta.size + g - 1) / g;
    const uint32_t words = m.span_words();
    // A complete frame's missing bitmap is all zeros: one shared, not a pass over its bits.
    const uint64_t* miss = p.frame.complete ? m.no_missing.data() : &m.missing[size_t{p.frame.buffer} * words];
    uint64_t missing = 0;
    if (!p.frame.complete)
      for (uint32_t w = 0; w < words; ++w) missing += std::popcount(miss[w]);
    info.stream = meta.stream;
    info.bytes = m.out_of(meta.size);
    info.bytes_expected = meta.size;
    info.bytes_received = meta.bytes_present;
    info.expected = static_cast<uint32_t>(units);
    info.received = static_cast<uint32_t>(units - missing);
    info.granule = static_cast<uint32_t>(g);
    info.has_timestamp = meta.has_timestamp;
    info.timestamp = meta.timestamp;
    info.timestamp_frac = meta.timestamp_frac;
    f.missing_ = std::span<const uint64_t>(miss, (units + 63) / 64);
    f.items_ = std::span<const FrameItem>(meta.items, meta.nitems);
  } else {
    info.bytes = m.frame_bytes;
    info.expected = m.cfg.packets_per_frame;
    info.received = p.frame.received;
    info.granule = m.cfg.payload_size;
    info.bytes_expected = uint64_t{m.cfg.packets_per_frame} * m.cfg.payload_size;
    info.bytes_received = uint64_t{p.frame.received} * m.cfg.payload_size;
    f.missing_ = std::span<const uint64_t>(&m.missing[size_t{p.frame.buffer} * m.tracker.words_per_frame()],
                                           m.tracker.words_per_frame());
  }
  m.pending_head = (m.pending_head + 1) % m.pending.size();
  --m.pending_count;
  return f;
}

void FramePipeline::flush() noexcept {
  Impl& m = *impl_;
  cudaSetDevice(m.cfg.gpu);
  if (m.span_mode) {
    m.spans->close_all();
    m.take_closed_spans();
  } else {
    m.tracker.close_all();
    m.take_closed();
  }
  if (m.building) m.submit_current();
}

void FramePipeline::synchronize() {
  cudaSetDevice(impl_->cfg.gpu);
  if (impl_->building) impl_->submit_current();  // bursts still being gathered
  impl_->exec->synchronize();
  impl_->retire();
  if (impl_->unpack) {  // and the unpacks of the frames placed so far
    impl_->launch_unpacks();
    check(cudaStreamSynchronize(impl_->exec->stream()), "gpu pipeline '" + impl_->cfg.name + "': video unpack");
  }
}

namespace {
// The counters both trackers keep (TrackerStats, SpanStats) into the pipeline's.
template <class Tracked>
void copy_tracked(const Tracked& t, PipelineStats& s) noexcept {
  s.packets_placed = t.placed;
  s.duplicate = t.duplicate;
  s.late = t.late;
  s.no_buffer = t.no_buffer;
  s.frames_complete = t.frames_complete;
  s.frames_incomplete = t.frames_incomplete;
  s.frames_skipped = t.frames_skipped;
  s.frames_dropped = t.frames_dropped;
}
}  // namespace

PipelineStats FramePipeline::stats() const noexcept {
  const Impl& m = *impl_;
  PipelineStats s = m.stats;
  if (m.span_mode) {
    const SpanStats& t = m.spans->stats();
    copy_tracked(t, s);
    s.malformed = m.decoder_malformed + t.malformed;
    s.control = m.control;
    s.no_stream = t.no_stream;
    s.bytes_missing = t.bytes_missing;
  } else {
    copy_tracked(m.tracker.stats(), s);
    s.packets_missing = m.tracker.stats().packets_missing;
  }
  return s;
}

std::vector<StreamStats> FramePipeline::stream_stats() const {
  std::vector<StreamStats> out(impl_->span_mode ? impl_->spans->streams().size() : 0);
  stream_stats(out);
  return out;
}

size_t FramePipeline::stream_stats(std::span<StreamStats> out) const noexcept {
  if (!impl_->span_mode) return 0;
  const std::vector<StreamState>& streams = impl_->spans->streams();
  const size_t n = std::min(out.size(), streams.size());
  for (size_t i = 0; i < n; ++i) out[i] = to_stream_stats(streams[i]);
  return streams.size();
}

const ReorderConfig& FramePipeline::config() const noexcept { return impl_->cfg; }
Stream FramePipeline::stream() const noexcept { return impl_->exec->stream(); }
size_t FramePipeline::frame_bytes() const noexcept { return impl_->frame_bytes; }
const char* FramePipeline::last_malformed() const noexcept { return impl_->last_reason; }
void FramePipeline::release_frame(uint32_t buffer) noexcept {
  if (impl_->span_mode) impl_->spans->release_buffer(buffer);
  else impl_->tracker.release_buffer(buffer);
}

}  // namespace netdaq::gpu
