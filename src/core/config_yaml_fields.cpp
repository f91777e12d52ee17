#include "core/config_yaml_fields.h"

namespace netdaq::detail {

namespace {

static_assert(static_cast<size_t>(MemoryKind::device) + 1 == kMemoryKindNames.size());
static_assert(static_cast<size_t>(PollMode::worker) + 1 == kPollModeNames.size());
static_assert(static_cast<size_t>(SampleFormat::fp32) + 1 == kSampleFormatNames.size());
static_assert(static_cast<size_t>(LaunchMode::persistent) + 1 == kLaunchModeNames.size());
static_assert(static_cast<size_t>(Staging::direct) + 1 == kStagingNames.size());
static_assert(static_cast<size_t>(XdpAttach::generic) + 1 == kXdpAttachNames.size());
static_assert(static_cast<size_t>(XskMode::copy) + 1 == kXskModeNames.size());
static_assert(static_cast<size_t>(DpdkLoopback::hardware) + 1 == kDpdkLoopbackNames.size());

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
      {"launch", [&](const Node& v, const Path& p) { r.choice(v, p, g.launch, kLaunchModeNames); }},
      {"bursts_in_flight",
       [&](const Node& v, const Path& p) { r.integer(v, p, g.bursts_in_flight, limits::bursts_in_flight); }},
      {"job_packets", [&](const Node& v, const Path& p) { r.integer(v, p, g.job_packets, limits::job_packets); }},
      {"job_timeout_us",
       [&](const Node& v, const Path& p) { r.integer(v, p, g.job_timeout_us, limits::job_timeout_us); }},
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

void read_socket(YamlReader& r, const Node& n, const Path& path, SocketOptions& s) {
  r.map(n, path, {
      {"gro", [&](const Node& v, const Path& p) { r.boolean(v, p, s.gro); }},
      {"gso", [&](const Node& v, const Path& p) { r.boolean(v, p, s.gso); }},
      {"rcvbuf", [&](const Node& v, const Path& p) { r.integer(v, p, s.rcvbuf); }},
      {"sndbuf", [&](const Node& v, const Path& p) { r.integer(v, p, s.sndbuf); }},
      {"busy_poll_us", [&](const Node& v, const Path& p) { r.integer(v, p, s.busy_poll_us); }},
      {"multicast_interface", [&](const Node& v, const Path& p) { r.text(v, p, s.multicast_interface); }},
      {"tcp_max_message", [&](const Node& v, const Path& p) { r.integer(v, p, s.tcp_max_message); }},
      {"reconnect_ms", [&](const Node& v, const Path& p) { r.integer(v, p, s.reconnect_ms); }},
  });
}

void read_afxdp(YamlReader& r, const Node& n, const Path& path, AfxdpOptions& a) {
  r.map(n, path, {
      {"attach", [&](const Node& v, const Path& p) { r.choice(v, p, a.attach, kXdpAttachNames); }},
      {"mode", [&](const Node& v, const Path& p) { r.choice(v, p, a.mode, kXskModeNames); }},
      {"need_wakeup", [&](const Node& v, const Path& p) { r.boolean(v, p, a.need_wakeup); }},
      {"busy_poll_us", [&](const Node& v, const Path& p) { r.integer(v, p, a.busy_poll_us); }},
      {"busy_poll_budget",
       [&](const Node& v, const Path& p) { r.integer(v, p, a.busy_poll_budget, limits::busy_poll_budget); }},
      {"rx_ring", [&](const Node& v, const Path& p) { r.integer(v, p, a.rx_ring, limits::xsk_ring); }},
      {"fill_ring", [&](const Node& v, const Path& p) { r.integer(v, p, a.fill_ring, limits::xsk_ring); }},
      {"tx_ring", [&](const Node& v, const Path& p) { r.integer(v, p, a.tx_ring, limits::xsk_ring); }},
      {"comp_ring", [&](const Node& v, const Path& p) { r.integer(v, p, a.comp_ring, limits::xsk_ring); }},
      {"dst_mac", [&](const Node& v, const Path& p) { r.text(v, p, a.dst_mac); }},
      {"src_ip", [&](const Node& v, const Path& p) { r.text(v, p, a.src_ip); }},
      {"src_port", [&](const Node& v, const Path& p) { r.integer(v, p, a.src_port); }},
  });
}

void read_dpdk(YamlReader& r, const Node& n, const Path& path, DpdkOptions& d) {
  r.map(n, path, {
      {"rx_desc", [&](const Node& v, const Path& p) { r.integer(v, p, d.rx_desc, limits::dpdk_desc); }},
      {"tx_desc", [&](const Node& v, const Path& p) { r.integer(v, p, d.tx_desc, limits::dpdk_desc); }},
      {"mtu", [&](const Node& v, const Path& p) { r.integer(v, p, d.mtu); }},
      {"promiscuous", [&](const Node& v, const Path& p) { r.boolean(v, p, d.promiscuous); }},
      {"isolate", [&](const Node& v, const Path& p) { r.boolean(v, p, d.isolate); }},
      {"loopback", [&](const Node& v, const Path& p) { r.choice(v, p, d.loopback, kDpdkLoopbackNames); }},
      {"tx_checksum_offload", [&](const Node& v, const Path& p) { r.boolean(v, p, d.tx_checksum_offload); }},
      {"mempool_cache", [&](const Node& v, const Path& p) { r.integer(v, p, d.mempool_cache, limits::mempool_cache); }},
      {"raw_frames", [&](const Node& v, const Path& p) { r.boolean(v, p, d.raw_frames); }},
      {"dst_mac", [&](const Node& v, const Path& p) { r.text(v, p, d.dst_mac); }},
      {"src_ip", [&](const Node& v, const Path& p) { r.text(v, p, d.src_ip); }},
      {"src_port", [&](const Node& v, const Path& p) { r.integer(v, p, d.src_port); }},
  });
}

void read_interface(YamlReader& r, const Node& n, const Path& path, InterfaceConfig& i) {
  r.map(n, path, {
      {"name", [&](const Node& v, const Path& p) { r.text(v, p, i.name); }},
      {"engine", [&](const Node& v, const Path& p) { r.text(v, p, i.engine); }},
      {"address", [&](const Node& v, const Path& p) { r.text(v, p, i.address); }},
      {"rx", [&](const Node& v, const Path& p) { read_rx(r, v, p, i.rx); }},
      {"tx", [&](const Node& v, const Path& p) { read_tx(r, v, p, i.tx); }},
      {"socket", [&](const Node& v, const Path& p) { read_socket(r, v, p, i.socket); }},
      {"afxdp", [&](const Node& v, const Path& p) { read_afxdp(r, v, p, i.afxdp); }},
      {"dpdk", [&](const Node& v, const Path& p) { read_dpdk(r, v, p, i.dpdk); }},
  });
}

void read_run(YamlReader& r, const Node& n, const Path& path, RunConfig& run) {
  r.map(n, path, {
      {"duration_s", [&](const Node& v, const Path& p) { r.number(v, p, run.duration_s, 0); }},
      {"tx_packets", [&](const Node& v, const Path& p) { r.integer(v, p, run.tx_packets); }},
      {"tx_payload_size",
       [&](const Node& v, const Path& p) { r.integer(v, p, run.tx_payload_size, limits::tx_payload_size); }},
      {"stats_interval_ms",
       [&](const Node& v, const Path& p) { r.integer(v, p, run.stats_interval_ms, limits::stats_interval_ms); }},
      {"drain_ms", [&](const Node& v, const Path& p) { r.integer(v, p, run.drain_ms); }},
  });
}

void read_log(YamlReader& r, const Node& n, const Path& path, LogConfig& log) {
  r.map(n, path, {{"level", [&](const Node& v, const Path& p) { r.text(v, p, log.level); }}});
}

void read_strings(YamlReader& r, const Node& n, const Path& path, std::string_view what, std::vector<std::string>& out) {
  r.list(n, path, what, [&](const Node& item, const Path& ip) { r.text(item, ip, out.emplace_back()); });
}

void read_eal(YamlReader& r, const Node& n, const Path& path, EalConfig& e) {
  r.map(n, path, {
      {"cores",
       [&](const Node& v, const Path& p) {
         r.list(v, p, "CPU ids", [&](const Node& item, const Path& ip) {
           r.integer(item, ip, e.cores.emplace_back(), limits::eal_core);
         });
       }},
      {"main_core", [&](const Node& v, const Path& p) { r.integer(v, p, e.main_core, limits::cpu_core); }},
      {"hugepages", [&](const Node& v, const Path& p) { r.boolean(v, p, e.hugepages); }},
      {"memory_mb", [&](const Node& v, const Path& p) { r.integer(v, p, e.memory_mb, limits::eal_memory_mb); }},
      {"file_prefix", [&](const Node& v, const Path& p) { r.text(v, p, e.file_prefix); }},
      {"allow", [&](const Node& v, const Path& p) { read_strings(r, v, p, "PCI addresses", e.allow); }},
      {"vdevs", [&](const Node& v, const Path& p) { read_strings(r, v, p, "virtual devices", e.vdevs); }},
      {"args", [&](const Node& v, const Path& p) { read_strings(r, v, p, "EAL arguments", e.args); }},
  });
}

}  // namespace

void read_config(YamlReader& r, const Node& root, Config& cfg) {
  r.map(root, "", {
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
      {"run", [&](const Node& v, const Path& p) { read_run(r, v, p, cfg.run); }},
      {"log", [&](const Node& v, const Path& p) { read_log(r, v, p, cfg.log); }},
      {"eal", [&](const Node& v, const Path& p) { read_eal(r, v, p, cfg.eal); }},
  });
}

}  // namespace netdaq::detail
