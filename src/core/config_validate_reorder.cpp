// rx.reorder: the GPU data plane of an rx queue (docs/gpu.md). Checked without a GPU: the
// queue exists, the fields fit its buffers, the GPU can read the samples' memory and the
// CPU can read the sequence numbers.
#include "core/config_check.h"
#include "netdaq/engine_info.h"
#include "core/reorder_layout.h"

namespace netdaq::detail {
namespace {

bool gpu_readable(MemoryKind k) {
  return k == MemoryKind::pinned || k == MemoryKind::mapped || k == MemoryKind::device;
}

bool is_integer_input(SampleFormat f) {
  return f == SampleFormat::int4 || f == SampleFormat::int8 || f == SampleFormat::int16;
}

void check_formats(Checker& c, const ReorderConfig& g, const std::string& path) {
  const bool out_float = g.output == SampleFormat::fp16 || g.output == SampleFormat::bf16 || g.output == SampleFormat::fp32;
  if (!(g.input == SampleFormat::raw || is_integer_input(g.input)))
    c.error(path + ".input", to_string(g.input), "must be one of: raw, int4, int8, int16");
  else if (g.input == SampleFormat::raw && g.output != SampleFormat::raw)
    c.error(path + ".output", to_string(g.output), "must be raw when input is raw (set input to convert)");
  else if (is_integer_input(g.input) && !(out_float || g.output == g.input))
    c.error(path + ".output", to_string(g.output),
            std::string("must be one of: fp16, bf16, fp32, or ") + to_string(g.input) + " (no conversion)");
  const unsigned bits = sample_bits(g.input);
  if (g.payload_size && (uint64_t{g.payload_size} * 8) % bits)
    c.error(path + ".payload_size", std::to_string(g.payload_size),
            "must hold whole " + std::string(to_string(g.input)) + " samples (a multiple of " +
                std::to_string(bits / 8) + " bytes)");
}

// The bytes [offset, offset + n) must lie in one segment of the queue's buffers.
// Returns the region they lie in, or null after reporting why not.
const MemoryRegionConfig* region_of(Checker& c, const QueueConfig& q, uint64_t offset, uint64_t n,
                                    const std::string& key, const std::string& what) {
  const Config& cfg = c.config();
  if (const MemoryRegionConfig* r = segment_region(cfg, q, offset, n)) return r;
  // Not inside one segment: say why (unknown regions are reported by check_queues).
  std::vector<const MemoryRegionConfig*> regions;
  for (const auto& name : q.memory_regions)
    if (const auto* r = cfg.find_region(name)) regions.push_back(r);
  if (regions.size() != q.memory_regions.size() || regions.empty()) return nullptr;
  uint64_t total = 0;
  for (const auto* r : regions) total += r->buf_size;
  if (offset + n > total) {
    c.error(key, std::to_string(offset),
            what + " ends at byte " + std::to_string(offset + n) + ", beyond the queue's buffers (" +
                std::to_string(total) + " bytes)");
    return nullptr;
  }
  uint64_t start = 0;
  for (const auto* r : regions) {
    if (offset < start + r->buf_size) {
      c.error(key, std::to_string(offset),
              what + " (bytes " + std::to_string(offset) + ".." + std::to_string(offset + n - 1) +
                  ") must lie inside one segment; region '" + r->name + "' holds bytes " + std::to_string(start) +
                  ".." + std::to_string(start + r->buf_size - 1));
      return nullptr;
    }
    start += r->buf_size;
  }
  return nullptr;
}

void check_one(Checker& c, const InterfaceConfig& iface, const ReorderConfig& g, const std::string& path) {
  const QueueConfig* q = nullptr;
  for (const auto& rq : iface.rx.queues)
    if (rq.id == g.queue) q = &rq;
  if (!q) {
    std::vector<std::string> ids;
    for (const auto& rq : iface.rx.queues) ids.push_back(std::to_string(rq.id));
    c.error(path + ".queue", std::to_string(g.queue),
            "is not an rx queue of interface '" + iface.name + "'; rx queue ids: " + (ids.empty() ? "none" : join(ids)));
  }
  if (g.gpu < 0) c.error(path + ".gpu", std::to_string(g.gpu), "must be a GPU index >= 0");
  if (g.payload_size == 0) c.error(path + ".payload_size", "0", "is required: sample bytes per packet");
  if (g.packets_per_frame == 0) c.error(path + ".packets_per_frame", "0", "is required: packets in one frame");
  c.range(path + ".packets_per_frame", g.packets_per_frame, limits::packets_per_frame);
  c.range(path + ".max_open_frames", g.max_open_frames, limits::max_open_frames);
  c.range(path + ".frame_buffers", g.frame_buffers, limits::frame_buffers);
  c.range(path + ".frame_timeout_us", g.frame_timeout_us, limits::frame_timeout_us);
  c.range(path + ".bursts_in_flight", g.bursts_in_flight, limits::bursts_in_flight);
  if (g.job_packets) c.range(path + ".job_packets", *g.job_packets, limits::job_packets);
  c.range(path + ".job_timeout_us", g.job_timeout_us, limits::job_timeout_us);
  if (g.frame_buffers < g.max_open_frames)
    c.error(path + ".frame_buffers", std::to_string(g.frame_buffers),
            "must be >= max_open_frames (" + std::to_string(g.max_open_frames) + "): every open frame needs a buffer");
  if (g.seq_bits != 8 && g.seq_bits != 16 && g.seq_bits != 32 && g.seq_bits != 64)
    c.error(path + ".seq_bits", std::to_string(g.seq_bits), "must be one of: 8, 16, 32, 64");
  check_formats(c, g, path);
  if (!q || g.payload_size == 0) return;

  const MemoryRegionConfig* samples =
      region_of(c, *q, g.payload_offset, g.payload_size, path + ".payload_offset", "the samples");
  if (samples && !gpu_readable(samples->kind))
    c.error(path + ".queue", std::to_string(g.queue),
            "its samples are in region '" + samples->name + "' of kind " + to_string(samples->kind) +
                ", which the GPU cannot read; use kind pinned, mapped or device");
  if (g.launch == LaunchMode::persistent && !reads_in_place(g.staging, samples))
    c.error(path + ".launch", "persistent",
            "needs staging: direct (the persistent kernel reads packets in place; no copy is queued before it)");
  if (g.mode == ReorderMode::immediate) {
    const auto caps = capabilities_of(iface);
    if (caps && !caps->immediate_data)
      c.error(path + ".mode", "immediate",
              "needs packets that carry immediate data (engine rdma with rdma.op: write_imm); interface '" +
                  iface.name + "' (engine " + iface.engine + ") delivers none: use mode sequence with seq_offset");
  }
  if (g.mode == ReorderMode::sequence && g.seq_bits % 8 == 0 && g.seq_bits <= 64) {
    const MemoryRegionConfig* seq = region_of(c, *q, g.seq_offset, g.seq_bits / 8, path + ".seq_offset", "the sequence field");
    if (seq && seq->kind == MemoryKind::device)
      c.error(path + ".seq_offset", std::to_string(g.seq_offset),
              "the sequence field is in region '" + seq->name +
                  "' of kind device, which the CPU cannot read; split headers into host memory");
  }
}

}  // namespace

void check_reorder(Checker& c, const InterfaceConfig& iface, const std::string& path) {
  const auto& list = iface.rx.reorder;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = path + ".rx.reorder[" + std::to_string(i) + "]";
    check_one(c, iface, list[i], p);
    for (size_t k = 0; k < i; ++k)
      if (list[k].queue == list[i].queue)
        c.error(p + ".queue", std::to_string(list[i].queue),
                "already has a reorder (" + path + ".rx.reorder[" + std::to_string(k) + "]); one per queue");
  }
}

}  // namespace netdaq::detail
