// pcap engine rx: one queue reads records from the file into pool buffers.
//
// Each record is copied once, from libpcap's read buffer into a pool buffer:
//   deliver payloads  the whole frame goes into the buffer and the packet starts at its UDP
//                     payload (Packet::frame() gives the frame back); a frame that does not fit
//                     but whose payload does is copied from its payload on (no frame()).
//   deliver frames    the whole frame, of any protocol (Packet::frame() == data()).
// Every record read is delivered or counted under one drop reason, so that
// records == packets + drops (the engine counter "records" counts every pass):
//   malformed  cut short by the capture (caplen < len); payloads: not Ethernet [VLAN] IPv4/IPv6
//              UDP, or a UDP length beyond the frame
//   flow_miss  UDP to another destination than the interface's address, or matching none of
//              its rx.flows (frames: any record that is not such UDP, when a filter is set)
//   oversize   larger than a pool buffer
// An empty pool is not loss: the record waits for a buffer (the file does not overflow).
// Pace recorded: record i is due at start + (ts_i - ts_0) / speed; a later pass starts where
// the previous one ended. At the end of the last pass (or a read error, logged with the file
// and the record number and counted in errors) the port is finished().
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "core/log.h"
#include "core/pacer.h"
#include "engines/pcap/ports.h"
#include "net/flow_matcher.h"
#include "net/frame_headers.h"
#include "util/rate_limited_log.h"

namespace netdaq::detail::pcap_engine {

namespace {

bool same_address(const IpAddress& ip, const UdpPayload& u) noexcept {
  if (ip.is_v6() != u.ipv6) return false;
  return std::memcmp(ip.bytes.data(), u.dst_ip, ip.size()) == 0;
}

class PcapRx final : public RxPort {
 public:
  PcapRx(const QueueResources& q, std::unique_ptr<PcapReader> reader, const PcapOptions& o,
         const AddressFilter& filter, std::string mode)
      : q_(q),
        reader_(std::move(reader)),
        frames_(o.deliver == PcapDeliver::frames),
        recorded_(o.pace == PcapPace::recorded),
        speed_(o.speed > 0 ? o.speed : 1.0),
        loop_(o.loop),
        filter_(filter),
        flows_(q.iface->rx.flows),
        filtering_(filter.active() || !flows_.empty()),
        cap_(q.pools[0]->buf_size()),
        mode_(std::move(mode)) {}

  uint32_t receive(Packet* pkts, uint32_t max, uint64_t& bytes) noexcept override {
    if (finished_.load(std::memory_order_relaxed)) return 0;
    uint32_t out = 0, attached = 0;
    const uint64_t now = recorded_ ? monotonic_ns() : 0;
    uint64_t delivered_bytes = 0;
    while (out < max) {
      if (!have_ && !read_next()) break;
      if (recorded_ && !due(now)) break;
      uint32_t offset = 0, size = 0, flow = 0;
      const DropReason why = classify(offset, size, flow);
      if (why != DropReason::count_) {
        q_.counters->drop(why);
        have_ = false;
        continue;
      }
      if (attached == out) {  // buffers for the rest of the burst, once
        attached = out + attach_buffers(q_, pkts + out, max - out);
        if (attached == out) break;  // pool empty: the record waits (no loss)
      }
      PacketFields& f = fields(pkts[out]);
      if (frames_) {
        std::memcpy(f.data[0], rec_.data, rec_.caplen);
        f.len[0] = rec_.caplen;
        f.whole_frame = 1;
        f.l2_len = 0;
      } else if (rec_.caplen <= f.cap[0]) {
        std::memcpy(f.data[0], rec_.data, offset + size);
        f.data[0] += offset;
        f.len[0] = size;
        f.whole_frame = 0;
        f.l2_len = static_cast<uint16_t>(offset);
      } else {  // the frame does not fit, its payload does (classify checked)
        std::memcpy(f.data[0], rec_.data + offset, size);
        f.len[0] = size;
        f.whole_frame = 0;
        f.l2_len = 0;
      }
      f.timestamp_ns = rec_.ts_ns;
      f.flow = flow;
      delivered_bytes += f.len[0];
      have_ = false;
      ++out;
    }
    if (attached > out) return_buffers(q_, pkts + out, attached - out);
    if (out) QueueCounters::add(q_.counters->copies, delivered_bytes);
    bytes += delivered_bytes;
    return out;
  }

  // data[0] may point past the buffer's start (payloads): buffers go back by index, and
  // attach_buffers sets data[0] afresh.
  bool finished() const noexcept override { return finished_.load(std::memory_order_acquire); }

  void add_details(QueueStats& s) const override {
    s.mode = mode_;
    s.engine_counters = {{"records", records_.load(std::memory_order_relaxed)},
                         {"passes", passes_.load(std::memory_order_relaxed)}};
  }

  const QueueResources& resources() const noexcept override { return q_; }

 private:
  // Reads the next record into rec_ (have_), starting another pass at the end of the file
  // when one is due. False at the end of the last pass or on a read error: finished.
  bool read_next() noexcept {
    for (;;) {
      const ReadStatus st = reader_->next(rec_);
      if (st == ReadStatus::record) {
        bump(records_);
        have_ = true;
        if (pass_start_) {  // the first record of a pass: its due time anchors the pass
          pass_start_ = false;
          base_ts_ = rec_.ts_ns;
          anchored_ = false;
        }
        return true;
      }
      if (st == ReadStatus::error) {
        q_.counters->errors.fetch_add(1, std::memory_order_relaxed);
        errlog_.log([&](uint64_t) { log()->error("pcap engine: {}: {}", q_.name, reader_->error()); });
        break;
      }
      const uint64_t in_pass = reader_->records();
      bump(passes_);
      const uint64_t done = passes_.load(std::memory_order_relaxed);
      if (in_pass == 0 || (loop_ != 0 && done >= loop_)) break;
      if (!reader_->rewind()) {
        q_.counters->errors.fetch_add(1, std::memory_order_relaxed);
        errlog_.log([&](uint64_t) { log()->error("pcap engine: {}: {}", q_.name, reader_->error()); });
        break;
      }
      pass_start_ = true;
      base_wall_ = last_due_;  // the next pass starts where this one ended
    }
    finished_.store(true, std::memory_order_release);
    return false;
  }

  // Pace recorded: whether rec_ is due at `now`.
  bool due(uint64_t now) noexcept {
    if (!anchored_) {
      anchored_ = true;
      if (base_wall_ == 0) base_wall_ = now;  // the very first record: now
    }
    const uint64_t offset = rec_.ts_ns > base_ts_ ? rec_.ts_ns - base_ts_ : 0;
    const uint64_t at = base_wall_ + static_cast<uint64_t>(static_cast<double>(offset) / speed_);
    if (at > now) return false;
    last_due_ = at;
    return true;
  }

  // DropReason::count_ when rec_ is delivered: offset and size of what the packet holds
  // (payloads: the UDP payload) and the flow id it matched.
  DropReason classify(uint32_t& offset, uint32_t& size, uint32_t& flow) const noexcept {
    if (rec_.caplen < rec_.len) return DropReason::malformed;
    if (frames_ && !filtering_) {
      if (rec_.caplen > cap_) return DropReason::oversize;
      size = rec_.caplen;
      return DropReason::count_;
    }
    const UdpPayload u = find_udp_payload(rec_.data, rec_.caplen);
    if (!u.ok) return frames_ ? DropReason::flow_miss : DropReason::malformed;
    if (filter_.port && u.dst_port != filter_.port) return DropReason::flow_miss;
    if (filter_.ip && !same_address(*filter_.ip, u)) return DropReason::flow_miss;
    if (!flows_.empty()) {
      const int i = flows_.match(u);
      if (i < 0) return DropReason::flow_miss;
      flow = flows_.rules()[static_cast<size_t>(i)].id;
    }
    if (frames_) {
      if (rec_.caplen > cap_) return DropReason::oversize;
      size = rec_.caplen;
      return DropReason::count_;
    }
    if (u.size > cap_) return DropReason::oversize;
    offset = u.offset;
    size = u.size;
    return DropReason::count_;
  }

  static void bump(std::atomic<uint64_t>& c) noexcept {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  QueueResources q_;
  std::unique_ptr<PcapReader> reader_;
  const bool frames_, recorded_;
  const double speed_;
  const uint32_t loop_;
  const AddressFilter filter_;
  const FlowMatcher flows_;
  const bool filtering_;
  const uint32_t cap_;
  const std::string mode_;
  PcapRecord rec_;
  bool have_ = false;        // rec_ is read and not yet delivered or dropped
  bool pass_start_ = true;   // the next record read is the first of a pass
  bool anchored_ = false;    // the pass's base_wall_ is set
  uint64_t base_ts_ = 0, base_wall_ = 0, last_due_ = 0;
  std::atomic<uint64_t> records_{0}, passes_{0};
  std::atomic<bool> finished_{false};
  RateLimitedLog errlog_{RateLimitedLog::kOnce};
};

std::string duration_text(const FileSummary& s) {
  if (!s.scanned) return "";
  const double sec = s.last_ns > s.first_ns ? double(s.last_ns - s.first_ns) / 1e9 : 0.0;
  char b[96];
  std::snprintf(b, sizeof b, ", %llu records over %.3f s", static_cast<unsigned long long>(s.records), sec);
  return b;
}

}  // namespace

FileSummary scan_file(const std::string& path, const std::string& context) {
  PcapReader r;
  try {
    r.open(path);
  } catch (const Error& e) {
    throw Error(e.code(), context + ": pcap.file " + e.what());
  }
  if (r.link_type() != PcapReader::kEthernet)
    throw Error(Errc::invalid_config, context + ": pcap.file " + path + ": link type " + r.link_type_name() +
                                          " (" + std::to_string(r.link_type()) +
                                          "); the pcap engine reads Ethernet captures (EN10MB)");
  FileSummary s;
  s.scanned = true;
  PcapRecord rec;
  for (;;) {
    const ReadStatus st = r.next(rec);
    if (st == ReadStatus::end) break;
    if (st == ReadStatus::error) throw Error(Errc::invalid_config, context + ": pcap.file " + r.error());
    if (s.records++ == 0) s.first_ns = rec.ts_ns;
    s.last_ns = std::max(s.last_ns, rec.ts_ns);
  }
  return s;
}

std::unique_ptr<RxPort> open_pcap_rx(const QueueResources& q, const PcapOptions& o, const AddressFilter& filter,
                                     const std::string& context) {
  const FileSummary summary = o.check_file ? scan_file(o.file, context) : FileSummary{};
  auto reader = std::make_unique<PcapReader>();
  try {
    reader->open(o.file);
  } catch (const Error& e) {
    throw Error(e.code(), context + ": pcap.file " + e.what());
  }
  if (reader->link_type() != PcapReader::kEthernet)
    throw Error(Errc::invalid_config, context + ": pcap.file " + o.file + ": link type " + reader->link_type_name() +
                                          "; the pcap engine reads Ethernet captures (EN10MB)");
  std::string mode = "pcap " + o.file + " (" + (o.deliver == PcapDeliver::frames ? "frames" : "udp payloads") +
                     ", " + (o.pace == PcapPace::recorded ? "recorded pace" : "asap");
  if (o.pace == PcapPace::recorded && o.speed != 1.0) {
    char x[32];
    std::snprintf(x, sizeof x, " x%g", o.speed);
    mode += x;
  }
  mode += o.loop == 1 ? "" : o.loop == 0 ? ", looping" : ", " + std::to_string(o.loop) + " passes";
  mode += duration_text(summary) + ")";
  log()->debug("{}: replaying {}", context, mode);
  return std::make_unique<PcapRx>(q, std::move(reader), o, filter, std::move(mode));
}

}  // namespace netdaq::detail::pcap_engine
