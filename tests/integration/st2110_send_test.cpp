// netdaq video-send against an independent receiver: GStreamer's `udpsrc ! rtpvrawdepay !
// filesink` must write, frame for frame and byte for byte, the frames netdaq sent (a raw file
// of random bytes given with --file, and the built-in test pattern), 10-bit (UYVP) and 8-bit
// (UYVY) 4:2:2, over loopback and across a veth pair between two namespaces. And the pacing of
// ST 2110-21's narrow gapped sender seen by a receiver: a UDP socket with SO_TIMESTAMPNS takes
// the stream, and each frame's packets must span about (N-1) x T_DRAIN (R_ACTIVE of the frame
// period), leave a gap before the next frame and come T_DRAIN apart; the same measure made of
// an unpaced run (--pacing none) must fail those bounds, so the check can fail.
//
// Widths are chosen so that GStreamer's row stride (rows rounded up to 4 bytes) equals the
// RFC 4175 line bytes: 640 px = 1600 bytes (10-bit), 1280 bytes (8-bit).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "netns_lab.h"
#include "peers.h"
#include "rtp_arrivals.h"
#include "../require_env.h"
#include "sensors/st2110_receiver_model.h"
#include "sensors/video_sender.h"
#include "test_paths.h"
#include "test_util.h"

using namespace std::chrono_literals;
using ndqtest::Bytes;

namespace {

struct Format {
  const char* name;
  uint32_t depth;
  uint32_t pgroup_bytes;  // 4:2:2: 2 pixels
  uint64_t line_bytes(uint32_t w) const { return uint64_t{w} / 2 * pgroup_bytes; }
};
constexpr Format kUyvp{"10-bit", 10, 5}, kUyvy{"8-bit", 8, 4};

uint64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// True once a UDP socket is bound to port in namespace ns ("": this one), read from
// /proc/net/udp there (local_address column ":PPPP").
bool udp_bound(const std::string& ns, uint16_t port) {
  char hex[8];
  std::snprintf(hex, sizeof hex, ":%04X", port);
  std::string out;
  const std::vector<std::string> argv =
      ns.empty() ? std::vector<std::string>{"cat", "/proc/net/udp"}
                 : std::vector<std::string>{"nsenter", "--net=/run/netns/" + ns, "cat", "/proc/net/udp"};
  if (ndqtest::run_command(argv, &out) != 0) return false;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string sl, local;
    f >> sl >> local;
    if (local.size() > 5 && local.compare(local.size() - 5, 5, hex) == 0) return true;
  }
  return false;
}

// UDP RcvbufErrors of this namespace (/proc/net/snmp): datagrams the kernel dropped because a
// socket's buffer was full, so that a failure says whether GStreamer fell behind.
uint64_t udp_rcvbuf_errors(const std::string& ns) {
  std::string text;
  const std::vector<std::string> argv =
      ns.empty() ? std::vector<std::string>{"cat", "/proc/net/snmp"}
                 : std::vector<std::string>{"nsenter", "--net=/run/netns/" + ns, "cat", "/proc/net/snmp"};
  if (ndqtest::run_command(argv, &text) != 0) return 0;
  std::istringstream in(text);
  std::string names, values, line;
  while (std::getline(in, line))
    if (line.rfind("Udp: ", 0) == 0) {
      if (names.empty()) names = line; else values = line;
    }
  std::istringstream n(names), v(values);
  std::string name, value;
  while (n >> name && v >> value)
    if (name == "RcvbufErrors") return std::stoull(value);
  return 0;
}

// GStreamer depayloading netdaq's stream into a file.
class GstDepay {
 public:
  GstDepay(const std::string& ns, uint16_t port, const Format& f, uint32_t w, uint32_t h) {
    const std::string caps = "application/x-rtp,media=video,clock-rate=90000,encoding-name=RAW,sampling=YCbCr-4:2:2,"
                             "depth=(string)" + std::to_string(f.depth) + ",width=(string)" + std::to_string(w) +
                             ",height=(string)" + std::to_string(h) + ",colorimetry=BT709,payload=96";
    proc_ = std::make_unique<ndqtest::PeerProcess>(
        ns, std::vector<std::string>{"gst-launch-1.0", "-e", "udpsrc", "port=" + std::to_string(port),
                                     "buffer-size=16777216", "caps=" + caps, "!", "rtpvrawdepay", "!", "filesink",
                                     "location=" + out_.path});
  }
  const std::string& path() const { return out_.path; }
  ndqtest::PeerProcess& proc() { return *proc_; }
  // EOS (SIGINT with -e) so that filesink flushes, then wait.
  int finish() { return proc_->stop(SIGINT, 10s); }

 private:
  ndqtest::TempFile out_;
  std::unique_ptr<ndqtest::PeerProcess> proc_;
};

std::vector<std::string> send_argv(const std::string& dest, const Format& f, uint32_t w, uint32_t h, uint64_t frames,
                                   const std::vector<std::string>& extra) {
  std::vector<std::string> a{"timeout", "60", NETDAQ_CLI, "video-send", "--destination", dest, "-n",
                             std::to_string(frames), "--width", std::to_string(w), "--height", std::to_string(h),
                             "--depth", std::to_string(f.depth), "--json"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Runs netdaq video-send to completion (bounded) in ns; returns its output; fails the test on a
// non-zero exit.
std::string run_sender(const std::string& ns, const std::vector<std::string>& argv) {
  ndqtest::PeerProcess p(ns, argv);
  const int rc = p.wait(90s);
  EXPECT_EQ(rc, 0) << p.command() << "\n" << p.output();
  return p.output();
}

// The frame-for-frame comparison of GStreamer's file with what was sent.
void expect_same_frames(const std::string& got_path, const Bytes& sent, uint64_t frame_bytes, uint64_t frames,
                        const std::string& what) {
  const Bytes got = ndqtest::read_file(got_path);
  ASSERT_EQ(got.size(), frames * frame_bytes) << what << ": GStreamer wrote " << got.size() / double(frame_bytes)
                                              << " frames of " << frame_bytes << " bytes, " << frames << " were sent";
  for (uint64_t k = 0; k < frames; ++k) {
    const uint64_t src = (k * frame_bytes) % sent.size();
    const bool same = std::equal(got.begin() + k * frame_bytes, got.begin() + (k + 1) * frame_bytes, sent.begin() + src);
    EXPECT_TRUE(same) << what << ": frame " << k << " differs";
  }
}

// netdaq sends `frames` frames of `sent` (a raw file, looped) or of the test pattern (sent
// empty) from namespace send_ns to gst in gst_ns at host:port; gst's file must equal them.
std::string gst_round_trip(const std::string& gst_ns, const std::string& send_ns, const std::string& host, uint16_t port,
                    const Format& f, uint32_t w, uint32_t h, uint64_t frames, bool pattern,
                    const std::vector<std::string>& more = {}) {
  const uint64_t fb = f.line_bytes(w) * h;
  EXPECT_EQ(f.line_bytes(w) % 4, 0u) << "GStreamer's stride would pad the rows";
  Bytes sent;
  ndqtest::TempFile raw;
  std::vector<std::string> extra{"--rate", "30"};
  extra.insert(extra.end(), more.begin(), more.end());
  if (pattern) {
    netdaq::VideoOptions v;
    v.width = w;
    v.height = h;
    v.depth = static_cast<uint8_t>(f.depth);
    v.rate_num = 30;
    const uint64_t cycle = std::min<uint64_t>(frames, 8);  // video-send's --pattern-frames default
    sent.resize(cycle * fb);
    for (uint64_t k = 0; k < cycle; ++k)
      netdaq::sensors::write_video_test_pattern(v, k, std::span(sent).subspan(k * fb, fb));
  } else {
    const uint64_t in_file = frames > 3 ? frames - 2 : frames;  // fewer than sent: the file loops
    sent.resize(in_file * fb);
    std::mt19937 rng(static_cast<uint32_t>(w * 31 + f.depth));
    for (auto& b : sent) b = std::byte(rng() & 0xff);
    ndqtest::write_file(raw.path, sent);
    extra.insert(extra.end(), {"--file", raw.path});
  }
  GstDepay gst(gst_ns, port, f, w, h);
  bool bound = false;
  for (int i = 0; i < 200 && !bound; ++i) {  // up to 10 s for gst-launch to bind
    bound = udp_bound(gst_ns, port);
    if (!bound) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(bound) << "gst-launch-1.0 did not bind udp port " << port << "\n" << gst.proc().output();
  if (!bound) return "";
  const uint64_t rcvbuf_errors = udp_rcvbuf_errors(gst_ns);
  const std::string out = run_sender(send_ns, send_argv("udp://" + host + ":" + std::to_string(port), f, w, h, frames, extra));
  for (int i = 0; i < 100 && file_size(gst.path()) < frames * fb; ++i) std::this_thread::sleep_for(50ms);
  const int rc = gst.finish();
  EXPECT_EQ(rc, 0) << gst.proc().command() << "\n" << gst.proc().output();
  expect_same_frames(gst.path(), sent, fb, frames,
                     std::string(f.name) + (pattern ? " pattern" : " file") + "\nUDP RcvbufErrors in GStreamer's namespace during the run: " +
                         std::to_string(udp_rcvbuf_errors(gst_ns) - rcvbuf_errors) + "\nnetdaq: " + out +
                         "\ngst: " + gst.proc().output());
  return out;
}

void require_gst() {
  NDQ_REQUIRE(ndqtest::have_tool("gst-launch-1.0"), "gst-launch-1.0 (gstreamer1.0-tools) is not installed");
  std::string out;
  const int rc = ndqtest::run_command({"gst-inspect-1.0", "rtpvrawdepay"}, &out);
  NDQ_REQUIRE(rc == 0, "GStreamer's rtpvrawdepay (gstreamer1.0-plugins-good) is missing");
}

}  // namespace

TEST(st2110Send, GstreamerDepaysNetdaqFramesLoopback10Bit) {
  require_gst();
  const uint16_t port = ndqtest::free_port(SOCK_DGRAM);
  gst_round_trip("", "", "127.0.0.1", port, kUyvp, 640, 480, 12, false);
}

TEST(st2110Send, GstreamerDepaysNetdaqFramesLoopback8Bit) {
  require_gst();
  const uint16_t port = ndqtest::free_port(SOCK_DGRAM);
  gst_round_trip("", "", "127.0.0.1", port, kUyvy, 640, 480, 12, false);
}

TEST(st2110Send, GstreamerDepaysNetdaqTestPattern) {
  require_gst();
  const uint16_t port = ndqtest::free_port(SOCK_DGRAM);
  gst_round_trip("", "", "127.0.0.1", port, kUyvp, 1280, 720, 10, true);
}

TEST(st2110Send, GstreamerDepaysNetdaqFramesAcrossVeth) {
  require_gst();
  std::string why;
  NDQ_REQUIRE(ndqtest::NetnsLab::supported(&why), why);
  ndqtest::NetnsLab lab;
  gst_round_trip(lab.a().ns, lab.b().ns, lab.a().ip4, 47110, kUyvp, 640, 480, 10, false);
}

TEST(st2110Send, GstreamerDepaysNetdaqFramesAcrossVeth8Bit) {
  require_gst();
  std::string why;
  NDQ_REQUIRE(ndqtest::NetnsLab::supported(&why), why);
  ndqtest::NetnsLab lab;
  gst_round_trip(lab.a().ns, lab.b().ns, lab.a().ip4, 47112, kUyvy, 640, 480, 10, false);
}

TEST(st2110Send, GstreamerDepaysNetdaqFramesSentByAfxdp) {
  // video-send with a config: the afxdp engine in namespace B writes the Ethernet/IPv4/UDP
  // headers and sends the RTP payloads over the veth pair to GStreamer in A.
  require_gst();
  std::string why;
  NDQ_REQUIRE(ndqtest::NetnsLab::supported(&why), why);
  const auto engines = netdaq::engines();
  NDQ_REQUIRE(std::find(engines.begin(), engines.end(), "afxdp") != engines.end(), "the afxdp engine is not built in");
  ndqtest::NetnsLab lab;
  const uint16_t port = 47114;
  ndqtest::TempFile cfg;
  std::ofstream(cfg.path) << "memory_regions:\n"
                             "  - {name: umem, kind: host, buf_size: 2048, num_bufs: 8192}\n"
                             "interfaces:\n"
                             "  - name: video\n"
                             "    engine: afxdp\n"
                             "    address: " << lab.b().veth << "\n"
                             "    tx:\n"
                             "      destination: udp://" << lab.a().ip4 << ":" << port << "\n"
                             "      queues:\n"
                             "        - {id: 0, batch_size: 64, ring_depth: 16, memory_regions: [umem]}\n"
                             "    afxdp: {dst_mac: \"" << lab.mac(lab.a()) << "\"}\n"
                             "log: {level: warn}\n";
  const std::string out = gst_round_trip(lab.a().ns, lab.b().ns, lab.a().ip4, port, kUyvp, 640, 480, 10, false, {cfg.path});
  EXPECT_NE(out.find("\"engine\": \"afxdp\""), std::string::npos) << out;
}

namespace {

using Arrival = netdaq::sensors::St2110Arrival;  // receive times on CLOCK_REALTIME until to_tai

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

struct PacingFigures {
  size_t frames = 0, packets = 0;
  double median_span_us = 0, median_gap_us = 0, median_frame_period_us = 0, median_vgap_us = 0;
  double within_half_drain = 0;  // fraction of in-frame gaps within T_DRAIN +- 50%
  double under_half = 0;         // fraction of in-frame gaps under T_DRAIN / 2 (packets sent together)
  std::string histogram;
};

// Frames by RTP timestamp; the first and last frames are left out (they may be cut).
PacingFigures measure(const std::vector<Arrival>& a, double t_drain_ns /* the expected in-frame gap */) {
  const netdaq::sensors::St2110Gaps g = netdaq::sensors::st2110_gaps(a, t_drain_ns);
  PacingFigures f;
  f.packets = a.size();
  f.frames = g.frames;
  f.median_span_us = g.median_span_ns / 1e3;
  f.median_gap_us = g.median_gap_ns / 1e3;
  f.median_frame_period_us = g.median_period_ns / 1e3;
  f.median_vgap_us = g.median_vgap_ns / 1e3;
  f.within_half_drain = g.within_half;
  f.under_half = g.under_half;
  std::ostringstream h;
  for (size_t b = 0; b < 12; ++b)
    h << "  [" << b * 0.25 << (b + 1 == 12 ? "+" : "-" + std::to_string((b + 1) * 0.25).substr(0, 4))
      << ") x gap: " << g.histogram[b] << "\n";
  f.histogram = h.str();
  return f;
}

// netdaq sends 640x480p60 10-bit (640 packets a frame, T_DRAIN 25 us) to a timestamping socket.
PacingFigures paced_run(const std::string& pacing, uint64_t frames, double* t_drain_ns, double* t_frame_ns,
                        uint32_t* per_frame, const std::vector<std::string>& more = {},
                        std::vector<Arrival>* arrivals = nullptr) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  int rcvbuf = 32 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) == 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  const uint16_t port = ntohs(sa.sin_port);

  netdaq::sensors::VideoSenderConfig c;
  c.video.width = 640;
  c.video.height = 480;
  c.video.depth = 10;
  c.video.rate_num = 60;
  const netdaq::sensors::VideoSender s(c);
  const auto t = s.timing();
  *t_drain_ns = t.t_drain_ns;
  *t_frame_ns = t.t_frame_ns;
  *per_frame = s.packets_per_frame();
  const size_t count = frames * s.packets_per_frame();
  std::vector<Arrival> got;
  std::thread rx([&] { got = ndqtest::receive_rtp_arrivals(fd, count, std::chrono::steady_clock::now() + 30s); });
  const std::string out = run_sender("", send_argv("udp://127.0.0.1:" + std::to_string(port), kUyvp, 640, 480, frames,
                                                   [&] {
                                                     std::vector<std::string> a{"--pacing", pacing};
                                                     a.insert(a.end(), more.begin(), more.end());
                                                     return a;
                                                   }()));
  rx.join();
  ::close(fd);
  EXPECT_EQ(got.size(), count) << "packets lost on loopback\n" << out;
  const double gap_ns = pacing == "linear" ? t.t_frame_ns / s.packets_per_frame() : t.t_drain_ns;
  PacingFigures f = measure(got, gap_ns);
  if (arrivals) *arrivals = got;
  std::printf("pacing %s: %zu packets, %zu whole frames; median span %.1f us (expected (N-1) x T_DRAIN = %.1f us), "
              "median in-frame gap %.2f us (expected %.2f us), %.0f%% of gaps within it +-50%%, median frame period "
              "%.1f us (T_FRAME %.1f us), median gap between frames %.1f us\n%s",
              pacing.c_str(), f.packets, f.frames, f.median_span_us, (s.packets_per_frame() - 1) * t.t_drain_ns / 1e3,
              f.median_gap_us, gap_ns / 1e3, 100 * f.within_half_drain, f.median_frame_period_us,
              t.t_frame_ns / 1e3, f.median_vgap_us, f.histogram.c_str());
  std::printf("sender: %s\n", out.c_str());
  return f;
}

}  // namespace

TEST(st2110Pacing, NarrowGappedSeenByATimestampingReceiver) {
  double drain = 0, frame = 0;
  uint32_t n = 0;
  const PacingFigures f = paced_run("gapped", 30, &drain, &frame, &n);
  ASSERT_GE(f.frames, 20u);
  const double span = (n - 1) * drain / 1e3;  // us: R_ACTIVE x T_FRAME less one T_DRAIN
  // Each frame's packets spread over its active period, not bunched (+-10%).
  EXPECT_NEAR(f.median_span_us, span, 0.10 * span);
  // Frames one T_FRAME apart (+-5%), with the vertical gap between them: T_FRAME - span.
  EXPECT_NEAR(f.median_frame_period_us, frame / 1e3, 0.05 * frame / 1e3);
  const double vgap = frame / 1e3 - span;
  EXPECT_NEAR(f.median_vgap_us, vgap, 0.5 * vgap);
  // Packets T_DRAIN apart: the median within 25%, most gaps within 50% (a 2-core VM's timer
  // and scheduler jitter moves some; a catch-up burst puts a few at 0).
  EXPECT_NEAR(f.median_gap_us, drain / 1e3, 0.25 * drain / 1e3);
  EXPECT_GE(f.within_half_drain, 0.5);  // 93-99% here when idle, 68% once under a parallel build
  RecordProperty("median_span_us", std::to_string(f.median_span_us));
  RecordProperty("median_gap_us", std::to_string(f.median_gap_us));
  RecordProperty("within_half_drain", std::to_string(f.within_half_drain));
}

TEST(st2110Pacing, GappedBurstsOfFourKeepTheSchedule) {
  // --burst 4: packets leave in fours at the departure of each four's last: three of four
  // in-frame gaps under T_DRAIN / 2 (75% measured: the kernel's per-packet time on loopback),
  // the frame still spread over its active period, T_FRAME apart.
  double drain = 0, frame = 0;
  uint32_t n = 0;
  const PacingFigures f = paced_run("gapped", 30, &drain, &frame, &n, {"--burst", "4"});
  ASSERT_GE(f.frames, 20u);
  const double span = (n - 1) * drain / 1e3;
  EXPECT_NEAR(f.median_span_us, span, 0.10 * span);
  EXPECT_NEAR(f.median_frame_period_us, frame / 1e3, 0.05 * frame / 1e3);
  EXPECT_GE(f.under_half, 0.6);
  EXPECT_LE(f.under_half, 0.85);
}

TEST(st2110Pacing, LinearByTheQueuePacer) {
  // --pacing linear: the TX queue's token bucket at N_pkts per T_FRAME: packets T_FRAME / N
  // apart, frames T_FRAME apart, no vertical gap (ST 2110-21's linear sender).
  double drain = 0, frame = 0;
  uint32_t n = 0;
  const PacingFigures f = paced_run("linear", 30, &drain, &frame, &n);
  ASSERT_GE(f.frames, 20u);
  const double gap = frame / n / 1e3;
  EXPECT_NEAR(f.median_frame_period_us, frame / 1e3, 0.05 * frame / 1e3);
  EXPECT_NEAR(f.median_span_us, (n - 1) * gap, 0.10 * (n - 1) * gap);
  EXPECT_NEAR(f.median_gap_us, gap, 0.25 * gap);
  EXPECT_LT(f.median_vgap_us, 3 * gap) << "no vertical gap";
}

namespace {

// Per whole frame of an --epoch run: its RTP timestamp names a period k since 1970-01-01 TAI
// (the 90 kHz TAI clock at the period's start, k x 1500 at 60 frames/s, modulo 2^32), the one at
// or before its first packet's arrival less TRO (100 us early allowed); how late that packet
// came after k x T_FRAME + TRO. A packet is never (much) early; how late it is, is the scheduler's doing (a loaded 2-core VM
// delays most frames by milliseconds), so only the least late frame must be on time.
struct EpochCheck {
  size_t frames = 0, timestamps_on_clock = 0;
  double min_late_us = 1e18, median_late_us = 0;
  netdaq::sensors::St2110Summary model;  // the ST 2110-21 receiver models (C_INST, VRX, FPT)
};

EpochCheck check_tai_epoch(const std::vector<Arrival>& a, double tro_ns) {
  const int64_t tai_minus_rt = ndqtest::tai_minus_realtime_ns();
  constexpr uint64_t kPeriodNum = 1'000'000'000, kPeriodDen = 60;  // T_FRAME of 60 frames/s, ns
  constexpr uint64_t kTicksPerFrame = 1500, kMaxPeriodsLate = 60;   // a second
  constexpr uint64_t kEarlyNs = 100'000;  // the first packet arrives ~30 us before TRO (FPT)
  __extension__ using U128 = unsigned __int128;                     // ns x 60 exceeds 64 bits
  EpochCheck c;
  std::vector<double> late;
  std::vector<netdaq::sensors::St2110Arrival> tai_arrivals;
  for (size_t i = 1; i < a.size(); ++i)  // whole frames only: the run's first is left out
    if (tai_arrivals.size() || a[i].rtp_timestamp != a[i - 1].rtp_timestamp)
      tai_arrivals.push_back({a[i].rtp_timestamp, a[i].tai_ns + tai_minus_rt});
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i].rtp_timestamp == a[i - 1].rtp_timestamp) continue;  // first packet of a frame (not the run's first)
    ++c.frames;
    const uint64_t tai = a[i].tai_ns + tai_minus_rt - static_cast<uint64_t>(tro_ns);
    const uint64_t at_or_before = static_cast<uint64_t>(U128(tai + kEarlyNs) * kPeriodDen / kPeriodNum);
    for (uint64_t k = at_or_before; k + kMaxPeriodsLate > at_or_before; --k) {
      if (static_cast<uint32_t>(k * kTicksPerFrame) != a[i].rtp_timestamp) continue;
      const uint64_t start = static_cast<uint64_t>(U128(k) * kPeriodNum / kPeriodDen);
      late.push_back(double(int64_t(tai - start)) / 1e3);
      c.min_late_us = std::min(c.min_late_us, late.back());
      ++c.timestamps_on_clock;
      break;
    }
  }
  c.median_late_us = median(late);
  netdaq::sensors::VideoSenderConfig vc;
  vc.video.width = 640;
  vc.video.height = 480;
  vc.video.rate_num = 60;
  const netdaq::sensors::VideoSender s(vc);
  auto frames = netdaq::sensors::check_st2110_arrivals(tai_arrivals, s.timing());
  if (!frames.empty()) frames.pop_back();  // the last may be cut
  c.model = netdaq::sensors::summarize(frames);
  return c;
}

}  // namespace

TEST(st2110Pacing, TaiEpochAlignsPeriodsAndTimestamps) {
  // --epoch tai (ST 2110-10): each frame's first packet leaves TRO after a period boundary counted
  // from 1970-01-01 TAI, and its RTP timestamp is the 90 kHz TAI clock there, so a receiver on
  // the same (PTP) time knows each frame's capture instant. The control: the default epoch
  // (now, timestamps from 0) fails the same check, or it could not fail.
  double drain = 0, frame = 0;
  uint32_t n = 0;
  std::vector<Arrival> got;
  paced_run("gapped", 20, &drain, &frame, &n, {"--epoch", "tai"}, &got);
  netdaq::sensors::VideoSenderConfig c;
  c.video.width = 640;
  c.video.height = 480;
  c.video.rate_num = 60;
  const double tro = netdaq::sensors::VideoSender(c).timing().tro_ns;
  const EpochCheck tai = check_tai_epoch(got, tro);
  paced_run("gapped", 20, &drain, &frame, &n, {"--epoch", "now"}, &got);
  const EpochCheck now = check_tai_epoch(got, tro);
  std::printf("epoch tai: %zu frames, %zu timestamps on the TAI clock, first packets late by %.1f us at least, "
              "%.1f us median; epoch now: %zu of %zu on the TAI clock\n",
              tai.frames, tai.timestamps_on_clock, tai.min_late_us, tai.median_late_us, now.timestamps_on_clock,
              now.frames);
  ASSERT_GE(tai.frames, 15u);
  EXPECT_EQ(tai.timestamps_on_clock, tai.frames) << "every frame's RTP timestamp is the TAI media clock at a period "
                                                    "at most a second before its first packet (less TRO), at most "
                                                    "100 us after";
  EXPECT_LT(tai.min_late_us, 200) << "no frame left at its TAI period + TRO (a period is 16,667 us)";
  ASSERT_GE(now.frames, 15u);
  EXPECT_EQ(now.timestamps_on_clock, 0u) << "the default epoch's timestamps are not the TAI clock's";
  // ST 2110-21's receiver models on the same arrivals: frames narrow, wide or failed. A late
  // packet (VRX underflow, C_INST) is the scheduler's doing, most frames on a loaded 2-core VM:
  // printed, not asserted.
  const auto& m = tai.model;
  std::printf("st2110-21 models, epoch tai: %zu frames: %zu narrow, %zu wide, %zu failed (first: %s); C_INST max %lld, "
              "VRX %lld..%lld, FPT median %.1f us (TRO %.1f us)\n",
              m.frames, m.narrow, m.wide, m.failed, m.first_cause.c_str(), (long long)m.cinst_max, (long long)m.vrx_min,
              (long long)m.vrx_max, m.fpt_median_ns / 1e3, tro / 1e3);
  EXPECT_EQ(now.model.failed, now.model.frames) << "the default epoch's timestamps are not the TAI clock's";
}

TEST(st2110Pacing, UnpacedStreamFailsTheBounds) {
  // The negative control: the same measure of an unpaced sender must be far outside the
  // bounds the paced one meets, or the pacing test above could not fail.
  double drain = 0, frame = 0;
  uint32_t n = 0;
  const PacingFigures f = paced_run("none", 30, &drain, &frame, &n);
  ASSERT_GE(f.frames, 20u);
  const double span = (n - 1) * drain / 1e3;
  EXPECT_LT(f.median_span_us, 0.5 * span);
  EXPECT_LT(f.within_half_drain, 0.2);  // 1-2% measured
}

namespace {

uint32_t be(const std::vector<std::byte>& b, size_t at, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | std::to_integer<uint32_t>(b[at + i]);
  return v;
}

}  // namespace

TEST(st2110Send, InterlacedFieldsOverLoopback) {
  // netdaq sends 4 interlaced frames of a random file; a plain UDP socket takes the packets and
  // this test (RFC 3550 / 4175 read here byte by byte) rebuilds the frames: field 0 on even
  // lines with F=0, then field 1 on odd lines with F=1, each field its own timestamp (1500
  // ticks apart at 30 frames/s) and its marker on its last packet, sequence numbers in order.
  const uint32_t w = 640, h = 480, frames = 4;
  const uint64_t lb = kUyvp.line_bytes(w), fb = lb * h;
  Bytes sent(fb * frames);
  std::mt19937 rng(2110);
  for (auto& b : sent) b = std::byte(rng() & 0xff);
  ndqtest::TempFile raw;
  ndqtest::write_file(raw.path, sent);

  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  int rcvbuf = 32 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) == 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  timeval tv{0, 200'000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  const std::string dest = "udp://127.0.0.1:" + std::to_string(ntohs(sa.sin_port));

  std::vector<std::vector<std::byte>> pkts;
  uint32_t markers = 0;
  std::thread rx([&] {
    std::vector<std::byte> buf(9000);
    for (int idle = 0; idle < 25;) {  // until 5 s without a packet
      const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) {
        ++idle;
        continue;
      }
      idle = 0;
      pkts.emplace_back(buf.begin(), buf.begin() + n);
      markers += (std::to_integer<uint32_t>(buf[1]) & 0x80) != 0;
      if (markers == 2 * frames || pkts.size() > 100000) break;  // every field's last packet came
    }
  });
  const std::string out =
      run_sender("", send_argv(dest, kUyvp, w, h, frames, {"--interlaced", "--rate", "30", "--file", raw.path}));
  rx.join();
  ::close(fd);
  ASSERT_FALSE(pkts.empty()) << out;

  Bytes got(fb * frames);
  uint32_t field_index = 0, fields_seen = 0;
  uint32_t expect_seq = be(pkts[0], 2, 2);
  for (size_t i = 0; i < pkts.size(); ++i) {
    const auto& p = pkts[i];
    ASSERT_GE(p.size(), 20u);
    EXPECT_EQ(std::to_integer<uint32_t>(p[0]) >> 6, 2u);
    EXPECT_EQ(be(p, 2, 2), expect_seq & 0xffff) << "packet " << i;
    ++expect_seq;
    const bool marker = (std::to_integer<uint32_t>(p[1]) & 0x80) != 0;
    const uint32_t ts = be(p, 4, 4);
    EXPECT_EQ(ts, field_index * 1500) << "packet " << i << ": field " << field_index << "'s timestamp";
    const uint32_t frame = field_index / 2, field = field_index % 2;
    size_t at = 14, data = 14;
    std::vector<std::array<uint32_t, 4>> srds;  // length, F, row, offset
    for (bool more = true; more;) {
      const uint32_t l = be(p, at, 2), fr = be(p, at + 2, 2), co = be(p, at + 4, 2);
      srds.push_back({l, fr >> 15, fr & 0x7fff, co & 0x7fff});
      more = (co & 0x8000) != 0;
      at += 6;
    }
    data = at;
    for (const auto& s : srds) {
      EXPECT_EQ(s[1], field) << "packet " << i << ": the F bit";
      const uint64_t line = uint64_t{s[2]} * 2 + field;
      ASSERT_LT(line, h);
      ASSERT_LE(s[3] / 2 * 5 + s[0], lb);
      ASSERT_LE(data + s[0], p.size());
      std::memcpy(got.data() + frame * fb + line * lb + s[3] / 2 * 5, p.data() + data, s[0]);
      data += s[0];
    }
    EXPECT_EQ(data, p.size());
    if (marker) {
      ++field_index;
      ++fields_seen;
    }
  }
  EXPECT_EQ(fields_seen, 2 * frames) << "one marker per field";
  EXPECT_TRUE(got == sent) << "the rebuilt frames differ from the file\n" << out;
}

TEST(st2110Send, OptionErrorsSayWhatIsAllowed) {
  // Exit status 1 and a message naming the option, the value and what is allowed.
  ndqtest::TempFile raw;
  ndqtest::write_file(raw.path, Bytes(1000));
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--rate", "61.5"}, "--rate '61.5': must be a frame rate like 60, 50, 59.94 (60000/1001) or NUM/DEN"},
      {{"--width", "641"}, "width = 641: must be a multiple of 2 pixels"},
      {{"--depth", "9"}, "depth = 9: must be 8, 10, 12 or 16"},
      {{"--sampling", "YUV"}, "--sampling 'YUV': must be YCbCr-4:2:2, YCbCr-4:4:4 or RGB"},
      {{"--payload-type", "20"}, "payload_type = 20: must be a dynamic RTP payload type 96..127"},
      {{"--file", raw.path}, "1000 bytes is not a whole number of 768000-byte frames (1600 bytes x 480 lines)"},
  };
  for (const auto& [args, text] : cases) {
    std::vector<std::string> argv{NETDAQ_CLI, "video-send", "--destination", "udp://127.0.0.1:9", "--height", "480"};
    argv.insert(argv.end(), args.begin(), args.end());
    if (args[0] != "--width") argv.insert(argv.end(), {"--width", "640"});
    std::string out;
    EXPECT_EQ(ndqtest::run_command(argv, &out), 1) << out;
    EXPECT_NE(out.find(text), std::string::npos) << "want: " << text << "\ngot: " << out;
  }
  std::string out;
  EXPECT_EQ(ndqtest::run_command({NETDAQ_CLI, "video-send", "-n", "1"}, &out), 1);
  EXPECT_NE(out.find("--destination udp://HOST:PORT is required without a CONFIG"), std::string::npos) << out;
}
