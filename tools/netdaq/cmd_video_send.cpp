// netdaq video-send [CONFIG] --destination udp://HOST:PORT: send uncompressed video as RFC 4175 /
// SMPTE ST 2110-20 RTP (src/sensors/video_sender.h): N frames of a test pattern (colour bars, a
// moving box) or of a raw file (--file, frames of line_bytes x height, looped), paced as
// ST 2110-21's narrow gapped sender (--pacing gapped: each packet waits for its departure time,
// TRO + p x T_DRAIN into its frame period), or by the TX queue's token bucket at N_pkts per
// T_FRAME (--pacing linear: tx.rate_pps; ST 2110-21's linear sender), or not at all. Without
// CONFIG a socket-engine interface sends; with one, its first interface with tx queues (socket,
// afxdp, dpdk: any engine that sends UDP payloads). Prints what it sent and how late packets
// left their schedule; --json.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "errors.h"
#include "netdaq/device_frames.h"
#include "idle_backoff.h"
#include "netdaq/netdaq.h"
#include "signals.h"
#include "video_pacing.h"
#include "video_sender.h"

namespace netdaq::cli {

namespace {

struct VideoSendOptions {
  std::string config, destination, file, sampling = "YCbCr-4:2:2", rate = "60", pacing = "gapped";
  std::string rows = "field";  // interlaced SRD rows: field (ST 2110-20) or frame (GStreamer's rtpvrawpay)
  uint64_t frames = 0;  // 0: the file's frames, or 60 of the pattern
  uint32_t width = 1920, height = 1080, depth = 10, payload_size = 1200, pattern_frames = 8;
  int payload_type = 96;
  uint32_t ssrc = 0x21100001, first_timestamp = 0;
  bool interlaced = false, json = false;
  uint32_t lead_us = 2000;  // the first frame's period starts this long after setup
  std::string epoch = "now";  // tai: frame periods and RTP time counted from the SMPTE epoch (ST 2110-10)
  uint32_t burst = 1;       // gapped: packets of a frame sent together at the last one's time
  uint32_t vrx_start = sensors::St2110Timing::kVrxStart;  // gapped: packets sent ahead of the VRX reads
  int from_gpu = -1;        // >= 0: the frames live in this GPU's memory and are read from there
};

[[noreturn]] void fail(const std::string& m) { throw Error(Errc::invalid_config, m); }

// "60", "50", "60000/1001", "59.94", "29.97", "23.98": the SDP exactframerate.
void parse_rate(const std::string& s, uint32_t& num, uint32_t& den) {
  const auto bad = [&] {
    fail("--rate '" + s + "': must be a frame rate like 60, 50, 59.94 (60000/1001) or NUM/DEN");
  };
  try {
    size_t used = 0;
    if (const auto slash = s.find('/'); slash != std::string::npos) {
      num = static_cast<uint32_t>(std::stoul(s.substr(0, slash), &used));
      if (used != slash) bad();
      den = static_cast<uint32_t>(std::stoul(s.substr(slash + 1), &used));
      if (used != s.size() - slash - 1) bad();
    } else if (s.find('.') != std::string::npos) {
      const double r = std::stod(s, &used);
      if (used != s.size()) bad();
      const double ntsc = std::ceil(r) * 1000.0 / 1001.0;  // 59.94 = 60000/1001
      if (std::fabs(r - ntsc) < 0.006) {
        num = static_cast<uint32_t>(std::ceil(r) * 1000);
        den = 1001;
      } else if (std::fabs(r - std::round(r)) < 1e-9) {
        num = static_cast<uint32_t>(std::round(r));
        den = 1;
      } else {
        bad();
      }
    } else {
      num = static_cast<uint32_t>(std::stoul(s, &used));
      den = 1;
      if (used != s.size()) bad();
    }
  } catch (const std::logic_error&) {
    bad();
  }
  if (num == 0 || den == 0) bad();
}

VideoSampling parse_sampling(const std::string& s) {
  std::string l = s;
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (l == "ycbcr-4:2:2") return VideoSampling::ycbcr_422;
  if (l == "ycbcr-4:4:4") return VideoSampling::ycbcr_444;
  if (l == "rgb") return VideoSampling::rgb;
  fail("--sampling '" + s + "': must be YCbCr-4:2:2, YCbCr-4:4:4 or RGB (SDP sampling=)");
}

sensors::VideoSenderConfig sender_config(const VideoSendOptions& o) {
  sensors::VideoSenderConfig c;
  c.video.width = o.width;
  c.video.height = o.height;
  c.video.sampling = parse_sampling(o.sampling);
  c.video.depth = static_cast<uint8_t>(std::min<uint32_t>(o.depth, 255));
  c.video.interlaced = o.interlaced;
  if (o.rows == "field") c.video.rows = VideoRows::field;
  else if (o.rows == "frame") c.video.rows = VideoRows::frame;
  else fail("--rows = '" + o.rows + "': allowed are field (SMPTE ST 2110-20: lines within the field) or frame");
  parse_rate(o.rate, c.video.rate_num, c.video.rate_den);
  c.video.payload_type = static_cast<int16_t>(o.payload_type);
  c.payload_size = o.payload_size;
  c.ssrc = o.ssrc;
  c.first_timestamp = o.first_timestamp;
  return c;
}

// The built-in config without CONFIG: one socket-engine interface sending to the destination.
std::string builtin_config(const std::string& dest, uint32_t buf_size) {
  return "memory_regions:\n"
         "  - {name: video_tx, kind: host, buf_size: " + std::to_string(buf_size) + ", num_bufs: 4096}\n"
         "interfaces:\n"
         "  - name: video\n"
         "    engine: socket\n"
         "    tx:\n"
         "      destination: " + dest + "\n"
         "      queues:\n"
         "        - {id: 0, batch_size: 64, ring_depth: 16, memory_regions: [video_tx]}\n"
         "    socket: {sndbuf: 16777216}\n";
}

// A read-only view of a raw frames file (mmap: a file of any size costs no copy).
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail("--file '" + path + "': cannot open it: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
      ::close(fd);
      fail("--file '" + path + "': empty or not a regular file");
    }
    size_ = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) fail("--file '" + path + "': mmap failed: " + std::strerror(errno));
    data_ = static_cast<const std::byte*>(p);
  }
  ~MappedFile() { ::munmap(const_cast<std::byte*>(data_), size_); }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }

 private:
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

const InterfaceConfig* first_tx_interface(const Config& cfg) {
  for (const auto& i : cfg.interfaces)
    if (!i.tx.queues.empty()) return &i;
  return nullptr;
}

struct Sent {
  uint64_t frames = 0, packets = 0, bytes = 0, bursts = 0, multi_packet_bursts = 0;
  int from_gpu = -1;
  uint64_t gpu_frame_waits = 0;  // --from-gpu: frames the sender waited for (read slower than sent)
  std::optional<TaiStart> tai;   // --epoch tai
  double seconds = 0;
  LatenessStats late;
};

int report(const VideoSendOptions& o, const sensors::VideoSender& s, const std::string& engine, const std::string& dest,
           const Sent& r, const QueueStats& st, uint64_t frames_asked) {
  const sensors::St2110Timing t = s.timing();
  const double mbps = r.seconds > 0 ? double(r.bytes) * 8 / r.seconds / 1e6 : 0;
  const double fps = r.seconds > 0 ? double(r.frames) / r.seconds : 0;
  const uint64_t drops = st.total_drops();
  const auto& v = s.config().video;
  if (o.json) {
    nlohmann::json j{{"frames", r.frames},
                     {"packets", r.packets},
                     {"bytes", r.bytes},
                     {"seconds", r.seconds},
                     {"mbps", mbps},
                     {"frames_per_s", fps},
                     {"engine", engine},
                     {"destination", dest},
                     {"width", v.width},
                     {"height", v.height},
                     {"sampling", to_string(v.sampling)},
                     {"depth", v.depth},
                     {"interlaced", v.interlaced},
                     {"rows", to_string(v.rows)},
                     {"rate", std::to_string(v.rate_num) + "/" + std::to_string(v.rate_den)},
                     {"payload_type", s.payload_type()},
                     {"ssrc", s.config().ssrc},
                     {"line_bytes", s.line_bytes()},
                     {"frame_bytes", s.frame_bytes()},
                     {"payload_size", s.config().payload_size},
                     {"max_packet_bytes", s.max_packet_bytes()},
                     {"packets_per_frame", s.packets_per_frame()},
                     {"packets_per_field", s.packets_per_field()},
                     {"pacing", o.pacing},
                     {"st2110_21", {{"t_frame_ns", t.t_frame_ns},
                                    {"tro_ns", t.tro_ns},
                                    {"t_drain_ns", t.t_drain_ns},
                                    {"vrx_start", o.vrx_start},
                                    {"r_active", t.r_active},
                                    {"cmax", t.cmax()}}},
                     {"lateness", {{"packets", r.late.count()},
                                   {"mean_ns", r.late.mean_ns()},
                                   {"p50_below_ns", r.late.quantile_bound_ns(0.5)},
                                   {"p99_below_ns", r.late.quantile_bound_ns(0.99)},
                                   {"max_ns", r.late.max_ns()}}},
                     {"bursts", r.bursts},
                     {"multi_packet_bursts", r.multi_packet_bursts},
                     {"queue_packets", st.packets},
                     {"queue_drops", drops},
                     {"mode", st.mode}};
    if (r.tai)
      j["epoch"] = {{"clock", "tai"},
                    {"first_frame", r.tai->epoch_frame},
                    {"first_timestamp", s.timestamp_of(0)},
                    {"tai_minus_utc_s", r.tai->tai_minus_utc_s}};
    if (r.from_gpu >= 0) j["from_gpu"] = {{"gpu", r.from_gpu}, {"frame_waits", r.gpu_frame_waits}};
    std::printf("%s\n", j.dump(1).c_str());
  } else {
    std::printf("netdaq video-send: %llu frames (%ux%u%s %s %u-bit @ %u/%u, %u packets each) = %llu packets, %llu "
                "bytes to %s in %.3f s: %.1f Mbit/s, %.2f frames/s\n",
                (unsigned long long)r.frames, v.width, v.height, v.interlaced ? "i" : "p", to_string(v.sampling),
                unsigned(v.depth), v.rate_num, v.rate_den, s.packets_per_frame(), (unsigned long long)r.packets,
                (unsigned long long)r.bytes, dest.c_str(), r.seconds, mbps, fps);
    std::printf("  pacing %s: T_FRAME %.1f us, TRO %.1f us, T_DRAIN %.3f us (R_ACTIVE %.4f, CMAX %.1f); late "
                "mean %.1f us, p99 < %.1f us, max %.1f us; %llu bursts (%llu of several packets)\n",
                o.pacing.c_str(), t.t_frame_ns / 1e3, t.tro_ns / 1e3, t.t_drain_ns / 1e3, t.r_active, t.cmax(),
                r.late.mean_ns() / 1e3, r.late.quantile_bound_ns(0.99) / 1e3, r.late.max_ns() / 1e3,
                (unsigned long long)r.bursts, (unsigned long long)r.multi_packet_bursts);
    if (r.tai)
      std::printf("  epoch tai: frame 0 is RTP frame %llu since 1970-01-01 TAI, timestamp %u; CLOCK_TAI - UTC = %lld s%s\n",
                  (unsigned long long)r.tai->epoch_frame, s.timestamp_of(0), (long long)r.tai->tai_minus_utc_s,
                  r.tai->tai_minus_utc_s == 0 ? " (the kernel's TAI offset is not set: ptp4l/phc2sys or chrony set it)"
                                               : "");
    if (r.from_gpu >= 0)
      std::printf("  frames read from GPU %d's memory: waited for %llu of them\n", r.from_gpu,
                  (unsigned long long)r.gpu_frame_waits);
    std::printf("  queue (engine %s): %llu sent, %llu dropped (%s)\n", engine.c_str(), (unsigned long long)st.packets,
                (unsigned long long)drops, st.mode.c_str());
  }
  if (r.frames < frames_asked) return kExitLoss;
  return drops ? kExitLoss : kExitOk;
}

// The longest the engine may take nothing (no buffer to allocate, no packet taken) before
// video-send gives up: a queue that is stuck, not one that is busy.
constexpr uint64_t kStuckNs = 2'000'000'000;

// Sends `b` until it is empty, a stop is asked or the engine took nothing for kStuckNs;
// returns false when packets are left (released unsent: the queue counts them tx_unsent).
bool send_all(TxBurst& b, IdleBackoff& idle) {
  uint64_t since = mono_ns();
  while (b && !stop_requested()) {
    if (b.send()) {
      idle.reset();
      since = mono_ns();
    } else if (mono_ns() - since > kStuckNs) {
      return false;
    } else {
      idle.wait();
    }
  }
  return !b;
}

int video_send(const VideoSendOptions& o) {
  const std::string err = "netdaq video-send: ";
  std::unique_ptr<sensors::VideoSender> sender;
  if (!setup_step([&] { sender = std::make_unique<sensors::VideoSender>(sender_config(o)); }, err)) return kExitError;

  // Frames: the file's (mapped), or pattern frames rendered before sending.
  std::unique_ptr<MappedFile> file;
  std::vector<std::byte> pattern;
  uint64_t frames = o.frames;
  if (!setup_step([&] {
        if (!o.file.empty()) {
          file = std::make_unique<MappedFile>(o.file);
          if (file->bytes().size() % sender->frame_bytes() != 0)
            fail("--file '" + o.file + "': " + std::to_string(file->bytes().size()) + " bytes is not a whole number of " +
                 std::to_string(sender->frame_bytes()) + "-byte frames (" + std::to_string(sender->line_bytes()) +
                 " bytes x " + std::to_string(o.height) + " lines)");
          sender->set_frames(file->bytes());
          if (frames == 0) frames = file->bytes().size() / sender->frame_bytes();
        } else {
          if (frames == 0) frames = 60;
          // At most 256 MiB of rendered frames (13 of 2160p 10-bit), at least one.
          const uint64_t fit = std::max<uint64_t>(1, (uint64_t{256} << 20) / sender->frame_bytes());
          const uint64_t n = std::clamp<uint64_t>(std::min<uint64_t>(o.pattern_frames, frames), 1, fit);
          pattern.resize(n * sender->frame_bytes());
          for (uint64_t k = 0; k < n; ++k)
            sensors::write_video_test_pattern(sender->config().video, k,
                                              std::span(pattern).subspan(k * sender->frame_bytes(), sender->frame_bytes()));
          sender->set_frames(pattern);
        }
      },
                  err))
    return kExitError;

  // --from-gpu: the frames move into GPU memory (as an application's rendered or processed frames
  // would be there) and each is read back into one of two pinned slots while the one before is
  // sent; the sender sees the slots as its two frames.
  std::unique_ptr<gpu::DeviceCopy> on_gpu;
  std::unique_ptr<gpu::DeviceFrameReader> reader;
  if (o.from_gpu >= 0 && !setup_step([&] {
        const auto frames_bytes = file ? file->bytes() : std::span<const std::byte>(pattern);
        on_gpu = std::make_unique<gpu::DeviceCopy>(frames_bytes, o.from_gpu);
        pattern = {};
        reader = std::make_unique<gpu::DeviceFrameReader>(on_gpu->data(), sender->frame_bytes(),
                                                          frames_bytes.size() / sender->frame_bytes(), o.from_gpu);
        file.reset();
        sender->set_frames(reader->slots());
      },
                                       err))
    return kExitError;

  Config cfg;
  const uint32_t buf = sender->max_packet_bytes() <= 2048 ? 2048 : 9216;
  if (o.config.empty()) {
    if (o.destination.empty()) {
      std::fprintf(stderr, "%s--destination udp://HOST:PORT is required without a CONFIG\n", err.c_str());
      return kExitError;
    }
    if (!setup_step([&] { cfg = Config::parse(builtin_config(o.destination, buf), "<video-send>"); }, err))
      return kExitError;
  } else if (!setup_step([&] { cfg = Config::load(o.config); }, err + o.config + ": ")) {
    return kExitError;
  }
  const InterfaceConfig* iface = first_tx_interface(cfg);
  if (!iface) {
    std::fprintf(stderr, "%s%s: no interface with tx queues\n", err.c_str(), cfg.source.c_str());
    return kExitError;
  }
  if (const auto caps = capabilities_of(*iface); caps && caps->tx_whole_frames) {
    std::fprintf(stderr, "%s%s: interface '%s' sends whole Ethernet frames (tx_raw_frames): video-send writes RTP "
                         "over UDP payloads; use an interface whose engine writes the IP/UDP headers\n",
                 err.c_str(), cfg.source.c_str(), iface->name.c_str());
    return kExitError;
  }
  const std::string name = iface->name, engine = iface->engine;
  const uint16_t qid = iface->tx.queues.front().id;
  const size_t batch = std::clamp<uint32_t>(iface->tx.queues.front().batch_size, 1, 1024);
  sensors::St2110Timing t = sender->timing();
  t.vrx_start = o.vrx_start;
  std::string dest;
  for (auto& i : cfg.interfaces)
    if (i.name == name) {
      if (!o.destination.empty()) i.tx.destination = o.destination;
      dest = i.tx.destination;
      if (o.pacing == "linear") {  // the queue's token bucket: N_pkts per T_FRAME, no gap (ST 2110-21 linear)
        i.tx.rate_mbps = 0;
        i.tx.rate_pps = 1e9 * t.packets / t.t_frame_ns;
      } else if (o.pacing == "gapped") {
        i.tx.rate_mbps = i.tx.rate_pps = 0;  // this loop paces
      }
    }
  install_stop_signals();
  std::unique_ptr<Session> session;
  TxQueue* q = nullptr;
  if (!setup_step([&] {
        session = std::make_unique<Session>(std::move(cfg));
        q = &session->tx_queue(name, qid);
      },
                  err))
    return kExitError;

  Sent r;
  const uint64_t total = frames * sender->packets_per_frame();
  const uint32_t per_field = sender->packets_per_field();
  const uint32_t burst = o.burst;
  IdleBackoff idle;
  uint64_t begun = ~uint64_t{0};     // --from-gpu: the frame begin_frame was called for
  std::array<uint64_t, 1024> due{};  // departure times of a burst's packets
  const uint64_t t0 = mono_ns();
  uint64_t progress = t0;  // the last time a buffer was allocated
  uint64_t epoch = t0 + uint64_t{o.lead_us} * 1000;  // frame 0's period starts here
  if (o.epoch == "tai") {
    const TaiStart at = tai_aligned_start(t, sender->fields(), uint64_t{o.lead_us} * 1000);
    sender->set_epoch_frame(at.epoch_frame);
    epoch = at.mono_ns - t.frame_start_ns(0);
    r.tai = at;
  }
  constexpr uint64_t kSpinNs = 60'000;  // sleep until 60 us before a departure, then spin
  while (r.packets < total && !stop_requested()) {
    size_t n = std::min<uint64_t>(batch, total - r.packets);
    if (reader) {  // a burst ends with its frame: the next frame's bytes are read first
      if (sender->packet_in_field() == 0 && sender->fields_done() % sender->fields() == 0 &&
          begun != sender->frames_done()) {
        begun = sender->frames_done();
        if (!setup_step([&] { reader->begin_frame(begun); }, err)) return kExitError;
      }
      n = std::min<size_t>(n, sender->packets_left_in_frame());
    }
    uint64_t now = 0;
    if (o.pacing == "gapped") {
      // Wait for the departure of the last packet of the next group (--burst: 1 = each packet
      // at its own time; g > 1: g packets of one frame leave together, none early, one syscall
      // and with GSO one trip through the stack), then take every packet already due (a late
      // sender catches up in one burst instead of drifting).
      uint64_t k = sender->fields_done();
      uint32_t p = sender->packet_in_field();
      due[0] = epoch + t.departure_ns(k, p);
      const uint32_t group_last = std::min<uint64_t>({uint64_t{p} + burst - 1, per_field - 1ull, p + n - 1});
      now = wait_until(epoch + t.departure_ns(k, group_last), kSpinNs);
      size_t m = 1;
      while (m < n) {
        if (++p == per_field) {
          p = 0;
          ++k;
        }
        due[m] = epoch + t.departure_ns(k, p);
        if (due[m] > now) break;
        ++m;
      }
      n = m;
    }
    TxBurst b = q->allocate(n);
    if (!b) {
      if (mono_ns() - progress > kStuckNs) {
        std::fprintf(stderr, "%sthe tx queue had no free buffer for %.0f s: stopping\n", err.c_str(), kStuckNs / 1e9);
        break;
      }
      idle.wait();
      continue;
    }
    progress = mono_ns();
    const size_t want = b.size();
    if (sender->fill(b) < want) {
      std::fprintf(stderr, "%sa packet of %u bytes does not fit the tx queue's buffers (%zu bytes): raise the region's "
                           "buf_size or lower --payload-size\n",
                   err.c_str(), sender->max_packet_bytes(), b[0].buffer().size());
      return kExitError;
    }
    for (Packet& p : b) r.bytes += p.size();
    if (!send_all(b, idle) && !stop_requested()) {
      std::fprintf(stderr, "%sthe engine took no packet for %.0f s: stopping\n", err.c_str(), kStuckNs / 1e9);
      r.packets += want - b.size();
      break;
    }
    const size_t done = want - b.size();  // what is left was stopped by a signal and is released unsent
    r.packets += done;
    ++r.bursts;
    if (done > 1) ++r.multi_packet_bursts;
    if (o.pacing == "gapped") {
      const uint64_t after = mono_ns();
      for (size_t i = 0; i < done; ++i) r.late.add(after - due[i], 1);
    }
  }
  r.seconds = double(mono_ns() - t0) / 1e9;
  r.frames = r.packets / sender->packets_per_frame();
  if (reader) r.from_gpu = o.from_gpu, r.gpu_frame_waits = reader->waits();
  const QueueStats st = q->stats();
  return report(o, *sender, engine, dest, r, st, frames);
}

}  // namespace

void add_video_send_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<VideoSendOptions>();
  auto* cmd = app.add_subcommand("video-send",
                                 "Send uncompressed video as RFC 4175 / SMPTE ST 2110-20 RTP, paced as ST 2110-21 (narrow gapped)");
  cmd->add_option("config", o->config, "YAML config whose first interface with tx queues sends (default: a socket-engine sender)");
  cmd->add_option("--destination", o->destination, "udp://HOST:PORT to send to (sets tx.destination)");
  cmd->add_option("-n,--frames", o->frames, "Video frames to send (default: the file's frames, or 60)");
  cmd->add_option("--width", o->width, "Pixels per line (default 1920)");
  cmd->add_option("--height", o->height, "Lines per frame, both fields when interlaced (default 1080)");
  cmd->add_option("--sampling", o->sampling, "YCbCr-4:2:2 (default), YCbCr-4:4:4 or RGB");
  cmd->add_option("--depth", o->depth, "Bits per component: 8, 10 (default), 12 or 16");
  cmd->add_option("--rate", o->rate, "Frame rate: 60 (default), 50, 59.94, 60000/1001, ...");
  cmd->add_flag("--interlaced", o->interlaced, "Two fields per frame (even lines, then odd lines)");
  cmd->add_option("--rows", o->rows,
                  "Interlaced SRD row numbers: field (default; SMPTE ST 2110-20, lines within the field) or frame "
                  "(the frame's lines, as GStreamer's rtpvrawpay writes them)");
  cmd->add_option("--payload-size", o->payload_size, "Pixel bytes per packet at most (default 1200; whole pgroups)");
  cmd->add_option("--payload-type", o->payload_type, "RTP payload type 96..127 (default 96)");
  cmd->add_option("--ssrc", o->ssrc, "RTP SSRC (default 0x21100001)");
  cmd->add_option("--first-timestamp", o->first_timestamp, "RTP timestamp of the first frame (default 0)");
  cmd->add_option("--file", o->file, "Raw frames to send (line_bytes x height each, RFC 4175 pgroups), looped");
  cmd->add_option("--pattern-frames", o->pattern_frames, "Test-pattern frames rendered before sending, looped (default 8; at most 256 MiB of them)");
  cmd->add_option("--from-gpu", o->from_gpu,
                  "Keep the frames (pattern or --file) in this GPU's memory and read each from there while the one "
                  "before is sent (two pinned host slots)");
  cmd->add_option("--pacing", o->pacing,
                  "gapped: ST 2110-21 narrow gapped schedule (default); linear: the queue's pacer at N_pkts per "
                  "T_FRAME (ST 2110-21 linear, no vertical gap); none: as fast as the engine takes them")
      ->check(CLI::IsMember({"gapped", "linear", "none"}));
  cmd->add_option("--burst", o->burst,
                  "gapped: send packets in groups of this many at the departure of the group's last (default 1; "
                  "at most CMAX keeps ST 2110-21's narrow bound)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--epoch", o->epoch,
                  "now: frame 0's period starts --lead-us after setup, RTP time from --first-timestamp (default); "
                  "tai: periods and RTP time counted from the SMPTE epoch on CLOCK_TAI (ST 2110-10: receivers "
                  "locked to the same PTP time see frames where they expect them)")
      ->check(CLI::IsMember({"now", "tai"}));
  cmd->add_option("--vrx-start", o->vrx_start,
                  "gapped: packets each frame leaves ahead of the receiver's VRX read schedule (TRO + (p + 1) x "
                  "T_DRAIN), headroom against the sender's and the path's jitter (default 4; narrow VRX_FULL >= 8)")
      ->check(CLI::Range(0, 64));
  cmd->add_option("--lead-us", o->lead_us, "Microseconds from setup to frame 0's period (default 2000)");
  cmd->add_flag("--json", o->json, "Print the result as JSON");
  cmd->footer("Exit status: 0 ok, 1 config or setup error, 2 fewer frames sent than asked or packets dropped.");
  cmd->callback([o, exit_code] { *exit_code = video_send(*o); });
}

}  // namespace netdaq::cli
