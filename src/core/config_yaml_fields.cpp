#include "core/config_yaml_fields.h"

#include "core/app_blocks.h"
#include "core/engine_descriptor.h"
#include "netdaq/video.h"

namespace netdaq::detail {

namespace {

static_assert(static_cast<size_t>(MemoryKind::device) + 1 == kMemoryKindNames.size());
static_assert(static_cast<size_t>(PollMode::worker) + 1 == kPollModeNames.size());
static_assert(static_cast<size_t>(SampleFormat::fp32) + 1 == kSampleFormatNames.size());
static_assert(static_cast<size_t>(LaunchMode::rings) + 1 == kLaunchModeNames.size());
static_assert(static_cast<size_t>(Staging::direct) + 1 == kStagingNames.size());

using Node = YAML::Node;
using Path = std::string;

void read_region(YamlReader& r, const Node& n, const Path& path, MemoryRegionConfig& m) {
  r.map(n, path, {
      {"name", [&](const Node& v, const Path& p) { r.text(v, p, m.name); }},
      {"kind", [&](const Node& v, const Path& p) { r.choice(v, p, m.kind, kMemoryKindNames); }},
      {"buf_size", [&](const Node& v, const Path& p) { r.integer(v, p, m.buf_size, limits::buf_size); }},
      {"num_bufs", [&](const Node& v, const Path& p) { r.integer(v, p, m.num_bufs, limits::num_bufs); }},
      {"gpu", [&](const Node& v, const Path& p) { r.integer(v, p, m.gpu, limits::gpu); }},
      {"hugepages_required", [&](const Node& v, const Path& p) { r.boolean(v, p, m.hugepages_required); }},
  });
}

void read_queue(YamlReader& r, const Node& n, const Path& path, QueueConfig& q) {
  r.map(n, path, {
      {"id", [&](const Node& v, const Path& p) { r.integer(v, p, q.id); }},
      {"name", [&](const Node& v, const Path& p) { r.text(v, p, q.name); }},
      {"mode", [&](const Node& v, const Path& p) { r.choice(v, p, q.mode, kPollModeNames); }},
      {"cpu_core", [&](const Node& v, const Path& p) { r.integer(v, p, q.cpu_core, limits::cpu_core); }},
      {"batch_size", [&](const Node& v, const Path& p) { r.integer(v, p, q.batch_size, limits::batch_size); }},
      {"timeout_us", [&](const Node& v, const Path& p) { r.integer(v, p, q.timeout_us, limits::timeout_us); }},
      {"ring_depth", [&](const Node& v, const Path& p) { r.integer(v, p, q.ring_depth, limits::ring_depth); }},
      {"memory_regions",
       [&](const Node& v, const Path& p) {
         r.list(v, p, "region names", [&](const Node& item, const Path& ip) { r.text(item, ip, q.memory_regions.emplace_back()); });
       }},
  });
}

void read_queues(YamlReader& r, const Node& n, const Path& path, std::vector<QueueConfig>& queues) {
  r.list(n, path, "queues", [&](const Node& item, const Path& ip) { read_queue(r, item, ip, queues.emplace_back()); });
}

void read_match(YamlReader& r, const Node& n, const Path& path, FlowMatch& m) {
  r.map(n, path, {
      {"udp_src", [&](const Node& v, const Path& p) { r.port_or_range(v, p, m.udp_src, m.udp_src_end); }},
      {"udp_dst", [&](const Node& v, const Path& p) { r.port_or_range(v, p, m.udp_dst, m.udp_dst_end); }},
      {"ip_src", [&](const Node& v, const Path& p) { r.text(v, p, m.ip_src); }},
      {"ip_dst", [&](const Node& v, const Path& p) { r.text(v, p, m.ip_dst); }},
      {"vlan", [&](const Node& v, const Path& p) { r.integer(v, p, m.vlan, limits::vlan); }},
  });
}

void read_flow(YamlReader& r, const Node& n, const Path& path, FlowConfig& f) {
  r.map(n, path, {
      {"id", [&](const Node& v, const Path& p) { r.integer(v, p, f.id); }},
      {"queue", [&](const Node& v, const Path& p) { r.integer(v, p, f.queue); }},
      {"queues",
       [&](const Node& v, const Path& p) {
         r.list(v, p, "rx queue ids", [&](const Node& item, const Path& ip) { r.integer(item, ip, f.queues.emplace_back()); });
       }},
      {"match", [&](const Node& v, const Path& p) { read_match(r, v, p, f.match); }},
  });
}

// rx.reorder.fields.<name>: {offset, bits, byte_order, shift, mask} (bits, shift and the
// offset's place in the buffers are checked by the validator, which knows the queue).
void read_field(YamlReader& r, const Node& n, const Path& path, PacketField& f) {
  r.map(n, path, {
      {"offset", [&](const Node& v, const Path& p) { r.integer(v, p, f.offset); }},
      {"bits", [&](const Node& v, const Path& p) { r.integer(v, p, f.bits); }},
      {"byte_order", [&](const Node& v, const Path& p) { r.choice(v, p, f.byte_order, kByteOrderNames); }},
      {"shift", [&](const Node& v, const Path& p) { r.integer(v, p, f.shift, limits::field_shift); }},
      {"mask", [&](const Node& v, const Path& p) { r.integer(v, p, f.mask); }},  // hex reads: 0xFFFF
  });
}

void read_fields(YamlReader& r, const Node& n, const Path& path, FieldPlacement& f) {
  auto field = [&](PacketField& out) {
    return [&r, &out](const Node& v, const Path& p) { read_field(r, v, p, out); };
  };
  r.map(n, path, {
      {"frame", field(f.frame)},
      {"index", field(f.index)},
      {"byte_offset", field(f.byte_offset)},
      {"stream", field(f.stream)},
      {"marker", field(f.marker)},
      {"timestamp", field(f.timestamp)},
  });
}

void read_spead(YamlReader& r, const Node& n, const Path& path, SpeadOptions& s) {
  r.map(n, path, {
      {"stream_item", [&](const Node& v, const Path& p) { r.integer(v, p, s.stream_item, limits::stream_item); }},
  });
}

void read_vita49(YamlReader& r, const Node& n, const Path& path, Vita49Options& o) {
  r.map(n, path, {
      {"samples_per_frame",
       [&](const Node& v, const Path& p) { r.integer(v, p, o.samples_per_frame, limits::samples_per_frame); }},
      {"sample_bytes", [&](const Node& v, const Path& p) { r.integer(v, p, o.sample_bytes, limits::sample_bytes); }},
      {"sample_rate", [&](const Node& v, const Path& p) { r.integer(v, p, o.sample_rate, limits::sample_rate); }},
  });
}

// rx.reorder.video: the stream's SDP format parameters (docs/video.md); exactframerate as SDP
// writes it, an integer (50) or N/D (60000/1001).
void read_video(YamlReader& r, const Node& n, const Path& path, VideoOptions& o) {
  r.map(n, path, {
      {"width", [&](const Node& v, const Path& p) { r.integer(v, p, o.width, limits::video_width); }},
      {"height", [&](const Node& v, const Path& p) { r.integer(v, p, o.height, limits::video_height); }},
      {"sampling", [&](const Node& v, const Path& p) { r.choice(v, p, o.sampling, kVideoSamplingNames); }},
      {"depth", [&](const Node& v, const Path& p) { r.integer(v, p, o.depth); }},
      {"exactframerate",
       [&](const Node& v, const Path& p) {
         std::string text;
         r.text(v, p, text);
         if (!text.empty() && !parse_exactframerate(text, o.rate_num, o.rate_den))
           r.error(p, v, "must be a frame rate as SDP writes it: an integer (50) or N/D (60000/1001), N and D 1..4294967295");
       }},
      {"interlaced", [&](const Node& v, const Path& p) { r.boolean(v, p, o.interlaced); }},
      {"payload_type",
       [&](const Node& v, const Path& p) { r.integer(v, p, o.payload_type, limits::video_payload_type); }},
      {"unpack", [&](const Node& v, const Path& p) { r.choice(v, p, o.unpack, kVideoUnpackNames); }},
      {"rows", [&](const Node& v, const Path& p) { r.choice(v, p, o.rows, kVideoRowsNames); }},
  });
}

// rx.reorder.roce.queue_pairs[i]: one sensor's QP as the rdma engine's peer file declares it
// (docs/roce-software.md); numbers may be hex (qpn: 0x100, base_va: 0x7f0000000000).
void read_roce_queue_pair(YamlReader& r, const Node& n, const Path& path, RoceQueuePair& q) {
  r.map(n, path, {
      {"qpn", [&](const Node& v, const Path& p) { r.integer(v, p, q.qpn, limits::roce_qpn); }},
      {"rkey", [&](const Node& v, const Path& p) { r.integer(v, p, q.rkey); }},
      {"base_va", [&](const Node& v, const Path& p) { r.integer(v, p, q.base_va); }},
      {"slots", [&](const Node& v, const Path& p) { r.integer(v, p, q.slots, limits::roce_slots); }},
      {"stride", [&](const Node& v, const Path& p) { r.integer(v, p, q.stride); }},
      {"slot_size", [&](const Node& v, const Path& p) { r.integer(v, p, q.slot_size, limits::frame_bytes); }},
      {"psn", [&](const Node& v, const Path& p) { r.integer(v, p, q.psn, limits::roce_psn); }},
  });
}

void read_roce(YamlReader& r, const Node& n, const Path& path, RoceOptions& o) {
  r.map(n, path, {
      {"queue_pairs",
       [&](const Node& v, const Path& p) {
         r.list(v, p, "queue pairs",
                [&](const Node& item, const Path& ip) { read_roce_queue_pair(r, item, ip, o.queue_pairs.emplace_back()); });
       }},
      {"check_icrc", [&](const Node& v, const Path& p) { r.boolean(v, p, o.check_icrc); }},
      {"mtu", [&](const Node& v, const Path& p) { r.integer(v, p, o.mtu, limits::roce_mtu); }},
      {"metadata_bytes",
       [&](const Node& v, const Path& p) { r.integer(v, p, o.metadata_bytes, limits::roce_metadata_bytes); }},
      {"psn_window", [&](const Node& v, const Path& p) { r.integer(v, p, o.psn_window, limits::roce_psn_window); }},
  });
}

void read_reorder(YamlReader& r, const Node& n, const Path& path, ReorderConfig& g) {
  r.map(n, path, {
      {"name", [&](const Node& v, const Path& p) { r.text(v, p, g.name); }},
      {"queue", [&](const Node& v, const Path& p) { r.integer(v, p, g.queue); }},
      {"gpu", [&](const Node& v, const Path& p) { r.integer(v, p, g.gpu, limits::gpu); }},
      {"mode", [&](const Node& v, const Path& p) { r.choice(v, p, g.mode, kReorderModeNames); }},
      {"seq_offset", [&](const Node& v, const Path& p) { r.integer(v, p, g.seq_offset); }},
      {"seq_bits", [&](const Node& v, const Path& p) { r.integer(v, p, g.seq_bits); }},
      {"seq_byte_order", [&](const Node& v, const Path& p) { r.choice(v, p, g.seq_byte_order, kByteOrderNames); }},
      {"payload_offset", [&](const Node& v, const Path& p) { r.integer(v, p, g.payload_offset); }},
      {"payload_size", [&](const Node& v, const Path& p) { r.integer(v, p, g.payload_size, limits::payload_size); }},
      {"packets_per_frame",
       [&](const Node& v, const Path& p) { r.integer(v, p, g.packets_per_frame, limits::packets_per_frame); }},
      {"max_open_frames",
       [&](const Node& v, const Path& p) { r.integer(v, p, g.max_open_frames, limits::max_open_frames); }},
      {"frame_buffers", [&](const Node& v, const Path& p) { r.integer(v, p, g.frame_buffers, limits::frame_buffers); }},
      {"frame_timeout_us",
       [&](const Node& v, const Path& p) { r.integer(v, p, g.frame_timeout_us, limits::frame_timeout_us); }},
      {"input", [&](const Node& v, const Path& p) { r.choice(v, p, g.input, kSampleFormatNames); }},
      {"output", [&](const Node& v, const Path& p) { r.choice(v, p, g.output, kSampleFormatNames); }},
      {"sample_byte_order",
       [&](const Node& v, const Path& p) { r.choice(v, p, g.sample_byte_order, kByteOrderNames); }},
      {"staging", [&](const Node& v, const Path& p) { r.choice(v, p, g.staging, kStagingNames); }},
      {"frames", [&](const Node& v, const Path& p) { r.choice(v, p, g.frames, kFrameTargetNames); }},
      {"launch", [&](const Node& v, const Path& p) { r.choice(v, p, g.launch, kLaunchModeNames); }},
      {"bursts_in_flight",
       [&](const Node& v, const Path& p) { r.integer(v, p, g.bursts_in_flight, limits::bursts_in_flight); }},
      {"job_packets", [&](const Node& v, const Path& p) { r.integer_or_auto(v, p, g.job_packets, limits::job_packets); }},
      {"job_timeout_us",
       [&](const Node& v, const Path& p) { r.integer(v, p, g.job_timeout_us, limits::job_timeout_us); }},
      {"persistent_sms",
       [&](const Node& v, const Path& p) { r.integer_or_auto(v, p, g.persistent_sms, limits::persistent_sms); }},
      {"frame_bytes", [&](const Node& v, const Path& p) { r.integer(v, p, g.frame_bytes, limits::frame_bytes); }},
      {"granule", [&](const Node& v, const Path& p) { r.integer(v, p, g.granule, limits::granule); }},
      {"max_streams", [&](const Node& v, const Path& p) { r.integer(v, p, g.max_streams, limits::max_streams); }},
      {"fields", [&](const Node& v, const Path& p) { read_fields(r, v, p, g.fields); }},
      {"spead", [&](const Node& v, const Path& p) { read_spead(r, v, p, g.spead); }},
      {"vita49", [&](const Node& v, const Path& p) { read_vita49(r, v, p, g.vita49); }},
      {"roce", [&](const Node& v, const Path& p) { read_roce(r, v, p, g.roce); }},
      {"video", [&](const Node& v, const Path& p) { read_video(r, v, p, g.video); }},
  });
}

void read_rx(YamlReader& r, const Node& n, const Path& path, RxConfig& rx) {
  r.map(n, path, {
      {"queues", [&](const Node& v, const Path& p) { read_queues(r, v, p, rx.queues); }},
      {"flows",
       [&](const Node& v, const Path& p) {
         r.list(v, p, "flows", [&](const Node& item, const Path& ip) { read_flow(r, item, ip, rx.flows.emplace_back()); });
       }},
      {"reorder",
       [&](const Node& v, const Path& p) {
         r.list(v, p, "reorder configs",
                [&](const Node& item, const Path& ip) { read_reorder(r, item, ip, rx.reorder.emplace_back()); });
       }},
  });
}

void read_tx(YamlReader& r, const Node& n, const Path& path, TxConfig& tx) {
  r.map(n, path, {
      {"queues", [&](const Node& v, const Path& p) { read_queues(r, v, p, tx.queues); }},
      {"destination", [&](const Node& v, const Path& p) { r.text(v, p, tx.destination); }},
      {"rate_mbps", [&](const Node& v, const Path& p) { r.number(v, p, tx.rate_mbps, 0); }},
      {"rate_pps", [&](const Node& v, const Path& p) { r.number(v, p, tx.rate_pps, 0); }},
  });
}

// The engines' option blocks of one level (interface or top) as map fields: each block is
// read by its engine's declarations into `blocks`.
void add_engine_blocks(YamlReader& r, std::vector<YamlReader::Field>& fields, OptionBlocks& blocks, bool top_level) {
  for (const auto* engine : engine_descriptors())
    for (const auto& spec : engine->blocks)
      if (spec.top_level == top_level)
        fields.push_back({spec.key, [&r, &blocks, &spec](const Node& v, const Path& p) {
                            spec.read(r, v, p, blocks.find_or_make(spec.key, spec.make));
                          }});
}

void read_interface(YamlReader& r, const Node& n, const Path& path, InterfaceConfig& i) {
  std::vector<YamlReader::Field> fields{
      {"name", [&](const Node& v, const Path& p) { r.text(v, p, i.name); }},
      {"engine", [&](const Node& v, const Path& p) { r.text(v, p, i.engine); }},
      {"address", [&](const Node& v, const Path& p) { r.text(v, p, i.address); }},
      {"rx", [&](const Node& v, const Path& p) { read_rx(r, v, p, i.rx); }},
      {"tx", [&](const Node& v, const Path& p) { read_tx(r, v, p, i.tx); }},
  };
  add_engine_blocks(r, fields, i.options, false);
  r.map(n, path, fields);
}

void read_log(YamlReader& r, const Node& n, const Path& path, LogConfig& log) {
  r.map(n, path, {{"level", [&](const Node& v, const Path& p) { r.text(v, p, log.level); }}});
}

}  // namespace

void read_config(YamlReader& r, const Node& root, Config& cfg) {
  const std::vector<AppBlock> apps = app_blocks();
  std::vector<YamlReader::Field> fields{
      {"memory_regions",
       [&](const Node& v, const Path& p) {
         r.list(v, p, "memory regions",
                [&](const Node& item, const Path& ip) { read_region(r, item, ip, cfg.memory_regions.emplace_back()); });
       }},
      {"interfaces",
       [&](const Node& v, const Path& p) {
         r.list(v, p, "interfaces",
                [&](const Node& item, const Path& ip) { read_interface(r, item, ip, cfg.interfaces.emplace_back()); });
       }},
  };
  for (const auto& app : apps)
    fields.push_back({app.key, [&r, &app, &cfg](const Node& v, const Path& p) {
                        read_app_block(r, v, p, app, cfg.options.find_or_make(app.key, app.make));
                      }});
  fields.push_back({"log", [&](const Node& v, const Path& p) { read_log(r, v, p, cfg.log); }});
  add_engine_blocks(r, fields, cfg.options, true);
  r.map(root, "", fields);
}

}  // namespace netdaq::detail
