#include "st2110_pacing.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <thread>
#include <vector>

#include "rtp_arrivals.h"
#include "sensors/video_sender.h"

namespace ndqbench {

namespace {

constexpr uint16_t kPortPacing = 5014;

// GRO off on the receiving veth while the section runs (a coalesced batch carries one receive
// time for all its datagrams, which would read as gaps of 0), as it was after.
class GroOff {
 public:
  explicit GroOff(ndqtest::NetnsLab& lab) : lab_(lab) {
    std::string out;
    lab_.exec_in(lab_.a().ns, {"ethtool", "-k", lab_.a().veth}, &out);
    was_on_ = out.find("generic-receive-offload: on") != std::string::npos;
    if (was_on_) lab_.exec_in(lab_.a().ns, {"ethtool", "-K", lab_.a().veth, "gro", "off"});
  }
  ~GroOff() {
    if (was_on_) lab_.exec_in(lab_.a().ns, {"ethtool", "-K", lab_.a().veth, "gro", "on"});
  }
  GroOff(const GroOff&) = delete;
  GroOff& operator=(const GroOff&) = delete;

 private:
  ndqtest::NetnsLab& lab_;
  bool was_on_ = false;
};

}  // namespace

PacingResult measure_pacing(ndqtest::NetnsLab& lab, const netdaq::VideoOptions& v, uint32_t payload,
                            uint32_t frames, int sender_cpu) {
  PacingResult r;
  netdaq::sensors::VideoSenderConfig c;
  c.video = v;
  c.payload_size = payload;
  const netdaq::sensors::VideoSender s(c);
  const netdaq::sensors::St2110Timing t = s.timing();
  r.t_drain_ns = t.t_drain_ns;
  r.t_frame_ns = t.t_frame_ns;
  const uint64_t count = uint64_t{frames} * s.packets_per_frame();
  const GroOff gro_off(lab);

  const int fd = lab.run_in(lab.a().ns, [] { return ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0); });
  if (fd < 0) return r.error = std::string("socket: ") + std::strerror(errno), r;
  int rcvbuf = 256 << 20;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(kPortPacing);
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    r.error = std::string("timestamping socket: ") + std::strerror(errno);
    ::close(fd);
    return r;
  }
  std::vector<netdaq::sensors::St2110Arrival> got;
  std::atomic<bool> sender_done{false};
  std::thread rx([&] {
    got = ndqtest::receive_rtp_arrivals(fd, count, std::chrono::steady_clock::now() + std::chrono::minutes(2), &sender_done);
  });
  std::vector<std::string> argv;
  if (sender_cpu >= 0) argv = {"taskset", "-c", std::to_string(sender_cpu)};
  const std::string rate = std::to_string(v.rate_num) + "/" + std::to_string(v.rate_den);
  for (const std::string& x : {std::string(NETDAQ_CLI), std::string("video-send"), std::string("--destination"),
                               "udp://" + lab.a().ip4 + ":" + std::to_string(kPortPacing), std::string("--width"),
                               std::to_string(v.width), std::string("--height"), std::to_string(v.height),
                               std::string("--depth"), std::to_string(v.depth), std::string("--rate"), rate,
                               std::string("--payload-size"), std::to_string(payload), std::string("-n"),
                               std::to_string(frames), std::string("--pattern-frames"), std::string("2"),
                               std::string("--pacing"), std::string("gapped"), std::string("--epoch"),
                               std::string("tai"), std::string("--json")})
    argv.push_back(x);
  const int status = lab.exec_in(lab.b().ns, argv, &r.sender_json);
  sender_done = true;
  rx.join();
  ::close(fd);
  r.sent = count;
  r.received = got.size();
  if (status != 0) r.error = "video-send exited " + std::to_string(status) + ": " + r.sender_json;
  else if (r.received != r.sent) {  // where they went: the veths' counters and the namespace's UDP ones
    std::string o, where;
    lab.exec_in(lab.a().ns, {"ip", "-s", "-o", "link", "show", "dev", lab.a().veth}, &o), where += o;
    lab.exec_in(lab.b().ns, {"ip", "-s", "-o", "link", "show", "dev", lab.b().veth}, &o), where += o;
    lab.exec_in(lab.a().ns, {"sh", "-c", "grep Udp: /proc/net/snmp"}, &o), where += o;
    r.error = "received " + std::to_string(r.received) + " of " + std::to_string(r.sent) + " packets\n" + where +
              "video-send: " + r.sender_json;
  }

  ndqtest::to_tai(got);
  r.gaps = netdaq::sensors::st2110_gaps(got, t.t_drain_ns);
  auto checks = netdaq::sensors::check_st2110_arrivals(got, t);
  if (checks.size() > 2) {  // whole frames: the first and the last may be cut
    checks.pop_back();
    checks.erase(checks.begin());
  }
  r.models = netdaq::sensors::summarize(checks);
  return r;
}

std::string pacing_text(const std::string& format, const PacingResult& r) {
  const auto& g = r.gaps;
  const auto& m = r.models;
  char b[1024];
  std::snprintf(b, sizeof b,
                "%-8s (p) video-send gapped --epoch tai: %llu of %llu packets; in-frame gap median %.2f us (T_DRAIN %.2f us), "
                "%.0f%% within +-50%%, %.0f%% under half; frame span median %.0f us, period %.1f us\n"
                "%-8s     ST 2110-21 models: %zu frames: %zu narrow, %zu wide, %zu failed%s%s; C_INST max %lld, VRX %lld..%lld, "
                "FPT median %.1f us\n",
                format.c_str(), (unsigned long long)r.received, (unsigned long long)r.sent, g.median_gap_ns / 1e3,
                r.t_drain_ns / 1e3, 100 * g.within_half, 100 * g.under_half, g.median_span_ns / 1e3,
                g.median_period_ns / 1e3, format.c_str(), m.frames, m.narrow, m.wide, m.failed,
                m.first_cause.empty() ? "" : " (first: ", m.first_cause.empty() ? "" : (m.first_cause + ")").c_str(),
                (long long)m.cinst_max, (long long)m.vrx_min, (long long)m.vrx_max, m.fpt_median_ns / 1e3);
  return b;
}

std::string pacing_json(const PacingResult& r) {
  const auto& g = r.gaps;
  const auto& m = r.models;
  std::ostringstream j;
  j << "{\"sent\":" << r.sent << ",\"received\":" << r.received << ",\"t_drain_ns\":" << r.t_drain_ns
    << ",\"t_frame_ns\":" << r.t_frame_ns << ",\"frames\":" << g.frames << ",\"median_gap_ns\":" << g.median_gap_ns
    << ",\"within_half\":" << g.within_half << ",\"under_half\":" << g.under_half
    << ",\"median_span_ns\":" << g.median_span_ns << ",\"median_period_ns\":" << g.median_period_ns
    << ",\"median_vgap_ns\":" << g.median_vgap_ns << ",\"gap_histogram_quarter_t_drain\":[";
  for (size_t i = 0; i < 12; ++i) j << (i ? "," : "") << g.histogram[i];
  j << "],\"models\":{\"frames\":" << m.frames << ",\"narrow\":" << m.narrow << ",\"wide\":" << m.wide
    << ",\"failed\":" << m.failed << ",\"cinst_max\":" << m.cinst_max << ",\"vrx_min\":" << m.vrx_min
    << ",\"vrx_max\":" << m.vrx_max << ",\"fpt_median_ns\":" << m.fpt_median_ns << ",\"fpt_max_ns\":" << m.fpt_max_ns
    << "},\"ok\":" << (r.error.empty() ? "true" : "false") << "}";
  return j.str();
}

}  // namespace ndqbench
