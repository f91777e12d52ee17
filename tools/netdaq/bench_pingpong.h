// `netdaq bench --ping-pong`: latency as ib_send_lat and sockperf measure it. Busy polling,
// one message in flight: A sends to B ("bench-tx" -> "bench-rx"), B sends it back to A
// ("bench-echo-tx" -> "bench-echo-rx"), and half of each round trip is one sample, the
// quantity ib_send_lat reports as t_typical (its median) and sockperf as its latency. A
// message that does not come back within the reply timeout is lost, never waited for again.
// --role both (default) runs A and B in one thread; --role client (A) and --role server (B)
// run them as two processes on two cores, as sockperf's client and server run.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "netdaq/netdaq.h"

namespace netdaq::cli {

// Every sample is kept (8 bytes each, reserved before the first message) for an exact median.
inline constexpr uint64_t kMaxPingPongCount = 1'000'000;

struct PingPongOptions {
  uint64_t count = 1000;       // messages (round trips) measured
  uint32_t size = 64;          // payload bytes
  bool verify = true;          // every pattern byte checked on both ends (else headers only)
  uint64_t reply_ns = 1'000'000'000;    // each way of a message: lost after this long
  uint64_t connect_ns = 10'000'000'000;  // the warm-up's sends: tcp/rdma connections coming up
  double duration_s = 0;       // 0: no time limit (the count and the reply timeout bound the run)
};

// Which ends this process runs (--role).
enum class PingPongRole { both, client, server };
// What the server echoes (--echo-format): netdaq payloads (checked), or sockperf's messages
// (its 14-byte header: sequence, flags, length; sent back with the client flag cleared, as
// `sockperf server` does), so that `sockperf ping-pong --client_port` can be the client.
enum class EchoFormat { netdaq, sockperf };

struct PingPongResult {
  uint64_t messages = 0;             // sent A -> B (or given up unsent: counted lost there)
  uint64_t returned = 0;             // came back to A, checked
  uint64_t lost_there = 0;           // never reached B (or never left A)
  uint64_t lost_back = 0;            // reached B, never came back to A
  uint64_t lost_either = 0;          // --role client: not back in time, the way unknown (B is elsewhere)
  uint64_t late = 0;                 // arrived after it was counted lost (discarded)
  uint64_t malformed = 0;            // not the payload sent (wrong size, pattern or magic)
  bool warmed_up = false;            // the uncounted first round trip came back
  bool interrupted = false;          // Ctrl-C or --duration ended it before --count
  double seconds = 0;                // the measured messages, first send to last return
  std::vector<uint64_t> half_rtt_ns; // one sample per returned message, sorted
  // --role both (A and B read one clock): A's send to B's poll returning the message, per
  // returned message, sorted; empty for --role client (B's clock is in another process)
  std::vector<uint64_t> one_way_ns;
  std::vector<QueueStats> stats;     // the four queues' counters after the run

  uint64_t lost() const noexcept { return lost_there + lost_back + lost_either; }
  // ib_send_lat's median: the middle sample, or the mean of the two middle ones (even count)
  double median_ns() const noexcept { return median_of(half_rtt_ns); }
  // Nearest rank, p in [0, 100]; 0 without samples.
  uint64_t percentile_ns(double p) const noexcept { return percentile_of(half_rtt_ns, p); }
  double mean_ns() const noexcept { return mean_of(half_rtt_ns); }

  // The same of any sorted samples (half_rtt_ns, one_way_ns).
  static double median_of(const std::vector<uint64_t>& sorted) noexcept;
  static uint64_t percentile_of(const std::vector<uint64_t>& sorted, double p) noexcept;
  static double mean_of(const std::vector<uint64_t>& v) noexcept;
};

// The four interfaces' names in the session (bench_config.cpp builds them).
inline constexpr const char* kEchoRx = "bench-echo-rx";
inline constexpr const char* kEchoTx = "bench-echo-tx";

// Runs the ping-pong over the session's bench-tx -> bench-rx and bench-echo-tx ->
// bench-echo-rx (--role client: bench-tx and bench-echo-rx only, B being another process).
// Throws Error when an interface is missing.
PingPongResult run_ping_pong(Session& session, const PingPongOptions& o, PingPongRole role = PingPongRole::both);

// --role server: B alone, bench-rx -> bench-echo-tx, until a stop signal, --duration,
// --count messages echoed or --idle-timeout after the last message.
struct PingPongServerOptions {
  EchoFormat format = EchoFormat::netdaq;
  bool verify = true;          // netdaq format: every pattern byte checked before the echo
  uint64_t count = 0;          // 0: no limit
  double duration_s = 0;       // 0: no limit
  double idle_s = 0;           // 0: no limit; counted from the last message (not before the first)
  uint64_t send_ns = 1'000'000'000;  // an echo not taken by the engine in this time is unsent
};

struct PingPongServerResult {
  uint64_t received = 0;   // datagrams that reached B
  uint64_t echoed = 0;     // sent back
  uint64_t malformed = 0;  // not a message of the format (not echoed), or its pattern bytes wrong (echoed)
  uint64_t unsent = 0;     // well formed, but the engine took no echo in time
  bool interrupted = false;  // a stop signal ended it
  double seconds = 0;        // first message to last echo
  std::vector<QueueStats> stats;
};

// open_echo opens the way back (bench-echo-tx) when the first message has arrived, not
// before: a tcp or rdma way back connects to the client's listener, which is up once the
// client has sent (a client's receivers listen before its senders connect). It is called
// once, outside the loop's steady state; its session's counters join the result's.
PingPongServerResult run_ping_pong_server(Session& rx_session, const std::function<Session&()>& open_echo,
                                          const PingPongServerOptions& o);

struct BenchOptions;
// --role server's result line and (--json) JSON (bench_pingpong_report.cpp). True when every
// well-formed message was echoed and none was malformed.
bool report_ping_pong_server(std::FILE* out, const BenchOptions& o, const PingPongServerOptions& so,
                             const PingPongServerResult& r);
const char* role_name(PingPongRole role) noexcept;

}  // namespace netdaq::cli
