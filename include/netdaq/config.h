// Configuration: plain structs that mirror the YAML one to one (see docs/config.md).
// Build a Config in C++ or load it from YAML; both go through the same validation.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

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
  persistent,  // a long-running kernel polls a ring of burst descriptors (needs staging: direct)
};
const char* to_string(LaunchMode m) noexcept;

// GPU data plane of one rx queue: packets -> contiguous frames in GPU memory (ARCHITECTURE §5).
// Offsets count from the start of the UDP payload (segment 0 then segment 1 when split).
struct ReorderConfig {
  std::string name;                 // label; default "<iface>/reorder<queue>"
  uint16_t queue = 0;               // rx queue id whose packets it takes
  int gpu = 0;
  ReorderMode mode = ReorderMode::sequence;
  uint32_t seq_offset = 0;          // byte offset of the sequence number
  uint8_t seq_bits = 32;            // 8, 16, 32 or 64 (narrow counters wrap; netdaq unwraps them)
  ByteOrder seq_byte_order = ByteOrder::big;
  uint32_t payload_offset = 0;      // first byte of samples (after any application header)
  uint32_t payload_size = 0;        // sample bytes per packet (required)
  uint32_t packets_per_frame = 0;   // required
  uint32_t max_open_frames = 4;     // frames filled at once; a newer frame closes the oldest
  uint32_t frame_buffers = 8;       // frame buffers in GPU memory (open + handed to the app)
  uint32_t frame_timeout_us = 10000;  // an open frame is flushed this long after its first packet
  SampleFormat input = SampleFormat::raw;
  SampleFormat output = SampleFormat::raw;
  ByteOrder sample_byte_order = ByteOrder::little;
  Staging staging = Staging::automatic;
  LaunchMode launch = LaunchMode::per_burst;
  uint32_t bursts_in_flight = 2;    // GPU jobs in flight (2 = double-buffered)
  uint32_t job_packets = 0;         // 0: one GPU job per burst; N: gather small bursts into one
                                    // job until it holds N packets or is job_timeout_us old
  uint32_t job_timeout_us = 100;
};

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

// Options of the socket engine (ignored by rdma; on an afxdp or dpdk interface, options that
// differ from these defaults are a validation error).
struct SocketOptions {
  bool gro = true;                // UDP GRO on receive when the kernel has it
  bool gso = true;                // UDP GSO on send when the kernel has it
  uint32_t rcvbuf = 32u << 20;    // SO_RCVBUF (bytes; raised with SO_RCVBUFFORCE as root)
  uint32_t sndbuf = 8u << 20;
  uint32_t busy_poll_us = 0;      // SO_BUSY_POLL
  std::string multicast_interface;  // netdev to join the group on (address is a group)
  uint32_t tcp_max_message = 0;   // TCP: largest message accepted (0 = payload buf_size)
  uint32_t reconnect_ms = 200;    // TCP client: delay between reconnect attempts
};

// Options of the afxdp engine; docs/afxdp-engine.md. On another engine's interface, options
// that differ from these defaults are a validation error.
enum class XdpAttach : uint8_t {
  automatic,  // native (driver) XDP, generic (skb) XDP when the driver has none
  native,     // driver XDP only: fail if the driver cannot
  generic,    // skb XDP: every driver, slower
};
const char* to_string(XdpAttach a) noexcept;

enum class XskMode : uint8_t {
  automatic,  // zero-copy when the driver can, else copy (the reason is logged)
  zero_copy,  // fail if the driver cannot
  copy,       // the kernel copies packets into the UMEM
};
const char* to_string(XskMode m) noexcept;

struct AfxdpOptions {
  XdpAttach attach = XdpAttach::automatic;
  XskMode mode = XskMode::automatic;
  bool need_wakeup = true;        // XDP_USE_NEED_WAKEUP: syscalls only when the kernel asks
  uint32_t busy_poll_us = 0;      // SO_PREFER_BUSY_POLL + SO_BUSY_POLL (0 = off)
  uint32_t busy_poll_budget = 64; // SO_BUSY_POLL_BUDGET (packets per busy poll)
  // Ring sizes: descriptors, each a power of two 64..16384.
  uint32_t rx_ring = 2048;
  uint32_t fill_ring = 2048;      // buffers each rx queue lends the kernel (<= its region's num_bufs;
                                  // counted in the pool budget)
  uint32_t tx_ring = 2048;        // packets in flight per tx queue (counted in the pool budget)
  uint32_t comp_ring = 2048;      // <= the num_bufs of each tx queue's region
  // TX: Ethernet/IP/UDP headers the engine writes in front of each payload.
  std::string dst_mac;            // default: the neighbour table entry of tx.destination
  std::string src_ip;             // default: the interface's first address of the family
  uint16_t src_port = 0;          // default: tx.destination's port
};

// Options of the dpdk engine's port; docs/dpdk-engine.md. On another engine's interface,
// options that differ from these defaults are a validation error.
enum class DpdkLoopback : uint8_t {
  none,
  software,  // the engine hands tx bursts to the rx queue of the same id (no NIC involved)
  hardware,  // the port's own loopback (rte_eth_conf.lpbk_mode = 1), where the PMD has one
};
const char* to_string(DpdkLoopback l) noexcept;

struct DpdkOptions {
  uint16_t rx_desc = 1024;        // descriptors per rx queue (64..32768)
  uint16_t tx_desc = 1024;        // descriptors per tx queue (counted in the pool budget)
  uint32_t mtu = 0;               // 0: leave the port's MTU
  bool promiscuous = true;
  bool isolate = false;           // rte_flow isolated mode: only the flows reach netdaq, the
                                  // rest goes to the kernel (PMDs with a kernel side: mlx5, tap)
  DpdkLoopback loopback = DpdkLoopback::none;
  bool tx_checksum_offload = true;  // IPv4/UDP checksums by the NIC where it can, else by the CPU
  uint32_t mempool_cache = 256;   // mbufs cached per lcore (0..512)
  bool raw_frames = false;        // rx: hand over whole Ethernet frames (any protocol, e.g.
                                  // eCPRI) instead of UDP payloads; no software flow matching
  // TX: Ethernet/IPv4/UDP headers the engine writes in front of each payload.
  std::string dst_mac;            // required for tx (DPDK has no neighbour table)
  std::string src_ip;             // required for tx
  uint16_t src_port = 0;          // default: tx.destination's port
};

struct InterfaceConfig {
  std::string name;
  std::string engine = "socket";  // socket | afxdp | dpdk | rdma
  std::string address;            // socket: udp://host:port or tcp://host:port to bind/listen;
                                  // afxdp: the netdev (e.g. eth1); dpdk: a PCI address
                                  // (0000:3b:00.0) or a virtual device with its arguments
                                  // (net_af_xdp0,iface=veth1)
  RxConfig rx;
  TxConfig tx;
  SocketOptions socket;
  AfxdpOptions afxdp;
  DpdkOptions dpdk;
};

// DPDK's environment (EAL), one per process: the first Session with a dpdk interface
// initialises it from its config; later sessions must ask for the same EAL or none.
struct EalConfig {
  std::vector<int> cores;         // CPUs EAL lcores run on (-l); default: main_core only
  int main_core = -1;             // --main-lcore; default: first of cores, else the first CPU
                                  // this process may run on
  bool hugepages = true;          // false: --no-huge (plain memory; slower, vdevs only)
  uint32_t memory_mb = 256;       // memory EAL reserves for mbuf headers, rings and queues
  std::string file_prefix;        // default netdaq-<pid>: processes never share EAL files
  std::vector<std::string> allow; // PCI devices EAL may use besides the dpdk interfaces' own
  std::vector<std::string> vdevs; // virtual devices besides the dpdk interfaces' own
  std::vector<std::string> args;  // further EAL arguments, verbatim (e.g. --log-level=pmd,8)
  bool operator==(const EalConfig&) const = default;
};

// What `netdaq run` does with the configured queues (ignored by the library).
struct RunConfig {
  double duration_s = 5;           // 0 = until Ctrl-C
  uint64_t tx_packets = 0;         // packets each tx queue sends (0 = for duration_s)
  uint32_t tx_payload_size = 1472; // bytes per datagram / message (netdaq payload format)
  uint32_t stats_interval_ms = 1000;
  uint32_t drain_ms = 200;         // keep receiving after senders stop
};

struct LogConfig {
  std::string level = "info";  // trace | debug | info | warn | error | off
};

// Config-file path -> location of each key path (filled by the YAML loader).
using SourceMap = std::map<std::string, SourceLocation>;

struct Config {
  std::vector<MemoryRegionConfig> memory_regions;
  std::vector<InterfaceConfig> interfaces;
  RunConfig run;
  LogConfig log;
  EalConfig eal;

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
