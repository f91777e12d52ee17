// `netdaq bench --ping-pong` as the user sees it: the headline, the result line, the JSON and
// the verdict. The quantity is named in both forms ("round trip / 2"), so that a comparison
// with ib_send_lat's t_typical can check it compares like with like.
#include <cstdio>

#include "bench_report.h"
#include "format.h"
#include "report.h"

namespace netdaq::cli {

namespace {

constexpr const char* kQuantity = "round trip / 2";

double us(double ns) { return ns / 1e3; }

nlohmann::ordered_json samples_json(const std::vector<uint64_t>& v) {
  if (v.empty()) return nullptr;
  return {{"min", us(double(PingPongResult::percentile_of(v, 0)))},
          {"p50", us(PingPongResult::median_of(v))},  // exact, the mean of the middle two for an even count (ib_send_lat's)
          {"p99", us(double(PingPongResult::percentile_of(v, 99)))},
          {"p99.9", us(double(PingPongResult::percentile_of(v, 99.9)))},
          {"max", us(double(PingPongResult::percentile_of(v, 100)))},
          {"mean", us(PingPongResult::mean_of(v))}};
}

nlohmann::ordered_json total_drops(const std::vector<QueueStats>& stats) {
  QueueStats total;
  for (const QueueStats& s : stats)
    for (size_t i = 0; i < kDropReasons; ++i) total.drops[i] += s.drops[i];
  return drops_json(total);
}

nlohmann::ordered_json ping_pong_json(const BenchOptions& o, const PingPongResult& r, PingPongRole role) {
  return {{"netdaq", version()},
          {"command", "bench"},
          {"measure", "ping-pong"},
          {"protocol", o.protocol},
          {"size", o.size},
          {"quantity", kQuantity},
          {"role", role_name(role)},
          {"messages", r.messages},
          {"returned", r.returned},
          {"loss", r.lost()},
          {"lost_there", r.lost_there},
          {"lost_back", r.lost_back},
          {"lost_either", r.lost_either},
          {"late", r.late},
          {"malformed", r.malformed},
          {"warmed_up", r.warmed_up},
          {"interrupted", r.interrupted},
          {"seconds", r.seconds},
          {"reply_timeout", o.reply_timeout},
          {"address", o.address},
          {"echo_address", o.echo_address},
          {"echo_destination", o.echo_destination},
          {"latency_us", samples_json(r.half_rtt_ns)},
          {"one_way_us", samples_json(r.one_way_ns)},  // --role both: A's send to B's receipt, one clock
          {"drops", total_drops(r.stats)}};
}

}  // namespace

void print_ping_pong_headline(std::FILE* out, const BenchOptions& o) {
  std::fprintf(out, "netdaq bench: %s %u B ping-pong, %s messages, one in flight, busy polling; back via %s\n",
               o.protocol.c_str(), o.size, format_count(o.count).c_str(), o.echo_destination.c_str());
}

const char* role_name(PingPongRole role) noexcept {
  return role == PingPongRole::client ? "client" : role == PingPongRole::server ? "server" : "both";
}

bool report_ping_pong(std::FILE* out, const BenchOptions& o, const PingPongResult& r, PingPongRole role) {
  std::fprintf(out, "\n%s %u B ping-pong, %s: ", o.protocol.c_str(), o.size, kQuantity);
  if (r.half_rtt_ns.empty())
    std::fprintf(out, "no sample");
  else
    std::fprintf(out, "p50 %.3f us, p99 %.3f us, p99.9 %.3f us, min %.3f us, max %.3f us", us(r.median_ns()),
                 us(double(r.percentile_ns(99))), us(double(r.percentile_ns(99.9))), us(double(r.percentile_ns(0))),
                 us(double(r.percentile_ns(100))));
  if (!r.one_way_ns.empty())
    std::fprintf(out, "; one way A -> B (one clock): p50 %.3f us, p99 %.3f us", us(PingPongResult::median_of(r.one_way_ns)),
                 us(double(PingPongResult::percentile_of(r.one_way_ns, 99))));
  std::fprintf(out, "; %s messages, %s returned, lost %s (on the way there %s, back %s, either way %s), late %s, "
               "malformed %s\n", format_count(r.messages).c_str(), format_count(r.returned).c_str(),
               format_count(r.lost()).c_str(), format_count(r.lost_there).c_str(), format_count(r.lost_back).c_str(),
               format_count(r.lost_either).c_str(), format_count(r.late).c_str(), format_count(r.malformed).c_str());
  if (!r.warmed_up) std::fprintf(out, "(the uncounted warm-up message did not come back either)\n");
  std::fflush(out);
  if (o.json) write_file("-", ping_pong_json(o, r, role).dump(2) + "\n");
  if (r.lost() == 0 && r.returned > 0) return true;
  // Always on stderr, also with --quiet: a latency over the messages that came back would hide
  // the ones that did not.
  std::fprintf(stderr, "netdaq bench: FAILED: %s of %s ping-pong messages lost (on the way there %s, back %s; "
               "each way waits %.3g s)%s\n", format_count(r.lost()).c_str(), format_count(r.messages).c_str(),
               format_count(r.lost_there).c_str(), format_count(r.lost_back).c_str(), o.reply_timeout,
               r.returned ? "" : ": no message came back");
  return false;
}

bool report_ping_pong_server(std::FILE* out, const BenchOptions& o, const PingPongServerOptions& so,
                             const PingPongServerResult& r) {
  const char* format = so.format == EchoFormat::sockperf ? "sockperf" : "netdaq";
  std::fprintf(out, "\n%s ping-pong server (%s messages): %s received, %s echoed, %s malformed, %s unsent%s\n",
               o.protocol.c_str(), format, format_count(r.received).c_str(), format_count(r.echoed).c_str(),
               format_count(r.malformed).c_str(), format_count(r.unsent).c_str(),
               r.interrupted ? " (stopped by a signal)" : "");
  std::fflush(out);
  if (o.json) {
    const nlohmann::ordered_json j = {{"netdaq", version()},    {"command", "bench"},
                                      {"measure", "ping-pong"}, {"role", "server"},
                                      {"protocol", o.protocol}, {"echo_format", format},
                                      {"received", r.received}, {"echoed", r.echoed},
                                      {"malformed", r.malformed}, {"unsent", r.unsent},
                                      {"interrupted", r.interrupted}, {"seconds", r.seconds},
                                      {"address", o.address},   {"echo_destination", o.echo_destination},
                                      {"drops", total_drops(r.stats)}};
    write_file("-", j.dump(2) + "\n");
  }
  if (r.malformed == 0 && r.unsent == 0) return true;
  std::fprintf(stderr, "netdaq bench: FAILED: ping-pong server: %s malformed, %s not echoed\n",
               format_count(r.malformed).c_str(), format_count(r.unsent).c_str());
  return false;
}

}  // namespace netdaq::cli
