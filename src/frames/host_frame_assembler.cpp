// The public face of HostFrames (netdaq/host_frames.h): frames and counters as the
// application sees them.
#include "netdaq/host_frames.h"

#include "frames/host_frames.h"
#include "netdaq/video.h"
#include "protocols/roce_receiver.h"

namespace netdaq {

static_assert(kRoceImmediateItem == protocols::roce::kImmediateItem && kRoceMetadataItem == protocols::roce::kMetadataItem);

namespace {

RoceQueuePairStats roce_stats(uint32_t qpn, const protocols::RoceCounters& c, uint32_t next_psn) {
  RoceQueuePairStats s;
  s.qpn = qpn;
  s.next_psn = next_psn;
  s.packets = c.packets, s.placed = c.placed, s.metadata = c.metadata, s.send = c.send;
  s.bad_icrc = c.bad_icrc, s.no_headers = c.no_headers, s.unknown_qp = c.unknown_qp, s.bad_rkey = c.bad_rkey;
  s.out_of_window = c.out_of_window, s.no_first = c.no_first, s.psn_duplicate = c.psn_duplicate;
  s.psn_stale = c.psn_stale, s.malformed = c.malformed;
  s.psn_lost = c.psn_lost, s.psn_out_of_order = c.psn_out_of_order, s.frames_ended = c.frames_ended;
  s.psn_resyncs = c.psn_resyncs;
  return s;
}

}  // namespace

HostFrameAssembler::HostFrameAssembler(const ReorderConfig& cfg)
    : impl_(std::make_unique<frames::HostFrames>(cfg)), mode_(cfg.mode), video_(cfg.video) {}

HostFrameAssembler::~HostFrameAssembler() = default;

void HostFrameAssembler::receive(const RxBurst& burst, uint64_t now_ns) noexcept { impl_->receive(burst, now_ns); }

void HostFrameAssembler::flush() noexcept { impl_->flush(); }

bool HostFrameAssembler::pop(HostFrameView& out) noexcept {
  frames::HostFrame f;
  if (!impl_->pop(f)) return false;
  const gpu::FrameMeta& m = impl_->meta(f.buffer);
  out.bytes = {f.data, f.size};
  out.stream = m.stream;
  out.frame = m.frame;
  out.bytes_present = m.bytes_present;
  out.complete = f.complete;
  out.presence = {f.presence, (f.size + f.granule - 1) / f.granule / 64 + 1};
  out.granule = f.granule;
  out.items = {m.items, m.nitems};
  out.buffer = f.buffer;
  if (mode_ == ReorderMode::rtp_video && !f.complete) lines_missing_ += video_missing_lines(video_, out, {});
  return true;
}

void HostFrameAssembler::release(const HostFrameView& f) noexcept {
  frames::HostFrame h;
  h.buffer = f.buffer;
  impl_->release(h);
}

HostFrameStats HostFrameAssembler::stats() const {
  HostFrameStats s;
  const auto& c = impl_->counters();
  const auto& t = impl_->tracker_stats();
  s.packets = c.packets, s.control = c.control, s.malformed = c.malformed + t.malformed;
  s.placed = t.placed, s.duplicate = t.duplicate, s.late = t.late, s.no_buffer = t.no_buffer;
  s.no_stream = t.no_stream;
  s.frames_complete = t.frames_complete, s.frames_incomplete = t.frames_incomplete;
  s.frames_dropped = t.frames_dropped, s.bytes_missing = t.bytes_missing;
  s.lines_missing = lines_missing_;
  s.last_malformed = impl_->last_reason();
  if (mode_ == ReorderMode::roce) {
    const auto& d = static_cast<const protocols::RoceDecoder&>(impl_->decoder());
    for (uint32_t qpn : d.qpns())
      if (const auto* q = d.counters(qpn)) s.roce.push_back(roce_stats(qpn, *q, d.next_psn(qpn)));
    s.roce.push_back(roce_stats(0, d.counters(), 0));
  }
  return s;
}

}  // namespace netdaq
