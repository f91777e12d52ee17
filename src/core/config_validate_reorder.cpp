// rx.reorder: the GPU data plane of an rx queue (docs/gpu.md). Checked without a GPU: the
// queue exists, the fields fit its buffers, the GPU can read the samples' memory and the
// CPU can read the sequence numbers (or the headers a decoder reads, modes fields, spead,
// vita49 and roce: docs/gpu.md, "Frames from the sensor's headers"; roce's own block:
// config_validate_roce.cpp).
#include <string>
#include <vector>

#include "core/config_check.h"
#include "core/config_validate_roce.h"
#include "core/config_validate_video.h"
#include "netdaq/engine_info.h"
#include "core/reorder_layout.h"
#include "core/rings_launch.h"
#include "protocols/rtp_video_format.h"

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

// ---- Placement by the sensor's headers (modes fields, spead, vita49) ----

// The input's sample size in bits (raw: 8): frame bytes, granules and samples hold whole ones.
bool whole_samples(uint64_t bytes, SampleFormat input) { return (bytes * 8) % sample_bits(input) == 0; }

std::string sample_size_text(SampleFormat input) {
  const unsigned bits = sample_bits(input);
  return bits < 8 ? "1 byte (two " + std::string(to_string(input)) + " samples)"
                  : std::to_string(bits / 8) + (bits == 8 ? " byte" : " bytes");
}

struct NamedField {
  const char* name;
  const PacketField& field;
};

std::vector<NamedField> named_fields(const FieldPlacement& f) {
  return {{"frame", f.frame},   {"index", f.index},   {"byte_offset", f.byte_offset},
          {"stream", f.stream}, {"marker", f.marker}, {"timestamp", f.timestamp}};
}

bool written(const Checker& c, const std::string& key) { return c.config().locations.count(key) > 0; }

// A field written (in YAML, or set in C++) without bits: it would silently not be declared.
bool field_set(const Checker& c, const PacketField& f, const std::string& key) {
  return f.declared() || written(c, key) || f.offset || f.shift || f.mask != ~uint64_t{0};
}

bool fields_set(const Checker& c, const ReorderConfig& g, const std::string& path) {
  if (written(c, path + ".fields")) return true;
  for (const auto& [name, f] : named_fields(g.fields))
    if (field_set(c, f, path + ".fields." + name)) return true;
  return false;
}
bool spead_set(const Checker& c, const ReorderConfig& g, const std::string& path) {
  return written(c, path + ".spead") || g.spead.stream_item != 0;
}
bool vita49_set(const Checker& c, const ReorderConfig& g, const std::string& path) {
  const Vita49Options d;
  return written(c, path + ".vita49") || g.vita49.samples_per_frame != d.samples_per_frame ||
         g.vita49.sample_bytes != d.sample_bytes || g.vita49.sample_rate != d.sample_rate;
}

// A mode's own block set under another mode would be ignored: say which mode reads it.
void check_mode_blocks(Checker& c, const ReorderConfig& g, const std::string& path) {
  const std::string is = std::string("; mode is ") + to_string(g.mode);
  if (g.mode != ReorderMode::fields && fields_set(c, g, path))
    c.error(path + ".fields", "", "is only read in mode fields" + is);
  if (g.mode != ReorderMode::spead && spead_set(c, g, path))
    c.error(path + ".spead", "", "is only read in mode spead" + is);
  if (g.mode != ReorderMode::vita49 && vita49_set(c, g, path))
    c.error(path + ".vita49", "", "is only read in mode vita49" + is);
  if (g.mode != ReorderMode::roce && roce_set(c, g, path)) c.error(path + ".roce", "", "is only read in mode roce" + is);
  if (g.mode != ReorderMode::rtp_video && video_set(c, g, path))
    c.error(path + ".video", "", "is only read in mode rtp_video" + is);
  if (places_spans(g.mode)) return;
  const std::string only = "is only read in modes fields, spead, vita49, roce and rtp_video" + is +
                           " (frames of packets_per_frame x payload_size bytes, one slot per packet)";
  if (g.frame_bytes) c.error(path + ".frame_bytes", std::to_string(g.frame_bytes), only);
  if (g.granule) c.error(path + ".granule", std::to_string(g.granule), only);
  if (g.max_streams != 1) c.error(path + ".max_streams", std::to_string(g.max_streams), only);
}

void check_field(Checker& c, const PacketField& f, const std::string& key) {
  if (!field_set(c, f, key)) return;
  if (!f.declared()) {
    c.error(key + ".bits", "0", "is required: the field's width, one of: 8, 16, 32, 64");
    return;
  }
  if (f.bits != 8 && f.bits != 16 && f.bits != 32 && f.bits != 64) {
    c.error(key + ".bits", std::to_string(f.bits), "must be one of: 8, 16, 32, 64");
    return;
  }
  if (f.shift >= f.bits)
    c.error(key + ".shift", std::to_string(f.shift),
            "must be less than bits (" + std::to_string(f.bits) + "): the value is (field >> shift) & mask");
  if (f.mask == 0)
    c.error(key + ".mask", "0", "must not be 0 (every packet would read 0); leave it out to keep all bits");
}

void check_fields(Checker& c, const ReorderConfig& g, const std::string& path) {
  const std::string p = path + ".fields";
  for (const auto& [name, f] : named_fields(g.fields)) check_field(c, f, p + "." + name);
  if (!g.fields.frame.declared() && !field_set(c, g.fields.frame, p + ".frame"))
    c.error(p + ".frame", "", "is required in mode fields: {offset, bits} of the frame number");
  const bool index = field_set(c, g.fields.index, p + ".index");
  const bool byte_offset = field_set(c, g.fields.byte_offset, p + ".byte_offset");
  if (!index && !byte_offset)
    c.error(p, "",
            "needs one of index (the packet's slot: bytes at index x payload_size) or byte_offset (the packet's "
            "byte offset in its frame); neither is declared");
  else if (index && byte_offset)
    c.error(p + ".byte_offset", "",
            "cannot be declared with fields.index; declare one: index (bytes at index x payload_size) or "
            "byte_offset (the packet's byte offset in its frame)");
}

// frame_bytes derived from the config (fields + index, vita49); 0: none (it must be given).
uint64_t derived_frame_bytes(const ReorderConfig& g, std::string* how) {
  if (g.mode == ReorderMode::fields && g.fields.index.declared()) {
    *how = "packets_per_frame x payload_size";
    return uint64_t{g.packets_per_frame} * g.payload_size;
  }
  if (g.mode == ReorderMode::vita49) {
    *how = "vita49.samples_per_frame x vita49.sample_bytes";
    return uint64_t{g.vita49.samples_per_frame} * g.vita49.sample_bytes;
  }
  if (g.mode == ReorderMode::roce) {
    *how = "the largest roce.queue_pairs[].slot_size";
    return roce_frame_bytes(g);
  }
  if (g.mode == ReorderMode::rtp_video) {
    *how = "video.height lines of " + std::to_string(protocols::video::line_bytes(g.video)) + " bytes";
    return protocols::video::frame_bytes(g.video);
  }
  return 0;
}

// The keys every span mode shares: sizes, granule, streams; and each decoder's own options.
void check_spans(Checker& c, const ReorderConfig& g, const std::string& path) {
  const std::string mode = to_string(g.mode);
  const bool fields = g.mode == ReorderMode::fields;
  const bool index = fields && g.fields.index.declared();
  const bool byte_offset = fields && !index && g.fields.byte_offset.declared();
  if (fields) check_fields(c, g, path);

  // What each packet carries: the config says it (fields) or the packet does (spead, vita49, roce).
  const std::string header = g.mode == ReorderMode::spead ? "SPEAD header"
                             : g.mode == ReorderMode::roce ? "RoCE header (BTH, RETH)"
                             : g.mode == ReorderMode::rtp_video ? "RTP header and SRD headers"
                                                           : "VRT header";
  if (fields && g.payload_size == 0)
    c.error(path + ".payload_size", "0",
            index ? "is required in mode fields: the bytes each packet carries from payload_offset (one index step)"
                  : "is required in mode fields: the bytes each packet carries from payload_offset");
  if (!fields && g.payload_size)
    c.error(path + ".payload_size", std::to_string(g.payload_size),
            "is not read in mode " + mode + ": each packet's " + header + " says its payload's length");
  if (!fields && g.payload_offset)
    c.error(path + ".payload_offset", std::to_string(g.payload_offset),
            "is not read in mode " + mode + ": the " + header + " starts the UDP payload (offset 0)");
  if (index && g.packets_per_frame == 0)
    c.error(path + ".packets_per_frame", "0",
            "is required with fields.index: packets in one frame (frame_bytes = packets_per_frame x payload_size)");
  if (index && g.packets_per_frame) c.range(path + ".packets_per_frame", g.packets_per_frame, limits::packets_per_frame);
  if (!index && g.packets_per_frame)
    c.error(path + ".packets_per_frame", std::to_string(g.packets_per_frame),
            std::string("is only read in mode fields with fields.index; mode ") + mode +
                (g.mode == ReorderMode::vita49 ? " sizes frames by vita49.samples_per_frame"
                 : g.mode == ReorderMode::roce ? " sizes frames by roce.queue_pairs[].slot_size"
                 : g.mode == ReorderMode::rtp_video ? " sizes frames by video.width, height, sampling and depth"
                                               : " sizes frames by frame_bytes"));

  if (g.mode == ReorderMode::rtp_video) check_video(c, g, path);

  if (g.mode == ReorderMode::vita49) {
    const std::string v = path + ".vita49";
    if (g.vita49.samples_per_frame == 0)
      c.error(v + ".samples_per_frame", "0", "is required in mode vita49: samples in one frame");
    else c.range(v + ".samples_per_frame", g.vita49.samples_per_frame, limits::samples_per_frame);
    c.range(v + ".sample_bytes", g.vita49.sample_bytes, limits::sample_bytes);
    if (g.vita49.sample_bytes && !whole_samples(g.vita49.sample_bytes, g.input))
      c.error(v + ".sample_bytes", std::to_string(g.vita49.sample_bytes),
              "must be a multiple of the " + std::string(to_string(g.input)) + " input sample size (" +
                  sample_size_text(g.input) + ")");
    c.range(v + ".sample_rate", g.vita49.sample_rate, limits::sample_rate);
  }
  if (g.mode == ReorderMode::spead) {
    const uint64_t item = g.spead.stream_item;
    if (item >= 0x1 && item <= 0x6)
      c.error(path + ".spead.stream_item", std::to_string(item),
              "names one of SPEAD's own items (0x1..0x6: heap counter, heap size, heap offset, payload length, item "
              "descriptor, stream control); name an immediate item of the sender's, or 0 to make the flow id the stream");
    else c.range(path + ".spead.stream_item", item, limits::stream_item);
  }

  // The frame's size: given, or derived; spead and fields + byte_offset must be given it.
  std::string how;
  const uint64_t derived = derived_frame_bytes(g, &how);
  if (g.frame_bytes) {
    c.range(path + ".frame_bytes", g.frame_bytes, limits::frame_bytes);
    // fields + index: the frame's last packet may carry fewer bytes, so its size lies in
    // ((packets_per_frame - 1) x payload_size, packets_per_frame x payload_size]; vita49: exactly
    // samples_per_frame x sample_bytes. Any other size never completes or cuts packets off.
    const bool by_index = g.mode == ReorderMode::fields && g.fields.index.declared();
    const uint64_t least = by_index && derived >= g.payload_size ? derived - g.payload_size + 1 : derived;
    if (derived && (g.frame_bytes < least || g.frame_bytes > derived))
      c.error(path + ".frame_bytes", std::to_string(g.frame_bytes),
              by_index ? "must be " + how + " (" + std::to_string(derived) + "), or less when a frame's last packet is "
                             "shorter: from " + std::to_string(least) + " to " + std::to_string(derived) +
                             "; leave it out to use " + std::to_string(derived)
                       : "must be " + how + " (" + std::to_string(derived) + "), the bytes of one frame; leave it out to use that");
  } else if (g.mode == ReorderMode::spead) {
    c.error(path + ".frame_bytes", "0",
            "is required in mode spead: the largest heap's size in bytes (each heap says its own, up to this)");
  } else if (byte_offset) {
    c.error(path + ".frame_bytes", "0", "is required with fields.byte_offset: the frame's size in bytes");
  }
  const uint64_t frame_bytes = g.frame_bytes ? g.frame_bytes : derived;
  if (g.frame_bytes && !whole_samples(g.frame_bytes, g.input))
    c.error(path + ".frame_bytes", std::to_string(g.frame_bytes),
            "must hold whole " + std::string(to_string(g.input)) + " samples (a multiple of " +
                sample_size_text(g.input) + ")");
  if (byte_offset && frame_bytes && g.payload_size > frame_bytes)
    c.error(path + ".payload_size", std::to_string(g.payload_size),
            "must be at most frame_bytes (" + std::to_string(frame_bytes) + "): a packet's bytes go to one frame");

  // Presence is kept per granule: spans start on one and end on one or at the frame's end.
  c.range(path + ".granule", g.granule, limits::granule);
  const uint32_t granule = g.granule ? g.granule
                           : index   ? g.payload_size
                           : g.mode == ReorderMode::vita49 ? g.vita49.sample_bytes
                           : g.mode == ReorderMode::rtp_video ? protocols::video::pgroup_of(g.video.sampling, g.video.depth).bytes
                                                           : 8;
  const std::string gkey = path + ".granule";
  const std::string gshown = std::to_string(granule);
  const std::string which = g.granule ? "" : "the default granule (" + gshown + ") ";
  if (g.granule && !whole_samples(g.granule, g.input))
    c.error(gkey, gshown,
            "must be a multiple of the " + std::string(to_string(g.input)) + " input sample size (" +
                sample_size_text(g.input) + ")");
  if (granule && frame_bytes && granule > frame_bytes)
    c.error(gkey, gshown,
            which + "must be at most frame_bytes (" + std::to_string(frame_bytes) +
                "): one presence bit covers at most one frame");
  if (fields && granule && g.payload_size && g.payload_size % granule)
    c.error(gkey, gshown,
            which + "must divide payload_size (" + std::to_string(g.payload_size) +
                "): every packet's span starts on a granule and ends on one; set granule to a divisor of payload_size");
  if (g.mode == ReorderMode::vita49 && g.granule && g.vita49.sample_bytes && g.granule % g.vita49.sample_bytes)
    c.error(gkey, gshown,
            "must be a multiple of vita49.sample_bytes (" + std::to_string(g.vita49.sample_bytes) +
                "): packets start on a whole sample");

  // Streams: every stream has its own open frames, all drawn from the frame buffers.
  c.range(path + ".max_streams", g.max_streams, limits::max_streams);
}

// Where the decoder reads headers (CPU) and the GPU reads the bytes it places.
void check_span_memory(Checker& c, const QueueConfig& q, const ReorderConfig& g, const std::string& path) {
  const Config& cfg = c.config();
  const MemoryRegionConfig* samples = nullptr;
  if (g.mode == ReorderMode::fields) {
    for (const auto& [name, f] : named_fields(g.fields)) {
      if (!f.declared() || f.bits % 8 || f.bits > 64) continue;
      const std::string key = path + ".fields." + name + ".offset";
      const MemoryRegionConfig* r = region_of(c, q, f.offset, f.bits / 8, key, std::string("fields.") + name);
      if (r && r->kind == MemoryKind::device)
        c.error(key, std::to_string(f.offset),
                std::string("fields.") + name + " is in region '" + r->name +
                    "' of kind device, which the CPU cannot read; split headers into host memory");
    }
    if (g.payload_size) samples = region_of(c, q, g.payload_offset, g.payload_size, path + ".payload_offset", "the samples");
  } else {
    // SPEAD / VRT headers start the UDP payload, in the first segment; the bytes placed lie
    // after them, in the last segment (the payload region with header-data split).
    std::vector<const MemoryRegionConfig*> regions;
    for (const auto& name : q.memory_regions)
      if (const auto* r = cfg.find_region(name)) regions.push_back(r);
    if (regions.size() != q.memory_regions.size() || regions.empty()) return;  // reported by check_queues
    const std::string header = g.mode == ReorderMode::spead ? "the SPEAD headers"
                               : g.mode == ReorderMode::roce ? "the RoCE headers (BTH, RETH)"
                               : g.mode == ReorderMode::rtp_video ? "the RTP and SRD headers"
                                                             : "the VRT headers";
    if (regions.front()->kind == MemoryKind::device)
      c.error(path + ".mode", to_string(g.mode),
              header + " start the UDP payload, in region '" + regions.front()->name +
                  "' of kind device, which the CPU cannot read; split headers into host memory");
    samples = regions.back();
  }
  if (samples && g.frames == FrameTarget::host) {
    if (samples->kind == MemoryKind::device)
      c.error(path + ".frames", "host",
              "copies the samples with the CPU, but they are in region '" + samples->name +
                  "' of kind device; use host memory (or frames: gpu)");
    return;
  }
  if (samples && !gpu_readable(samples->kind))
    c.error(path + ".queue", std::to_string(g.queue),
            "its samples are in region '" + samples->name + "' of kind " + to_string(samples->kind) +
                ", which the GPU cannot read; use kind pinned, mapped or device (or frames: host, without a GPU)");
}

// launch: rings: an engine that hands its queue's rings over, the queue in direct mode (its
// rings' owner takes every packet), and what the loop that owns them does.
void check_rings(Checker& c, const InterfaceConfig& iface, const QueueConfig* q, const ReorderConfig& g,
                 const std::string& path) {
  const auto caps = capabilities_of(iface);
  if (caps && !caps->rx_ring_handover)
    c.error(path + ".launch", "rings",
            "needs an engine whose rx rings a GPU kernel can own (afxdp); interface '" + iface.name + "' (engine " +
                iface.engine + ") has none: use per_burst, graph or persistent");
  if (q && q->mode != PollMode::direct)
    c.error(path + ".launch", "rings",
            "needs rx queue " + std::to_string(q->id) + " in mode direct: the rings' owner takes every packet");
  if (const auto p = rings_launch_problem(g)) c.error(path + "." + p->key, p->value, p->why);
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
  const bool spans = places_spans(g.mode);  // sizes checked by check_spans
  const bool rings = g.launch == LaunchMode::rings;
  if (rings) check_rings(c, iface, q, g, path);
  if (g.frames == FrameTarget::host && !spans && !rings)
    c.error(path + ".frames", "host",
            std::string("assembles the modes placed by the sensor's headers (fields, spead, vita49, roce, rtp_video), "
                        "or mode sequence with launch: rings; mode ") +
                to_string(g.mode) + " places slots on the GPU: use frames: gpu");
  if (!spans) {
    if (g.payload_size == 0) c.error(path + ".payload_size", "0", "is required: sample bytes per packet");
    if (g.packets_per_frame == 0) c.error(path + ".packets_per_frame", "0", "is required: packets in one frame");
    c.range(path + ".packets_per_frame", g.packets_per_frame, limits::packets_per_frame);
  }
  c.range(path + ".max_open_frames", g.max_open_frames, limits::max_open_frames);
  c.range(path + ".frame_buffers", g.frame_buffers, limits::frame_buffers);
  c.range(path + ".frame_timeout_us", g.frame_timeout_us, limits::frame_timeout_us);
  c.range(path + ".bursts_in_flight", g.bursts_in_flight, limits::bursts_in_flight);
  if (g.job_packets) c.range(path + ".job_packets", *g.job_packets, limits::job_packets);
  c.range(path + ".job_timeout_us", g.job_timeout_us, limits::job_timeout_us);
  if (g.persistent_sms) {
    c.range(path + ".persistent_sms", *g.persistent_sms, limits::persistent_sms);
    if (g.launch != LaunchMode::persistent)
      c.error(path + ".persistent_sms", std::to_string(*g.persistent_sms),
              std::string("is read only with launch: persistent (launch is ") + to_string(g.launch) + ")");
  }
  if (spans && g.max_streams > 1) {
    const uint64_t open = uint64_t{g.max_open_frames} * g.max_streams;
    if (g.frame_buffers < open)
      c.error(path + ".frame_buffers", std::to_string(g.frame_buffers),
              "must be >= max_open_frames x max_streams (" + std::to_string(g.max_open_frames) + " x " +
                  std::to_string(g.max_streams) + " = " + std::to_string(open) +
                  "): every stream's open frames need a buffer of their own");
  } else if (g.frame_buffers < g.max_open_frames) {
    c.error(path + ".frame_buffers", std::to_string(g.frame_buffers),
            "must be >= max_open_frames (" + std::to_string(g.max_open_frames) + "): every open frame needs a buffer");
  }
  if (g.seq_bits != 8 && g.seq_bits != 16 && g.seq_bits != 32 && g.seq_bits != 64)
    c.error(path + ".seq_bits", std::to_string(g.seq_bits), "must be one of: 8, 16, 32, 64");
  check_formats(c, g, path);
  check_mode_blocks(c, g, path);
  if (spans) {
    check_spans(c, g, path);
    if (q) check_span_memory(c, *q, g, path);
    if (g.mode == ReorderMode::roce) check_roce(c, iface, q, g, path);
    return;
  }
  if (!q || g.payload_size == 0) return;

  const MemoryRegionConfig* samples =
      region_of(c, *q, g.payload_offset, g.payload_size, path + ".payload_offset", "the samples");
  if (samples && g.frames == FrameTarget::gpu && !gpu_readable(samples->kind))
    c.error(path + ".queue", std::to_string(g.queue),
            "its samples are in region '" + samples->name + "' of kind " + to_string(samples->kind) +
                ", which the GPU cannot read; use kind pinned, mapped or device");
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
