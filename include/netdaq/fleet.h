// Frames between nodes over UCX (docs/fleet.md): FrameSink sends completed frames, or the
// fragments of them a route names, to remote receivers; FrameReceiver accepts frames from many
// senders; EventBuilder assembles the fragments of one frame from N ingest nodes into one
// buffer. UCX picks shared memory or TCP underneath (Transport).
//
// Back-pressure is by credits: a receiver returns a fragment's credit when the application
// releases what holds it, and a sender keeps at most SinkConfig::credits fragments in flight per
// receiver, so no side's memory grows without bound. Every fragment a sink is given has exactly
// one fate, counted at the sink (SinkDestinationStats): acked, refused by the receiver, dropped
// for want of a credit, lost because the receiver was down, or lost in flight when its
// connection failed. Setup throws netdaq::Error; send/progress/pop/release never throw,
// lock or allocate beyond UCX's own request pools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace netdaq::fleet {

// "HOST:PORT" ("[v6]:PORT" too), parsed once.
struct Address {
  std::string host;
  uint16_t port = 0;
  std::string text() const;  // back to "HOST:PORT"
};
// Throws std::invalid_argument saying what is wrong and what is allowed.
Address parse_address(std::string_view text);
// A comma-separated list of addresses (builders in index order).
std::vector<Address> parse_address_list(std::string_view text);

// What UCX may use (its UCX_TLS): its own choice, TCP only, or shared memory (TCP only to
// connect). An environment UCX_TLS overrides nothing: the config decides.
enum class Transport : uint8_t { automatic, tcp, shm };
// Which receiver gets what: the whole frame to receiver frame % N, to stream % N, or the frame
// cut into N byte ranges, range i to receiver i (a corner turn).
enum class Route : uint8_t { frame, stream, bytes };
// A receiver without a free credit: drop the fragment (counted no_credit) or wait for one, up
// to SinkConfig::wait_ms (then dropped and counted the same way).
enum class WhenFull : uint8_t { drop, wait };

const char* to_string(Transport t) noexcept;
const char* to_string(Route r) noexcept;
const char* to_string(WhenFull w) noexcept;

// Travels with every fragment.
struct FrameMeta {
  uint64_t stream = 0;
  uint64_t frame = 0;          // the frame number
  uint64_t offset = 0;         // where this fragment's bytes go in the built frame
  uint64_t frame_offset = 0;   // where they were in the ingest's frame (route bytes: its range)
  uint64_t built_bytes = 0;    // the built frame's size (every node's fragment)
  uint64_t bytes = 0;          // this fragment's size
  uint64_t bytes_present = 0;  // of those, how many arrived at the ingest (missing ones are zero)
  uint64_t first_ns = 0;       // CLOCK_REALTIME: the ingest's first and last packet of the frame
  uint64_t last_ns = 0;
  uint64_t sent_ns = 0;        // CLOCK_REALTIME: when the sink sent it
  uint32_t node = 0;           // the ingest node that sent it
  uint32_t granule = 0;        // bytes per presence bit; 0: no presence bits came with it
  bool complete = false;       // every byte of the fragment arrived at the ingest
};

// A frame handed to FrameSink::send. Its bytes stay valid until the sink hands `token` back
// from done().
struct OutFrame {
  uint64_t stream = 0;
  uint64_t frame = 0;
  std::span<const std::byte> bytes;
  std::span<const uint64_t> presence;  // bit g: granule g arrived (empty: none travel)
  uint32_t granule = 0;
  uint64_t bytes_present = 0;
  bool complete = true;
  uint64_t first_ns = 0, last_ns = 0;
  uint64_t token = 0;
};

struct SinkConfig {
  std::vector<Address> destinations;  // receiver i of the route
  uint32_t node = 0;                  // this ingest node's index
  uint32_t nodes = 1;                 // ingest nodes whose fragments make one built frame
  Route route = Route::frame;
  uint32_t credits = 8;               // fragments in flight per destination
  WhenFull when_full = WhenFull::drop;
  uint32_t wait_ms = 1000;
  uint32_t reconnect_ms = 200;        // a destination that is down is tried again this often
  Transport transport = Transport::automatic;
  // The network devices UCX may use (UCX_NET_DEVICES, "eth1,eth2"); "": the devices this host
  // routes the destinations through (UCX would otherwise offer every device, and a peer may
  // pick one it cannot reach).
  std::string devices;
};

// fragments == acked + refused + no_credit + peer_down + in_flight_lost + in_flight.
struct SinkDestinationStats {
  std::string address;
  bool connected = false;
  uint64_t fragments = 0;       // routed here
  uint64_t acked = 0;           // placed by the receiver and released by its application
  uint64_t bytes_acked = 0;
  uint64_t refused = 0;         // the receiver said it could not take it (no buffer, late, too big)
  uint64_t no_credit = 0;       // dropped: no credit left (when_full drop, or the wait ran out)
  uint64_t peer_down = 0;       // lost: not connected when it was to be sent
  uint64_t in_flight_lost = 0;  // lost: the connection failed before its credit came back
  uint64_t in_flight = 0;       // sent, fate not known yet
  uint64_t connects = 0, disconnects = 0;
  uint64_t acked_connection = 0;  // of acked: over the current (or last) connection, so a
                                  // restarted receiver's own count can be matched
};

struct SinkStats {
  uint64_t frames = 0;               // frames given to send()
  SinkDestinationStats total;        // summed over destinations (address "total")
  std::vector<SinkDestinationStats> destinations;
};

class FrameSink {
 public:
  explicit FrameSink(SinkConfig cfg);  // connects what it can now; the rest later
  ~FrameSink();
  FrameSink(const FrameSink&) = delete;
  FrameSink& operator=(const FrameSink&) = delete;

  // Sends f's fragments to the route's destinations. when_full wait: may progress and wait.
  void send(const OutFrame& f) noexcept;
  // Progresses UCX: completions, credits, failures, reconnects. Call often.
  void progress() noexcept;
  // The token of a frame whose bytes the sink no longer reads, if any.
  bool done(uint64_t& token) noexcept;
  // Progresses until nothing is in flight (credits back) or timeout_ms; true when drained.
  bool drain(uint32_t timeout_ms) noexcept;
  SinkStats stats() const;
  const SinkConfig& config() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct ReceiverConfig {
  Address listen;                 // port 0: any free port (port() says which)
  uint64_t max_bytes = 1 << 20;   // the largest frame held (FrameReceiver: fragment; EventBuilder: built frame)
  uint32_t buffers = 32;          // frames held at once: memory = buffers x max_bytes
  Transport transport = Transport::automatic;
  std::string devices;            // as SinkConfig's; "": the listen address's device (any: all)
};

// A frame from FrameReceiver::pop(); valid until release().
struct InFrame {
  FrameMeta meta;
  std::span<const std::byte> bytes;
  std::span<const uint64_t> presence;  // as sent (empty: none travelled)
  uint32_t buffer = 0;
};

struct ReceiverStats {
  uint64_t connections = 0;   // senders accepted so far
  uint64_t senders = 0;       // connected now
  uint64_t disconnects = 0;
  uint64_t fragments = 0;     // arrived (placed + every refusal below)
  uint64_t placed = 0;
  uint64_t bytes = 0;         // placed bytes
  uint64_t no_buffer = 0;     // refused: every buffer held by the application
  uint64_t too_big = 0;       // refused: larger than max_bytes, or past the built frame's end
  uint64_t malformed = 0;     // refused: a header that is not a netdaq fleet header
  uint64_t late = 0;          // EventBuilder: its frame was already handed out
  uint64_t duplicate = 0;     // EventBuilder: its node's fragment of that frame came already
  uint64_t receive_failed = 0;  // the data transfer itself failed (sender died mid-transfer)
};

class FrameReceiver {
 public:
  explicit FrameReceiver(ReceiverConfig cfg);
  ~FrameReceiver();
  FrameReceiver(const FrameReceiver&) = delete;
  FrameReceiver& operator=(const FrameReceiver&) = delete;

  uint16_t port() const noexcept;
  void progress() noexcept;
  bool pop(InFrame& out) noexcept;
  void release(const InFrame& f) noexcept;  // frees its buffer and returns the sender's credit
  ReceiverStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct BuilderConfig {
  ReceiverConfig receiver;     // max_bytes: the largest built frame
  uint32_t nodes = 1;          // fragments of one built frame (1..64)
  uint32_t timeout_ms = 500;   // a frame still missing fragments this long after its first
                               // fragment is handed out incomplete
};

// A built frame from EventBuilder::pop(); valid until release().
struct BuiltFrame {
  uint64_t stream = 0;
  uint64_t frame = 0;
  std::span<const std::byte> bytes;   // built_bytes long; a missing fragment's bytes are zero
  uint64_t nodes_present = 0;         // bit n: node n's fragment came
  bool complete = false;              // every node's fragment came, each complete
  std::span<const FrameMeta> fragments;  // by node; fragments[n] valid where bit n is set
  uint64_t first_ns = 0, last_ns = 0;    // the earliest first_ns, the latest last_ns
  uint32_t buffer = 0;
};

struct BuilderNodeStats {
  uint32_t node = 0;
  uint64_t fragments = 0;   // placed into a built frame
  uint64_t bytes = 0;
  uint64_t incomplete = 0;  // placed, but incomplete at its ingest
  uint64_t missing = 0;     // frames handed out without this node's fragment (each counted once)
  uint64_t late = 0, duplicate = 0;
};

struct BuilderStats {
  uint64_t frames = 0;               // handed out (complete + incomplete)
  uint64_t frames_complete = 0;
  uint64_t frames_incomplete = 0;    // some node's fragment missing or incomplete
  uint64_t frames_timed_out = 0;     // handed out by the timeout (or flush) with fragments missing
  ReceiverStats receiver;
  std::vector<BuilderNodeStats> nodes;
};

class EventBuilder {
 public:
  explicit EventBuilder(BuilderConfig cfg);
  ~EventBuilder();
  EventBuilder(const EventBuilder&) = delete;
  EventBuilder& operator=(const EventBuilder&) = delete;

  uint16_t port() const noexcept;
  void progress() noexcept;                     // also hands out frames that timed out
  bool pop(BuiltFrame& out) noexcept;           // complete frames, and timed-out ones
  void release(const BuiltFrame& f) noexcept;   // frees its buffer; returns its fragments' credits
  void flush() noexcept;                        // every open frame is handed out now
  BuilderStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace netdaq::fleet
