// Configuration: plain structs that mirror the YAML one to one (see docs/config.md).
// Build a Config in C++ or load it from YAML; both go through the same validation.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "netdaq/option_blocks.h"
#include "netdaq/sample_format.h"
#include "netdaq/status.h"

namespace netdaq {

enum class MemoryKind : uint8_t {
  host,    // malloc'd, page aligned
  huge,    // 2 MiB hugepages (mmap MAP_HUGETLB); falls back to host with a warning unless
           // hugepages_required is set
  pinned,  // cudaHostAlloc (GPU builds)
  mapped,  // pinned + mapped into the GPU's address space (GPU builds)
  device,  // cudaMalloc (GPU builds)
};
const char* to_string(MemoryKind k) noexcept;

struct MemoryRegionConfig {
  std::string name;
  MemoryKind kind = MemoryKind::host;
  uint32_t buf_size = 2048;      // bytes per buffer
  uint32_t num_bufs = 8192;      // buffers in the pool carved from this region
  int gpu = -1;                  // GPU index for pinned/mapped/device
  bool hugepages_required = false;  // kind huge: fail instead of falling back to host
};

enum class PollMode : uint8_t {
  direct,  // the caller's thread polls the engine in RxQueue::poll()
  worker,  // an engine thread pinned to cpu_core fills a ring of bursts
};
const char* to_string(PollMode m) noexcept;

struct QueueConfig {
  uint16_t id = 0;
  std::string name;                  // optional label for stats; default "<iface>/rx<id>"
  PollMode mode = PollMode::direct;
  int cpu_core = -1;                 // worker mode: pin the worker here (-1: no pinning)
  uint32_t batch_size = 64;          // packets per burst (max)
  uint32_t timeout_us = 100;         // worker mode: hand over a partial burst after this
  uint32_t ring_depth = 64;          // worker mode: bursts in flight between worker and app
  std::vector<std::string> memory_regions;  // 1 region, or 2 for header-data split
                                            // (segment 0 = first buf_size bytes of region 0)
};

// Match fields of a flow. Unset fields match anything.
struct FlowMatch {
  std::optional<uint16_t> udp_src;
  std::optional<uint16_t> udp_src_end;  // with udp_src: inclusive range
  std::optional<uint16_t> udp_dst;
  std::optional<uint16_t> udp_dst_end;
  std::optional<std::string> ip_src;    // IPv4 or IPv6 literal
  std::optional<std::string> ip_dst;
  std::optional<uint16_t> vlan;
};

struct FlowConfig {
  uint32_t id = 0;
  FlowMatch match;
  uint16_t queue = 0;            // rx queue id the flow is steered to
  std::vector<uint16_t> queues;  // dpdk: spread the flow over these rx queues (RSS) instead
};

// How packets are placed into a frame.
enum class ReorderMode : uint8_t {
  sequence,  // slot = sequence % packets_per_frame, frame = sequence / packets_per_frame
  arrival,   // gather in arrival order: slot = packets so far in the frame
  immediate, // as sequence, the sequence being the packet's immediate data (Packet::immediate():
             // rdma op write_imm; 32 bits, unwrapped), so the CPU never reads the payload
  // Placement by the sensor's own headers (docs/gpu.md, "Frames from the sensor's headers"):
  // a decoder (src/protocols) yields per packet the stream, and spans (frame, byte offset,
  // bytes); frames are byte ranges of frame_bytes, presence kept per granule.
  fields,    // generic fields declared in `fields:` (frame + index or byte_offset, stream, marker)
  spead,     // SPEAD-64-48 / -64-40 heaps: heap counter, heap size, heap offset, payload length
  vita49,    // VITA-49.2 signal data packets placed by their sample-count timestamp
  roce,      // RoCEv2 RDMA WRITEs received in software (no RDMA NIC): RETH VA - base is the
             // byte offset, ICRC, queue pair, rkey and PSN checked as an RDMA NIC checks them
  rtp_video, // uncompressed video over RTP (SMPTE ST 2110-20 / RFC 4175): the RTP timestamp names
             // the frame, each line segment lands at its line and pixel offset, the marker ends it
};
const char* to_string(ReorderMode m) noexcept;

// Where the GPU reads packets from (docs/gpu.md).
enum class Staging : uint8_t {
  automatic,  // device regions: direct (GPUDirect); pinned/mapped: copy
  copy,       // batched async copies pinned host -> device staging buffers, then place
  direct,     // the kernel reads packet buffers in place (device memory, or pinned host over PCIe)
};
const char* to_string(Staging s) noexcept;

enum class LaunchMode : uint8_t {
  per_burst,   // one kernel launch per burst
  graph,       // a CUDA graph replayed per burst
  persistent,  // a long-running kernel polls a ring of burst descriptors (staging copy: it gathers them itself)
  rings,       // the queue's RX and fill rings go to the frame builder itself (docs/gpu-afxdp.md): a
               // persistent kernel (frames: gpu) or a CPU thread (frames: host) takes every packet
};
const char* to_string(LaunchMode m) noexcept;

// Where a reorder's frames are assembled.
enum class FrameTarget : uint8_t {
  gpu,   // GPU memory, by gpu::FramePipeline (every mode)
  host,  // host memory, by HostFrameAssembler (netdaq/host_frames.h; span modes): no GPU needed
};
const char* to_string(FrameTarget t) noexcept;

// GPU data plane of one rx queue: packets -> contiguous frames in GPU memory (ARCHITECTURE §5).
// Offsets count from the start of the UDP payload (segment 0 then segment 1 when split).
// job_packets auto: per-job host work (a launch, an event, a doorbell) costs about what 1,000
// packets of 1 KB take on PCIe, so jobs gather at least this many (bench/gpu/README.md). 4,096
// measured faster still at 64 x 1 KB, but a job holds its packets' buffers: pools sized for
// 1,024 would stop validating, so bigger jobs are the application's choice (job_packets: N).
inline constexpr uint32_t kAutoJobPackets = 1024;
inline constexpr uint32_t kFrameTimeoutUs = 10000;  // rx.reorder.frame_timeout_us auto, but in mode rtp_video

// An unsigned field of the UDP payload (rx.reorder.fields): `bits` bits (8, 16, 32 or 64) at
// `offset` in `byte_order`, then (value >> shift) & mask.
struct PacketField {
  uint32_t offset = 0;
  uint8_t bits = 0;  // 0: not declared
  ByteOrder byte_order = ByteOrder::big;
  uint8_t shift = 0;
  uint64_t mask = ~uint64_t{0};
  bool declared() const noexcept { return bits != 0; }
};

// mode fields: which fields say where a packet goes. frame is required, and one of index
// (slot = index, offset = index x payload_size) or byte_offset (the offset itself).
struct FieldPlacement {
  PacketField frame;
  PacketField index;
  PacketField byte_offset;
  PacketField stream;     // several sensors on one queue (default: one stream)
  PacketField marker;     // non-zero: the packet ends its frame
  PacketField timestamp;  // kept as the frame's timestamp (metadata)
};

// mode spead: the item-pointer widths come from each packet's header (64-48 or 64-40).
struct SpeadOptions {
  // An immediate item whose value names the stream (several senders on one queue); 0: the
  // packet's flow id (rx.flows) is the stream.
  uint64_t stream_item = 0;
};

// mode vita49: a frame is samples_per_frame samples of sample_bytes each; a packet's first
// sample is its fractional timestamp (TSF sample count), plus integer seconds x sample_rate
// when sample_rate is set (TSF counting samples within the second).
struct Vita49Options {
  uint32_t samples_per_frame = 0;  // required
  uint32_t sample_bytes = 4;       // bytes per sample (4: 16-bit I + 16-bit Q)
  uint64_t sample_rate = 0;        // samples per second of the integer timestamp; 0: TSF alone
};

// mode roce: one sensor's queue pair as netdaq's software receiver owns it, what an RDMA NIC
// would hold for it (the rdma engine's manual QP file: qpn, psn, ring addr/rkey/slots/stride/
// slot_size). The window [base_va, base_va + slots x stride) is `slots` frame buffers of up to
// slot_size bytes each; a WRITE to VA lands at byte (VA - base_va) % stride of the frame in slot
// (VA - base_va) / stride; frames follow one another through the slots (frame f in slot f % slots).
struct RoceQueuePair {
  uint32_t qpn = 0;        // the destination QP number the sensor sends to (24 bits; required)
  uint32_t rkey = 0;       // the rkey its RETHs must carry
  uint64_t base_va = 0;    // the window's first byte as the sensor addresses it
  uint32_t slots = 1;      // frame buffers in the window
  uint64_t stride = 0;     // bytes between slots; 0: slot_size
  uint64_t slot_size = 0;  // the largest frame (required); frame_bytes when 0
  uint32_t psn = 0;        // the first PSN the sensor sends (its sq_psn)
};

// mode roce (docs/roce-software.md).
struct RoceOptions {
  std::vector<RoceQueuePair> queue_pairs;  // one per sensor (stream = its qpn)
  bool check_icrc = true;         // needs the IP header: afxdp, dpdk, socket (raw receive)
  uint32_t mtu = 1024;            // path MTU: every WRITE FIRST / MIDDLE carries exactly this
  uint32_t metadata_bytes = 0;    // a WRITE with immediate of this many bytes carries the frame's
                                  // metadata (HSB: 128), kept with the frame, not placed; 0: placed
  uint32_t psn_window = 1024;     // PSNs behind the newest kept to tell out-of-order from duplicate
};

// mode rtp_video (docs/video.md): the stream's SDP format parameters (RFC 4175 / ST 2110-20).
enum class VideoSampling : uint8_t {
  ycbcr_422,  // SDP sampling=YCbCr-4:2:2: pgroup Cb Y0 Cr Y1 (2 pixels)
  ycbcr_444,  // YCbCr-4:4:4
  rgb,        // RGB
};
const char* to_string(VideoSampling s) noexcept;

// rx.reorder.video.unpack: planes the GPU pipeline unpacks each frame into before handing it
// out (include/netdaq/video_unpack.h's PlaneType; Frame::planes()), or none.
enum class VideoUnpack : uint8_t {
  none,    // frames hold the pixel groups only
  uint16,  // planar 16-bit integer samples
  fp16,    // planar IEEE half samples, 0..1.0
};
const char* to_string(VideoUnpack u) noexcept;

// What an interlaced stream's SRD row numbers count (the F bit names the field either way).
enum class VideoRows : uint8_t {
  field,  // lines within the field, 0 .. height/2 - 1 (SMPTE ST 2110-20; netdaq's sender)
  frame,  // lines of the frame, even in field 0, odd in field 1 (GStreamer 1.22's rtpvrawpay)
};
const char* to_string(VideoRows r) noexcept;

struct VideoOptions {
  uint32_t width = 0;        // pixels per line (required)
  uint32_t height = 0;       // lines per frame, both fields when interlaced (required)
  VideoSampling sampling = VideoSampling::ycbcr_422;
  uint8_t depth = 10;        // bits per component: 8, 10, 12 or 16
  bool interlaced = false;   // two fields per frame (SRD F bit), lines interleaved in the frame
  VideoRows rows = VideoRows::field;  // interlaced: what SRD row numbers count
  uint32_t rate_num = 0;     // exactframerate = rate_num / rate_den (e.g. 60000/1001); required
  uint32_t rate_den = 1;
  int16_t payload_type = -1; // RTP payload type the stream uses (96..127); -1: any
  VideoUnpack unpack = VideoUnpack::none;  // frames: gpu only; YCbCr-4:2:2 8/10-bit, RGB 8-bit
};

struct ReorderConfig {
  std::string name;                 // label; default "<iface>/reorder<queue>"
  uint16_t queue = 0;               // rx queue id whose packets it takes
  int gpu = 0;
  FrameTarget frames = FrameTarget::gpu;  // host: gpu, staging, launch and job keys are not read
  ReorderMode mode = ReorderMode::sequence;
  uint32_t seq_offset = 0;          // byte offset of the sequence number (mode sequence)
  uint8_t seq_bits = 32;            // 8, 16, 32 or 64 (narrow counters wrap; netdaq unwraps them)
  ByteOrder seq_byte_order = ByteOrder::big;
  uint32_t payload_offset = 0;      // first byte of samples (after any application header)
  uint32_t payload_size = 0;        // sample bytes per packet (required)
  uint32_t packets_per_frame = 0;   // required
  uint32_t max_open_frames = 4;     // frames filled at once; a newer frame closes the oldest
  uint32_t frame_buffers = 8;       // frame buffers in GPU memory (open + handed to the app)
  // An open frame is flushed this long after its first packet; 0: auto, kFrameTimeoutUs, and in
  // mode rtp_video two frame periods (an ST 2110-21 sender spreads a frame over its period).
  uint32_t frame_timeout_us = 0;
  SampleFormat input = SampleFormat::raw;
  SampleFormat output = SampleFormat::raw;
  ByteOrder sample_byte_order = ByteOrder::little;
  Staging staging = Staging::automatic;
  LaunchMode launch = LaunchMode::per_burst;
  uint32_t bursts_in_flight = 2;    // GPU jobs in flight (2 = double-buffered)
  // Packets one GPU job gathers: N: small bursts go into one job until it holds N packets or
  // is job_timeout_us old; 0: one job per burst; unset (`auto`): kAutoJobPackets, so bursts
  // of fewer packets are gathered and bigger ones go alone.
  std::optional<uint32_t> job_packets;
  uint32_t job_timeout_us = 100;
  // launch persistent: SMs its kernel occupies (one CTA of 512 threads each, which takes the
  // SM's whole register file, so no other kernel runs there while the pipeline lives). Unset
  // (`auto`): half the GPU's SMs, the other half left to the application's kernels (and
  // video.unpack); N: that many, at most the GPU's SM count.
  std::optional<uint32_t> persistent_sms;
  // Modes fields, spead and vita49 (byte placement):
  uint64_t frame_bytes = 0;         // input bytes of the largest frame (its buffer); spead: heaps
                                    // say their size, up to this; fields + index: packets_per_frame x payload_size when 0
  uint32_t granule = 0;             // bytes per presence bit (spans start on one); 0: payload_size
                                    // (fields + index), 8 (byte_offset, spead), sample_bytes (vita49)
  uint32_t max_streams = 1;         // streams (sensors) on this queue; packets of more count as no_stream
  FieldPlacement fields;
  SpeadOptions spead;
  Vita49Options vita49;
  RoceOptions roce;
  VideoOptions video;
};

// True for the modes placed by a decoder's spans (fields, spead, vita49, roce, rtp_video).
constexpr bool places_spans(ReorderMode m) noexcept {
  return m == ReorderMode::fields || m == ReorderMode::spead || m == ReorderMode::vita49 || m == ReorderMode::roce ||
         m == ReorderMode::rtp_video;
}

struct RxConfig {
  std::vector<QueueConfig> queues;
  std::vector<FlowConfig> flows;
  std::vector<ReorderConfig> reorder;
};

struct TxConfig {
  std::vector<QueueConfig> queues;
  std::string destination;    // udp://host:port (socket engine also tcp://host:port)
  double rate_mbps = 0;       // pacing (0 = unpaced); at most one of rate_mbps / rate_pps
  double rate_pps = 0;
};

enum class Protocol : uint8_t { udp, tcp };

struct InterfaceConfig {
  std::string name;
  std::string engine = "socket";  // a registered engine (netdaq::engines())
  std::string address;            // socket: udp://host:port or tcp://host:port to bind/listen;
                                  // afxdp: the netdev (e.g. eth1); dpdk: a PCI address
                                  // (0000:3b:00.0) or a virtual device with its arguments
                                  // (net_af_xdp0,iface=veth1)
  RxConfig rx;
  TxConfig tx;
  // The engines' option blocks (socket:, afxdp:, dpdk:, ...): netdaq/engines/<name>.h.
  OptionBlocks options;
};

struct LogConfig {
  std::string level = "info";  // trace | debug | info | warn | error | off
};

// Config-file path -> location of each key path (filled by the YAML loader).
using SourceMap = std::map<std::string, SourceLocation>;

struct Config {
  std::vector<MemoryRegionConfig> memory_regions;
  std::vector<InterfaceConfig> interfaces;
  LogConfig log;
  // The engines' process-wide option blocks (eal: of the dpdk engine) and the application's
  // own blocks (netdaq/app_block.h: `run:` of the netdaq CLI).
  OptionBlocks options;

  std::string source = "<c++>";  // file the config came from
  SourceMap locations;           // key path -> where it was written

  // Parse and validate a YAML file / text. Throws ConfigError listing every issue.
  static Config load(const std::string& path);
  static Config parse(const std::string& yaml_text, const std::string& source_name = "<string>");
  // Every issue found (empty when valid). Does not touch the system.
  std::vector<ConfigIssue> validate() const;
  void validate_or_throw() const;

  const MemoryRegionConfig* find_region(const std::string& name) const;
  const InterfaceConfig* find_interface(const std::string& name) const;
  // Location of a key path, or of its nearest ancestor that has one.
  SourceLocation location_of(const std::string& key) const;
};

}  // namespace netdaq
