// netdaq roce-send CONFIG --peer FILE: be a RoCEv2 sensor (src/sensors/roce_sensor.h). UC RDMA
// WRITEs of frames of the sensor test pattern into the queue pair rx[i] of the peer file (the
// rdma engine's manual QP format, as `netdaq roce-recv --local-file` or fpga_peer.py write it),
// as whole frames through the config's first tx queue: its engine must send frames as the
// application writes them (capability tx_whole_frames). Paced by the queue's pacer
// (--rate-mbps sets tx.rate_mbps). Prints what it sent; --json as JSON.
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "errors.h"
#include "idle_backoff.h"
#include "netdaq/netdaq.h"
#include "ip_address.h"
#include "mac_address.h"
#include "roce_sensor.h"
#include "signals.h"

namespace netdaq::cli {

namespace {

using sensors::RoceSendOp;

struct RoceSendOptions {
  std::string config, peer;
  size_t qp_index = 0;
  uint64_t frames = 100;
  uint32_t frame_bytes = 0;  // 0: the ring's slot_size
  uint32_t mtu = 1024;
  std::string op = "only";
  double rate_mbps = 0;
  uint32_t corrupt_icrc_every = 0;
  std::string src_mac, dst_mac, src_ip, dst_ip;
  uint16_t src_port = 49152, dst_port = 4791;
  int64_t psn = -1;  // -1: the peer file's
  bool json = false;
};

// The library's parsers (net/mac_address.h, net/ip_address.h), as the config's keys use them.
bool parse_mac_text(const std::string& s, std::array<uint8_t, 6>& m) {
  const auto mac = detail::parse_mac(s);
  if (mac) m = *mac;
  return mac.has_value();
}

bool parse_ipv4_text(const std::string& s, uint32_t& ip) {
  const auto a = detail::parse_ipv4(s);
  if (a) ip = ntohl(a->v4_network_order());
  return a.has_value();
}

// The interface's MAC when its address is a netdev of this network namespace (SIOCGIFHWADDR:
// sysfs may show another namespace's netdevs); "" otherwise.
std::string netdev_mac(const std::string& name) {
  ifreq r{};
  if (name.empty() || name.size() >= sizeof r.ifr_name) return "";
  std::memcpy(r.ifr_name, name.data(), name.size());
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  const int rc = ::ioctl(fd, SIOCGIFHWADDR, &r);
  ::close(fd);
  if (rc != 0) return "";
  const auto* m = reinterpret_cast<const unsigned char*>(r.ifr_hwaddr.sa_data);
  char text[18];
  std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return text;
}

// The sensor's config from the options and the peer file. Throws Error saying which option is wrong.
sensors::RoceSensorConfig sensor_config(const RoceSendOptions& o, const InterfaceConfig& iface) {
  auto fail = [](const std::string& m) { throw Error(Errc::invalid_config, m); };
  sensors::RoceSensorConfig c;
  c.qp = sensors::read_roce_peer_file(o.peer, o.qp_index);
  if (o.psn >= 0) c.qp.psn = static_cast<uint32_t>(o.psn) & 0xFFFFFF;
  const std::string src_mac = o.src_mac.empty() ? netdev_mac(iface.address) : o.src_mac;
  if (src_mac.empty()) fail("--src-mac is required (interface '" + iface.name + "' is not a netdev to read it from)");
  if (!parse_mac_text(src_mac, c.src_mac)) fail("--src-mac '" + src_mac + "': not a MAC address like 02:00:00:00:00:01");
  if (o.dst_mac.empty()) fail("--dst-mac is required: the receiver's MAC (or the next router's)");
  if (!parse_mac_text(o.dst_mac, c.dst_mac)) fail("--dst-mac '" + o.dst_mac + "': not a MAC address like 02:00:00:00:00:01");
  if (o.src_ip.empty()) fail("--src-ip is required: the sensor's IPv4 address");
  if (!parse_ipv4_text(o.src_ip, c.src_ip)) fail("--src-ip '" + o.src_ip + "': not an IPv4 address");
  if (!o.dst_ip.empty()) {
    if (!parse_ipv4_text(o.dst_ip, c.dst_ip)) fail("--dst-ip '" + o.dst_ip + "': not an IPv4 address");
  } else if (c.qp.ipv4) {
    c.dst_ip = c.qp.ipv4;
  } else {
    fail("--dst-ip is required: the peer file '" + o.peer + "' has no IPv4-mapped gid (::ffff:a.b.c.d)");
  }
  c.src_port = o.src_port;
  c.dst_port = o.dst_port;
  c.mtu = o.mtu;
  c.frame_bytes = o.frame_bytes ? o.frame_bytes : static_cast<uint32_t>(c.qp.slot_size);
  c.op = o.op == "message" ? RoceSendOp::message : RoceSendOp::write_only;
  c.corrupt_icrc_every = o.corrupt_icrc_every;
  return c;
}

const InterfaceConfig* first_tx_interface(const Config& cfg) {
  for (const auto& i : cfg.interfaces)
    if (!i.tx.queues.empty()) return &i;
  return nullptr;
}

struct Sent {
  uint64_t frames = 0, packets = 0, bytes = 0, corrupted = 0;
  uint32_t first_psn = 0, next_psn = 0;
  double seconds = 0;
};

int report(const RoceSendOptions& o, const sensors::RoceSensor& s, const Sent& r, const QueueStats& st) {
  const double mbps = r.seconds > 0 ? double(r.bytes) * 8 / r.seconds / 1e6 : 0;
  const double pps = r.seconds > 0 ? double(r.packets) / r.seconds : 0;
  const uint64_t drops = st.total_drops();
  if (o.json) {
    nlohmann::json j{{"frames", r.frames},
                     {"packets", r.packets},
                     {"bytes", r.bytes},
                     {"seconds", r.seconds},
                     {"mbps", mbps},
                     {"pps", pps},
                     {"packets_per_frame", s.packets_per_frame()},
                     {"frame_bytes", s.config().frame_bytes},
                     {"mtu", s.config().mtu},
                     {"op", o.op == "message" ? "message" : "only"},
                     {"qpn", s.config().qp.qpn},
                     {"first_psn", r.first_psn},
                     {"next_psn", r.next_psn},
                     {"corrupted_icrc", r.corrupted},
                     {"queue_packets", st.packets},
                     {"queue_drops", drops},
                     {"mode", st.mode}};
    std::printf("%s\n", j.dump(1).c_str());
  } else {
    std::printf("netdaq roce-send: %llu frames (%u packets each, %u bytes, op %s) = %llu packets, %llu bytes in %.3f s: "
                "%.1f Mbit/s, %.0f packets/s\n",
                (unsigned long long)r.frames, s.packets_per_frame(), s.config().frame_bytes,
                o.op == "message" ? "message" : "only", (unsigned long long)r.packets, (unsigned long long)r.bytes,
                r.seconds, mbps, pps);
    std::printf("  qp %u: PSN %u..%u, %llu ICRCs corrupted; queue: %llu sent, %llu dropped (%s)\n", s.config().qp.qpn,
                r.first_psn, (r.next_psn - 1) & 0xFFFFFF, (unsigned long long)r.corrupted,
                (unsigned long long)st.packets, (unsigned long long)drops, st.mode.c_str());
  }
  if (r.frames < o.frames) return kExitLoss;
  return drops ? kExitLoss : kExitOk;
}

int roce_send(const RoceSendOptions& o) {
  const std::string err = "netdaq roce-send: ";
  Config cfg;
  if (!setup_step([&] { cfg = Config::load(o.config); }, err + o.config + ": ")) return kExitError;
  const InterfaceConfig* iface = first_tx_interface(cfg);
  if (!iface) {
    std::fprintf(stderr, "%s%s: no interface with tx queues\n", err.c_str(), o.config.c_str());
    return kExitError;
  }
  const auto caps = capabilities_of(*iface);
  if (!caps || !caps->tx_whole_frames) {
    std::fprintf(stderr,
                 "%s%s: interface '%s' (engine '%s') writes its own headers: roce-send needs an interface whose tx "
                 "queues send whole frames as written (capability tx_whole_frames; set the engine's tx_raw_frames "
                 "option)\n",
                 err.c_str(), o.config.c_str(), iface->name.c_str(), iface->engine.c_str());
    return kExitError;
  }
  std::unique_ptr<sensors::RoceSensor> sensor;
  if (!setup_step([&] { sensor = std::make_unique<sensors::RoceSensor>(sensor_config(o, *iface)); }, err)) return kExitError;
  const std::string name = iface->name;
  const uint16_t qid = iface->tx.queues.front().id;
  const size_t batch = std::max<uint32_t>(iface->tx.queues.front().batch_size, 1);
  for (auto& i : cfg.interfaces)
    if (i.name == name && o.rate_mbps > 0) {
      i.tx.rate_mbps = o.rate_mbps;
      i.tx.rate_pps = 0;
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
  r.first_psn = sensor->next_psn();
  const uint64_t total = o.frames * sensor->packets_per_frame();
  IdleBackoff idle;
  const uint64_t t0 = payload_clock_ns();
  while (r.packets < total && !stop_requested()) {
    TxBurst b = q->allocate(std::min<uint64_t>(batch, total - r.packets));
    if (!b) {
      idle.wait();
      continue;
    }
    const size_t want = b.size();
    if (sensor->fill(b) < want) {
      std::fprintf(stderr, "%sa packet of %u bytes does not fit the tx queue's buffers (%zu bytes): raise the region's "
                           "buf_size or lower --mtu\n",
                   err.c_str(), sensor->max_packet_bytes(), b[0].buffer().size());
      return kExitError;
    }
    for (Packet& p : b) r.bytes += p.size();
    while (b && !stop_requested()) {
      if (b.send()) idle.reset(); else idle.wait();
    }
    r.packets += want - b.size();  // what is left was stopped by a signal and is released unsent
  }
  r.seconds = double(payload_clock_ns() - t0) / 1e9;
  r.frames = r.packets / sensor->packets_per_frame();
  r.corrupted = sensor->corrupted();
  r.next_psn = sensor->next_psn();
  const QueueStats st = q->stats();
  return report(o, *sensor, r, st);
}

}  // namespace

void add_roce_send_command(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<RoceSendOptions>();
  auto* cmd = app.add_subcommand("roce-send", "Be a RoCEv2 sensor: UC RDMA WRITEs of test frames into a peer's queue pair");
  cmd->add_option("config", o->config, "YAML config whose first interface with tx queues sends whole frames")->required();
  cmd->add_option("--peer", o->peer, "The receiver's queue pairs (the rdma engine's manual QP JSON; rx[i] is used)")
      ->required();
  cmd->add_option("--qp-index", o->qp_index, "Which rx entry of the peer file (default 0)");
  cmd->add_option("-n,--frames", o->frames, "Frames to send (default 100)");
  cmd->add_option("--frame-bytes", o->frame_bytes, "Bytes per frame (default: the ring's slot_size)");
  cmd->add_option("--mtu", o->mtu, "RoCE path MTU: payload bytes per packet (256..4096, default 1024)");
  cmd->add_option("--op", o->op, "only: every packet a WRITE ONLY (HSB); message: FIRST/MIDDLE/LAST")
      ->check(CLI::IsMember({"only", "message"}));
  cmd->add_option("--rate-mbps", o->rate_mbps, "Pace to this many Mbit/s of frames (0 = unpaced)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--corrupt-icrc-every", o->corrupt_icrc_every, "Send every Nth packet with a wrong ICRC (tests)");
  cmd->add_option("--src-mac", o->src_mac, "Source MAC (default: the interface's, when it is a netdev)");
  cmd->add_option("--dst-mac", o->dst_mac, "Destination MAC (the receiver's, or the router's)")->required();
  cmd->add_option("--src-ip", o->src_ip, "Source IPv4 address")->required();
  cmd->add_option("--dst-ip", o->dst_ip, "Destination IPv4 address (default: the peer file's ::ffff: gid)");
  cmd->add_option("--src-port", o->src_port, "UDP source port (default 49152)");
  cmd->add_option("--dst-port", o->dst_port, "UDP destination port (default 4791)");
  cmd->add_option("--psn", o->psn, "First PSN (default: the peer file's psn)");
  cmd->add_flag("--json", o->json, "Print the result as JSON");
  cmd->footer("Exit status: 0 ok, 1 config or setup error, 2 fewer frames sent than asked or packets dropped.");
  cmd->callback([o, exit_code] { *exit_code = roce_send(*o); });
}

}  // namespace netdaq::cli
