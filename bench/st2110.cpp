// Uncompressed video receive benchmark (issue 33 item 4; bench/st2110.md): CPU per packet and
// per frame, and concurrent ST 2110-20 streams one core receives, for netdaq (socket engine and
// afxdp engine + HostFrameAssembler, mode rtp_video, frames: host) against GStreamer's
// `udpsrc ! rtpvrawdepay ! fakesink` on the same packets, in one run.
//
//   netdaq_bench_st2110 [--formats 1080p60,2160p60] [--rounds R] [--packets N] [--payload B]
//                       [--only n,x,g,p] [--cpu C] [--gro on|off] [--gso N] [--pacing-frames F] [--max-seconds S] [--json PATH] [--enforce]
// (p): video-send's pacing as a receiver sees it (bench/st2110_pacing.h).
//
// Method (as bench/roce_sw.md): each receiver's own capacity on a preloaded queue. Per chunk
// the receiver is paused (netdaq: not polled; GStreamer: SIGSTOP), the chunk's packets are sent
// from the peer namespace of a veth pair (a UDP socket, sendmmsg) and queued (socket receive
// buffers of 512 MiB; the XSK ring of 16384), then the receiver drains them and its CPU time is
// taken: netdaq's thread (CLOCK_THREAD_CPUTIME_ID), GStreamer's every thread
// (/proc/PID/task/*/schedstat), user and system time both. A stream's packet rate over the
// receiver's capacity gives the streams one core holds. Every chunk checks sent == received +
// counted drops with no drop; the first round (untimed) checks netdaq's frames byte for byte
// against what was sent, complete, one per RTP timestamp.
// Exit status: 0 ok (with --enforce a MISS exits 5), 1 setup error, 3 a check failed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "afxdp_config.h"
#include "engines/socket/gso_run.h"
#include "gro_floor.h"
#include "netdaq/host_frames.h"
#include "netdaq/netdaq.h"
#include "netns_lab.h"
#include "protocols/rtp_video_format.h"
#include "receiver_cpu.h"
#include "sensors/video_sender.h"
#include "st2110_pacing.h"

namespace {

using ndqbench::mono_ns;
using ndqbench::now_s;
using ndqbench::thread_cpu_ns;

using namespace netdaq;
using Clock = std::chrono::steady_clock;

constexpr uint16_t kPortSocket = 5004, kPortAfxdp = 5006, kPortGst = 5008, kPortRaw = 5010, kPortKernel = 5012;
constexpr uint32_t kXskRing = 16384;
constexpr uint32_t kChunkMax = 12000;  // packets queued at once: below the XSK ring
constexpr double kTargetSocket = 5.0;  // streams per core against GStreamer's
// A drain gives up after this long without a packet. Generous: with GRO the veth's threaded
// NAPI delivers what was sent, and on a loaded machine (ctest -j) that thread may wait its turn
// well past the settle time; the first packets' CPU is all that is timed.
constexpr auto kIdle = std::chrono::seconds(2);

struct Format {
  std::string name;
  VideoOptions v;
};

Format parse_format(const std::string& s) {
  Format f{s, {}};
  f.v.sampling = VideoSampling::ycbcr_422, f.v.depth = 10, f.v.rate_den = 1;
  if (s == "1080p60") f.v.width = 1920, f.v.height = 1080, f.v.rate_num = 60;
  else if (s == "2160p60") f.v.width = 3840, f.v.height = 2160, f.v.rate_num = 60;
  else if (s == "1080p30") f.v.width = 1920, f.v.height = 1080, f.v.rate_num = 30;
  else if (s == "720p60") f.v.width = 1280, f.v.height = 720, f.v.rate_num = 60;
  else throw std::runtime_error("unknown format " + s + " (allowed: 720p60, 1080p30, 1080p60, 2160p60)");
  return f;
}

struct Options {
  std::vector<std::string> formats{"1080p60", "2160p60"};
  uint32_t rounds = 5;
  uint32_t packets = 24000;  // per round, rounded up to whole frames
  uint32_t payload = 1200;
  std::string only = "n,x,g,p";
  uint32_t pacing_frames = 30;  // (p): video frames video-send paces
  int cpu = 1;
  double max_seconds = 300;
  std::string json;
  bool enforce = false;
  bool gro = true;  // GRO on the receiving veth, as a NIC's driver has it by default
  // Packets per sender message for the socket receivers (UDP_SEGMENT): the receiving socket
  // then gets what a NIC's GRO hands it, one skb whose page fragments hold the datagrams. 1:
  // a datagram a message, which veth's GRO only chains (frag_list of the sender's own skbs, each
  // still freed on its own): a veth artefact, no NIC's shape (bench/st2110.md).
  uint32_t gso = 8;
};

// The packets of whole frames of a format, built once by netdaq's sender: frames alternate
// between two test-pattern frames.
struct Stream {
  std::unique_ptr<sensors::VideoSender> sender;
  std::vector<std::byte> frames;  // two frames
  std::vector<std::byte> buf;     // packets, stride max_packet_bytes()
  std::vector<uint32_t> lens;
  uint32_t stride = 0;
  // The next n packets of the stream into buf/lens.
  void build(uint32_t n) {
    buf.assign(size_t(stride) * n, std::byte{0});
    lens.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      lens[i] = sender->next_packet(std::span<std::byte>(buf.data() + size_t(stride) * i, stride));
      if (!lens[i]) throw std::runtime_error("VideoSender refused a packet");
    }
  }
};

Stream make_stream(const Format& f, uint32_t payload) {
  Stream s;
  sensors::VideoSenderConfig c;
  c.video = f.v;
  c.payload_size = payload;
  s.sender = std::make_unique<sensors::VideoSender>(c);
  const uint64_t fb = s.sender->frame_bytes();
  s.frames.resize(2 * fb);
  for (uint64_t k = 0; k < 2; ++k)
    sensors::write_video_test_pattern(f.v, k, std::span<std::byte>(s.frames.data() + k * fb, fb));
  s.sender->set_frames(s.frames);
  s.stride = s.sender->max_packet_bytes();
  return s;
}

// A UDP socket in the peer namespace sending to the receivers' address.
class Sender {
 public:
  explicit Sender(const std::string& ip) {
    fd_ = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd_ < 0) throw std::runtime_error("UDP socket: " + std::string(strerror(errno)));
    int sndbuf = 64 << 20, one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf);
    // A packet the veth refuses (its NAPI ring full) must come back as ENOBUFS to be sent
    // again; without IP_RECVERR UDP reports it sent.
    setsockopt(fd_, IPPROTO_IP, IP_RECVERR, &one, sizeof one);
    if (inet_pton(AF_INET, ip.c_str(), &to_.sin_addr) != 1) throw std::runtime_error("bad IPv4 " + ip);
    to_.sin_family = AF_INET;
  }
  ~Sender() { close(fd_); }
  // Sends packets [from, from + n) of s to port; returns those sent (a refusal is retried;
  // bounded by max_s). gso > 1: up to gso consecutive packets of one size (the group's last may
  // be shorter) leave as one UDP_SEGMENT message, so the receiving socket gets what a NIC's GRO
  // hands it (see Options::gso).
  uint64_t send(const Stream& s, uint32_t from, uint32_t n, uint16_t port, double max_s, uint64_t* refused,
                uint32_t gso = 1) {
    to_.sin_port = htons(port);
    const double end = now_s() + max_s;
    constexpr uint32_t kBatch = 64, kMaxSeg = 64;
    gso = std::clamp<uint32_t>(gso, 1, kMaxSeg);
    mmsghdr m[kBatch];
    std::vector<iovec> v(size_t(kBatch) * gso);
    alignas(cmsghdr) char ctrl[kBatch][CMSG_SPACE(sizeof(uint16_t))];
    uint32_t i = 0;
    while (i < n && now_s() < end) {
      uint32_t k = 0, packets = 0;
      uint32_t counts[kBatch];
      while (k < kBatch && i + packets < n) {
        const uint32_t first = from + i + packets, seg = s.lens[first];
        // the socket engine's GSO runs: same-sized packets, the last one possibly shorter
        const uint32_t c = netdaq::detail::socket_engine::gso_run([&](uint32_t p) { return s.lens[from + p]; },
                                                                   i + packets, n, gso);
        for (uint32_t j = 0; j < c; ++j)
          v[size_t(k) * gso + j] = {const_cast<std::byte*>(s.buf.data()) + size_t(s.stride) * (first + j),
                                    s.lens[first + j]};
        m[k] = {};
        m[k].msg_hdr.msg_name = &to_;
        m[k].msg_hdr.msg_namelen = sizeof to_;
        m[k].msg_hdr.msg_iov = &v[size_t(k) * gso];
        m[k].msg_hdr.msg_iovlen = c;
        if (c > 1) {
          m[k].msg_hdr.msg_control = ctrl[k];
          m[k].msg_hdr.msg_controllen = sizeof ctrl[k];
          cmsghdr* h = CMSG_FIRSTHDR(&m[k].msg_hdr);
          h->cmsg_level = SOL_UDP;
          h->cmsg_type = UDP_SEGMENT;
          h->cmsg_len = CMSG_LEN(sizeof(uint16_t));
          const uint16_t g = uint16_t(seg);
          std::memcpy(CMSG_DATA(h), &g, sizeof g);
        }
        counts[k++] = c;
        packets += c;
      }
      const int r = sendmmsg(fd_, m, k, 0);
      for (int j = 0; j < r; ++j) i += counts[j];
      if (r < int(k)) {
        if (r < 0 && errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
          throw std::runtime_error("sendmmsg: " + std::string(strerror(errno)));
        ++*refused;
        sched_yield();
      }
    }
    return i;
  }

 private:
  int fd_ = -1;
  sockaddr_in to_{};
};

struct Chunk {
  uint64_t sent = 0, received = 0, drops = 0, refused = 0, cpu_ns = 0;
};

struct CaseResult {
  std::string name;
  std::vector<double> ns_per_packet;  // per timed round
  uint64_t frames_checked = 0;
  std::string error;
  double median() const {
    if (ns_per_packet.empty()) return 0;
    std::vector<double> v = ns_per_packet;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  }
};

class Receiver {
 public:
  virtual ~Receiver() = default;
  virtual void pause() {}
  // Takes the n packets queued for it; the CPU time it spent and what it counted.
  virtual Chunk drain(uint64_t n, bool verify) = 0;
  virtual std::string check() { return ""; }  // after the verifying round: "" when right
};

// netdaq: a Session's rx queue (socket or afxdp) into HostFrameAssembler, mode rtp_video.
class NetdaqReceiver : public Receiver {
 public:
  NetdaqReceiver(std::unique_ptr<Session> s, const std::string& iface, const VideoOptions& v, const Stream& st,
                 bool frames = true)
      : session_(std::move(s)), q_(session_->rx_queue(iface, 0)), st_(st), place_(frames) {
    ReorderConfig r;
    r.name = "bench/video";
    r.frames = FrameTarget::host;
    r.mode = ReorderMode::rtp_video;
    r.video = v;
    r.max_open_frames = 2;
    r.frame_buffers = 4;
    r.frame_timeout_us = 5'000'000;  // frames span chunks; the pauses between them are not losses
    frames_ = std::make_unique<HostFrameAssembler>(r);
  }
  Chunk drain(uint64_t n, bool verify) override {
    Chunk c;
    const uint64_t drops0 = q_.stats().total_drops();
    const uint64_t c0 = thread_cpu_ns();
    auto last = Clock::now();
    while (c.received < n) {
      RxBurst b = q_.poll();
      if (b.empty()) {
        if (Clock::now() - last > kIdle) break;
        continue;
      }
      c.received += b.size();
      if (!place_) {  // diagnostic (r): the engine alone
        b.release();
        continue;
      }
      frames_->receive(b, mono_ns());
      b.release();
      HostFrameView f;
      while (frames_->pop(f)) {
        if (verify) check_frame(f);
        frames_->release(f);
      }
      last = Clock::now();
    }
    c.cpu_ns = thread_cpu_ns() - c0;
    c.drops = q_.stats().total_drops() - drops0;
    return c;
  }
  std::string check() override {
    const HostFrameStats s = frames_->stats();
    const QueueStats q = q_.stats();
    std::printf("  queue %s: %s, %llu packets, %llu bytes copied\n", q_.name().c_str(), q.mode.c_str(),
                (unsigned long long)q.packets, (unsigned long long)q.copies);
    std::string r = errors_;
    if (!place_) return r;
    if (frames_checked_ == 0) r += "no frame popped; ";
    if (s.malformed) r += "malformed " + std::to_string(s.malformed) + " (" + s.last_malformed + "); ";
    if (s.frames_incomplete || s.frames_dropped)
      r += "incomplete " + std::to_string(s.frames_incomplete) + " dropped " + std::to_string(s.frames_dropped) + "; ";
    return r;
  }
  uint64_t frames_checked() const { return frames_checked_; }

 private:
  void check_frame(const HostFrameView& f) {
    ++frames_checked_;
    const uint64_t fb = st_.sender->frame_bytes();
    const std::byte* want = st_.frames.data() + (f.frame % 2) * fb;
    if (!f.complete || f.bytes.size() != fb || std::memcmp(f.bytes.data(), want, fb) != 0)
      errors_ += "frame " + std::to_string(f.frame) + (f.complete ? " differs from what was sent; " : " incomplete; ");
  }
  std::unique_ptr<Session> session_;
  RxQueue& q_;
  const Stream& st_;
  std::unique_ptr<HostFrameAssembler> frames_;
  uint64_t frames_checked_ = 0;
  std::string errors_;
  bool place_ = true;
};

// Diagnostic (k): the kernel's part of a socket receive alone, a floor for (r) (gro_floor.h).
class KernelFloorReceiver : public Receiver {
 public:
  explicit KernelFloorReceiver(int fd) : floor_(fd) {}
  ~KernelFloorReceiver() override {
    if (floor_.messages())
      std::printf("  (k): %.2f datagrams per message (GRO)\n", double(floor_.datagrams()) / double(floor_.messages()));
  }
  Chunk drain(uint64_t n, bool) override {
    Chunk c;
    const uint64_t c0 = thread_cpu_ns();
    c.received = floor_.drain(n, kIdle);
    c.cpu_ns = thread_cpu_ns() - c0;
    return c;
  }

 private:
  ndqbench::GroFloor floor_;
};

// GStreamer: gst-launch-1.0 udpsrc ! rtpvrawdepay ! fakesink, in the receivers' namespace,
// pinned to the receiving core; paused with SIGSTOP while packets are queued.
class GstReceiver : public Receiver {
 public:
  GstReceiver(const std::string& ns, const VideoOptions& v, int cpu) {
    const std::string caps =
        "application/x-rtp,media=video,clock-rate=90000,encoding-name=RAW,sampling=YCbCr-4:2:2,depth=(string)" +
        std::to_string(v.depth) + ",width=(string)" + std::to_string(v.width) + ",height=(string)" +
        std::to_string(v.height) + ",exactframerate=(string)" + std::to_string(v.rate_num) +
        ",colorimetry=(string)BT709,payload=(int)96";
    std::vector<std::string> argv = {"gst-launch-1.0", "-q", "udpsrc", "port=" + std::to_string(kPortGst),
                                     "buffer-size=536870912", "caps=" + caps, "!", "rtpvrawdepay", "!",
                                     "fakesink", "sync=false", "async=false"};
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork: " + std::string(strerror(errno)));
    if (pid_ == 0) {
      try {
        ndqtest::NetnsLab::enter(ns);
      } catch (...) {
        _exit(126);
      }
      if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
      }
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      execvp(a[0], a.data());
      _exit(127);
    }
    // Up once its socket is bound (at most 10 s).
    for (int i = 0; i < 1000 && !bound(); ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("gst-launch-1.0 exited at start (is gstreamer1.0-plugins-good installed?)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!bound()) throw std::runtime_error("gst-launch-1.0 bound no UDP port " + std::to_string(kPortGst) + " in 10 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the pipeline reaches PLAYING
    pause();
  }
  ~GstReceiver() override {
    if (pid_ > 0) {
      kill(pid_, SIGCONT);
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  void pause() override {
    kill(pid_, SIGSTOP);
    // Stopped for certain before the packets come (state T in /proc/PID/stat).
    for (int i = 0; i < 200 && state() != 'T'; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Chunk drain(uint64_t n, bool) override {
    Chunk c;
    const ndqbench::UdpCounters u0 = udp();
    const uint64_t c0 = cpu_ns();
    kill(pid_, SIGCONT);
    // Done when its socket's queue is empty and its threads stopped running (bounded: 30 s).
    uint64_t prev = c0;
    for (int i = 0; i < 30000; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      const uint64_t now = cpu_ns();
      if (queued() == 0 && now == prev) break;
      prev = now;
    }
    pause();
    c.cpu_ns = cpu_ns() - c0;
    const ndqbench::UdpCounters u1 = udp();
    c.received = u1.in - u0.in;  // datagrams its socket took (the namespace has no other receiver then)
    c.drops = (u1.rcvbuf_errors - u0.rcvbuf_errors) + (u1.in_errors - u0.in_errors);
    (void)n;
    return c;
  }

 private:
  std::string proc(const std::string& what) const { return "/proc/" + std::to_string(pid_) + "/" + what; }
  char state() const {
    std::ifstream f(proc("stat"));
    std::string s;
    std::getline(f, s);
    const auto p = s.rfind(')');
    return p != std::string::npos && p + 2 < s.size() ? s[p + 2] : '?';
  }
  // Its threads' time on a CPU (ns; user and system).
  uint64_t cpu_ns() const {
    uint64_t sum = 0;
    DIR* d = opendir(proc("task").c_str());
    if (!d) return 0;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream f(proc("task/") + e->d_name + "/schedstat");
      uint64_t run = 0;
      if (f >> run) sum += run;
    }
    closedir(d);
    return sum;
  }
  // Its port's line of /proc/PID/net/udp (the process's namespace): rx_queue bytes, or -1.
  long long queued() const {
    std::ifstream f(proc("net/udp"));
    std::string line;
    char port[8];
    std::snprintf(port, sizeof port, ":%04X", kPortGst);
    std::getline(f, line);
    while (std::getline(f, line)) {
      std::istringstream s(line);
      std::string sl, local, remote, st, queues;
      s >> sl >> local >> remote >> st >> queues;
      if (local.size() >= 5 && local.compare(local.size() - 5, 5, port) == 0) {
        const auto colon = queues.find(':');
        return colon == std::string::npos ? -1 : std::stoll(queues.substr(colon + 1), nullptr, 16);
      }
    }
    return -1;
  }
  bool bound() const { return queued() >= 0; }
  ndqbench::UdpCounters udp() const { return ndqbench::read_udp(proc("net/snmp")); }
  pid_t pid_ = -1;
};

// net.core.rmem_max (not per namespace): raised so GStreamer's udpsrc gets its 512 MiB buffer
// for the preload, put back on every exit path.
class RmemMax {
 public:
  explicit RmemMax(uint64_t want) {
    std::ifstream f(kPath);
    f >> old_;
    if (old_ < want) set(want);
  }
  ~RmemMax() {
    if (changed_) set(old_);
  }

 private:
  static constexpr const char* kPath = "/proc/sys/net/core/rmem_max";
  void set(uint64_t v) {
    std::ofstream f(kPath);
    f << v;
    changed_ = true;
  }
  uint64_t old_ = 0;
  bool changed_ = false;
};

std::unique_ptr<Session> socket_session(ndqtest::NetnsLab& lab, uint16_t port) {
  const std::string yaml = R"(
memory_regions:
  - {name: bufs, kind: host, buf_size: 2048, num_bufs: 8192}
interfaces:
  - name: video
    engine: socket
    address: udp://)" + lab.a().ip4 + ":" + std::to_string(port) + R"(
    rx:
      queues:
        - {id: 0, mode: direct, batch_size: 64, ring_depth: 16, memory_regions: [bufs]}
    socket:
      rcvbuf: 536870912
)";
  return lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(Config::parse(yaml, "bench/st2110 socket")); });
}

std::unique_ptr<Session> afxdp_session(ndqtest::NetnsLab& lab) {
  ndqtest::AfxdpIface x;
  x.dev = lab.a().veth;
  x.rx_queues = {0};
  x.flows = {ndqtest::udp_flow(1, 0, kPortAfxdp)};
  x.buf_size = 2048;
  x.num_bufs = 2 * kXskRing;
  x.ring_depth = 16;
  x.afxdp.rx_ring = kXskRing;
  x.afxdp.fill_ring = kXskRing;
  Config cfg = x.build();
  cfg.interfaces[0].rx.queues[0].batch_size = 64;
  return lab.run_in(lab.a().ns, [&] { return std::make_unique<Session>(cfg); });
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) o += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return o;
}

int run(const Options& o) {
  std::string why;
  if (!ndqtest::NetnsLab::supported(&why)) {
    std::fprintf(stderr, "netdaq_bench_st2110: needs root and ip(8): %s\n", why.c_str());
    return 1;
  }
  if (o.cpu >= 0) {  // the whole process (sender, receivers, the kernel's delivery) on one core
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(o.cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
  }
  const double deadline = now_s() + o.max_seconds;
  RmemMax rmem(512ull << 20);
  ndqtest::NetnsLab lab;
  // GRO as a NIC's driver does it (on by default there): the kernel coalesces a stream's
  // datagrams for sockets that ask (UDP_GRO: netdaq's socket engine), GStreamer's socket gets
  // them one by one. A veth needs three knobs for that: gro on; rx-udp-gro-forwarding, without
  // which veth keeps locally sent UDP off its NAPI path; and threaded NAPI, so that packets
  // gather between polls as they do behind a NIC's interrupt moderation (a softirq run after
  // every send would flush each datagram alone).
  if (o.gro) {
    const std::string& dev = lab.a().veth;
    std::string out;
    // threaded lives only in sysfs, and a sysfs shows the devices of the namespace that
    // mounted it: one mounted from inside the namespace on a temporary directory (not `ip
    // netns exec`, whose remount of / fails where / is no mount point, as in a chroot)
    const std::string threaded = "d=$(mktemp -d) && mount -t sysfs sysfs \"$d\" && { echo 1 > \"$d/class/net/" + dev +
                                 "/threaded\"; r=$?; umount \"$d\"; rmdir \"$d\"; exit $r; }";
    if (lab.exec_in(lab.a().ns, {"ethtool", "-K", dev, "gro", "on", "rx-udp-gro-forwarding", "on"}, &out) != 0 ||
        lab.exec_in(lab.a().ns, {"sh", "-c", threaded}, &out) != 0)
      throw std::runtime_error("cannot turn on GRO and threaded NAPI on " + dev + ": " + out + "(--gro off runs without)");
  }
  // A permanent neighbour entry for the receivers' address: while ARP resolves, the kernel
  // queues only a few packets of a burst and drops the rest without telling the sender.
  auto make_sender = [](ndqtest::NetnsLab& l) {
    if (l.exec_in(l.b().ns, {"ip", "neigh", "replace", l.a().ip4, "lladdr", l.mac(l.a()), "dev", l.b().veth, "nud",
                             "permanent"}) != 0)
      throw std::runtime_error("cannot add a neighbour entry for " + l.a().ip4);
    return l.run_in(l.b().ns, [&] { return std::make_unique<Sender>(l.a().ip4); });
  };
  auto sender = make_sender(lab);
  // (x) on a veth pair of its own: an XDP program on a veth takes GSO off its peer and queues
  // every packet through a 256-slot ring, which drops a GSO burst's segments unreported.
  std::unique_ptr<ndqtest::NetnsLab> xlab;
  std::unique_ptr<Sender> xsender;
  if (o.only.find('x') != std::string::npos) xlab = std::make_unique<ndqtest::NetnsLab>(), xsender = make_sender(*xlab);
  bool checks_ok = true, targets_ok = true;
  std::ostringstream js;
  js << "{\"bench\":\"st2110\",\"method\":\"preloaded queue, receiver CPU per packet\",\"veth_gro\":" << (o.gro ? "true" : "false")
     << ",\"sender_gso_segments\":" << o.gso << ",\"payload\":" << o.payload
     << ",\"formats\":[";
  for (size_t fi = 0; fi < o.formats.size(); ++fi) {
    const Format f = parse_format(o.formats[fi]);
    Stream st = make_stream(f, o.payload);
    const uint32_t ppf = st.sender->packets_per_frame();
    const uint32_t frames_per_round = std::max<uint32_t>(1, (o.packets + ppf - 1) / ppf);
    const uint32_t per_round = frames_per_round * ppf;
    const double stream_pps = double(ppf) * f.v.rate_num / f.v.rate_den;
    std::printf("%s: %u x %u YCbCr-4:2:2 10-bit, %u packets per frame (payload %u B), %.0f packets/s and %.2f Gb/s per stream; %u frames per round\n",
                f.name.c_str(), f.v.width, f.v.height, ppf, o.payload, stream_pps,
                double(st.sender->frame_bytes()) * 8 * f.v.rate_num / f.v.rate_den / 1e9, frames_per_round);
    st.build(per_round);  // every round sends the same frames (two patterns alternating); timestamps go on
    struct Live {
      std::string name;
      ndqtest::NetnsLab* lab;  // the veth pair its packets cross
      Sender* tx;
      uint32_t gso;  // packets per sender message
      uint16_t port;
      std::unique_ptr<Receiver> rx;
      CaseResult res;
    };
    std::vector<Live> live;
    for (const std::string n : {"n", "x", "g", "r", "k"}) {
      if (o.only.find(n) == std::string::npos) continue;
      Live l{n, &lab, sender.get(), o.gso, 0, nullptr, {}};
      l.res.name = n;
      if (n == "n") l.port = kPortSocket, l.rx = std::make_unique<NetdaqReceiver>(socket_session(lab, kPortSocket), "video", f.v, st);
      if (n == "x") {
        // one datagram a message: AF_XDP in copy mode takes each packet alone whatever its skb
        l.lab = xlab.get(), l.tx = xsender.get(), l.gso = 1, l.port = kPortAfxdp;
        l.rx = std::make_unique<NetdaqReceiver>(afxdp_session(*xlab), "x0", f.v, st);
      }
      if (n == "r") l.port = kPortRaw, l.rx = std::make_unique<NetdaqReceiver>(socket_session(lab, kPortRaw), "video", f.v, st, false);
      if (n == "k") {
        l.port = kPortKernel;
        l.rx = lab.run_in(lab.a().ns, [&]() -> std::unique_ptr<Receiver> {
          const int fd = socket(AF_INET, SOCK_DGRAM, 0);
          int rcv = 512 << 20;
          sockaddr_in a{};
          a.sin_family = AF_INET;
          a.sin_port = htons(kPortKernel);
          if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof rcv) != 0 ||
              bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            throw std::runtime_error("UDP socket for (k): " + std::string(strerror(errno)));
          return std::make_unique<KernelFloorReceiver>(fd);
        });
      }
      if (n == "g") l.port = kPortGst, l.rx = std::make_unique<GstReceiver>(lab.a().ns, f.v, o.cpu);
      live.push_back(std::move(l));
    }
    for (uint32_t r = 0; r <= o.rounds && now_s() < deadline; ++r) {
      // Timestamps must keep increasing: each round's packets are the stream's next frames.
      if (r > 0) st.build(per_round);
      for (Live& l : live) {
        uint64_t cpu = 0, got = 0;
        for (uint32_t from = 0; from < per_round; from += kChunkMax) {
          const uint32_t n = std::min(kChunkMax, per_round - from);
          Chunk c;
          l.rx->pause();
          c.sent = l.tx->send(st, from, n, l.port, 10.0, &c.refused, l.gso);
          std::this_thread::sleep_for(std::chrono::milliseconds(40));  // the kernel's delivery settles
          const Chunk d = l.rx->drain(c.sent, r == 0);
          if (c.sent != n || d.received != c.sent || d.drops) {
            // Where the packets went: both veths' counters (drops, the NAPI ring) and the namespace's UDP ones.
            std::string out, o;
            const ndqtest::NetnsLab& w = *l.lab;
            w.exec_in(w.a().ns, {"ip", "-s", "-o", "link", "show", "dev", w.a().veth}, &o), out += o;
            w.exec_in(w.b().ns, {"ip", "-s", "-o", "link", "show", "dev", w.b().veth}, &o), out += o;
            w.exec_in(w.a().ns, {"cat", "/proc/net/snmp"}, &o), out += o;
            std::printf("%s %s round %u chunk at %u: sent %llu of %u, received %llu, drops %llu, refused %llu\n%s", f.name.c_str(),
                        l.name.c_str(), r, from, (unsigned long long)c.sent, n, (unsigned long long)d.received,
                        (unsigned long long)d.drops, (unsigned long long)c.refused, out.c_str());
            l.res.error += "round " + std::to_string(r) + ": sent " + std::to_string(c.sent) + " of " + std::to_string(n) +
                           ", received " + std::to_string(d.received) + ", drops " + std::to_string(d.drops) + "; ";
            checks_ok = false;
          }
          cpu += d.cpu_ns, got += d.received;
        }
        if (r == 0) {
          const std::string e = l.rx->check();
          if (!e.empty()) l.res.error += e, checks_ok = false;
          std::printf("%s %s verify: %s\n", f.name.c_str(), l.name.c_str(), e.empty() ? "ok" : e.c_str());
        } else if (got) {
          l.res.ns_per_packet.push_back(double(cpu) / double(got));
        }
      }
    }
    // Other streams' traffic must not reach the next format's receivers: they go now.
    auto find = [&](const char* n) -> const CaseResult* {
      for (auto& l : live)
        if (l.name == n) return &l.res;
      return nullptr;
    };
    static const char* kLabel[] = {"(n) netdaq socket + frames", "(x) netdaq afxdp + frames", "(g) GStreamer udpsrc ! rtpvrawdepay",
                                   "(r) netdaq socket, no frames [diag]", "(k) recvmmsg + UDP_GRO alone [diag]"};
    js << (fi ? "," : "") << "{\"format\":\"" << f.name << "\",\"width\":" << f.v.width << ",\"height\":" << f.v.height
       << ",\"packets_per_frame\":" << ppf << ",\"stream_pps\":" << stream_pps << ",\"receivers\":[";
    std::printf("%-8s %-38s %10s %12s %14s %12s\n", "format", "receiver", "ns/pkt", "us/frame", "capacity Mpps", "streams/core");
    bool first = true;
    for (auto& l : live) {
      const double ns = l.res.median();
      const double cap = ns > 0 ? 1e9 / ns : 0;
      const int idx = l.name == "n" ? 0 : l.name == "x" ? 1 : l.name == "g" ? 2 : l.name == "r" ? 3 : 4;
      std::printf("%-8s %-38s %10.1f %12.1f %14.3f %12.2f%s\n", f.name.c_str(), kLabel[idx], ns, ns * ppf / 1e3, cap / 1e6,
                  cap / stream_pps, l.res.error.empty() ? "" : "  (check failed)");
      if (!l.res.error.empty()) std::printf("         (%s): %s\n", l.name.c_str(), l.res.error.c_str());
      js << (first ? "" : ",") << "{\"receiver\":\"" << l.name << "\",\"label\":\"" << kLabel[idx] << "\",\"ns_per_packet\":" << ns
         << ",\"us_per_frame\":" << ns * ppf / 1e3 << ",\"capacity_pps\":" << cap << ",\"streams_per_core\":" << cap / stream_pps
         << ",\"rounds_ns_per_packet\":[";
      for (size_t k = 0; k < l.res.ns_per_packet.size(); ++k) js << (k ? "," : "") << l.res.ns_per_packet[k];
      js << "],\"error\":\"" << json_escape(l.res.error) << "\"}";
      first = false;
    }
    js << "],\"ratios\":[";
    const CaseResult *n = find("n"), *x = find("x"), *g = find("g");
    bool firstr = true;
    auto ratio = [&](const char* what, const CaseResult* a, const CaseResult* b, double target) {
      if (!a || !b || a->median() <= 0 || b->median() <= 0) return;
      const double v = b->median() / a->median();  // capacity ratio = inverse CPU ratio
      const bool pass = v >= target;
      if (!pass) targets_ok = false;
      std::printf("%-8s ratio %s = %.2f (target >= %.2f): %s\n", f.name.c_str(), what, v, target, pass ? "PASS" : "MISS");
      js << (firstr ? "" : ",") << "{\"ratio\":\"" << what << "\",\"value\":" << v << ",\"target\":" << target
         << ",\"pass\":" << (pass ? "true" : "false") << "}";
      firstr = false;
    };
    ratio("streams per core (n)/(g)", n, g, kTargetSocket);
    if (n) ratio("streams per core (x)/(g)", x, g, n && g && n->median() > 0 ? g->median() / n->median() : kTargetSocket);
    js << "]";
    live.clear();  // other streams' receivers go before the pacing run
    if (o.only.find('p') != std::string::npos) {  // the sender's pacing as a receiver sees it
      const ndqbench::PacingResult p =
          ndqbench::measure_pacing(lab, f.v, o.payload, o.pacing_frames, o.cpu >= 0 ? (o.cpu == 0 ? 1 : 0) : -1);
      std::printf("%s", ndqbench::pacing_text(f.name, p).c_str());
      if (!p.error.empty()) {
        std::printf("%-8s (p): %s\n", f.name.c_str(), p.error.c_str());
        checks_ok = false;
      }
      js << ",\"pacing\":" << ndqbench::pacing_json(p);
    }
    js << "}";
  }
  js << "],\"checks_ok\":" << (checks_ok ? "true" : "false") << ",\"targets_ok\":" << (targets_ok ? "true" : "false") << "}\n";
  std::printf("checks (accounting, frames byte for byte): %s\n", checks_ok ? "ok" : "FAILED");
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << js.str();
    if (!out) throw std::runtime_error("cannot write " + o.json);
  }
  if (!checks_ok) return 3;
  return o.enforce && !targets_ok ? 5 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--formats" && has) o.formats = ndqbench::split_commas(argv[++i]);
    else if (a == "--rounds" && has) o.rounds = uint32_t(std::stoul(argv[++i]));
    else if (a == "--packets" && has) o.packets = uint32_t(std::stoul(argv[++i]));
    else if (a == "--payload" && has) o.payload = uint32_t(std::stoul(argv[++i]));
    else if (a == "--only" && has) o.only = argv[++i];
    else if (a == "--cpu" && has) o.cpu = std::stoi(argv[++i]);
    else if (a == "--max-seconds" && has) o.max_seconds = std::stod(argv[++i]);
    else if (a == "--json" && has) o.json = argv[++i];
    else if (a == "--enforce") o.enforce = true;
    else if (a == "--gro" && has) o.gro = std::string(argv[++i]) != "off";
    else if (a == "--gso" && has) o.gso = uint32_t(std::stoul(argv[++i]));
    else if (a == "--pacing-frames" && has) o.pacing_frames = uint32_t(std::stoul(argv[++i]));
    else {
      std::fprintf(stderr,
                   "usage: netdaq_bench_st2110 [--formats 1080p60,2160p60] [--rounds R] [--packets N] [--payload B]\n"
                   "                           [--only n,x,g,p] [--cpu C] [--gro on|off] [--gso N] [--pacing-frames F] [--max-seconds S]\n"
                   "                           [--json PATH] [--enforce]\n");
      return 1;
    }
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netdaq_bench_st2110: %s\n", e.what());
    return 1;
  }
}
