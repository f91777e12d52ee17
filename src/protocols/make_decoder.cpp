// The decoder of a reorder's mode: the one place that maps a mode to its wire format.
#include <string>

#include "netdaq/status.h"
#include "protocols/decoder.h"
#include "protocols/fields.h"
#include "protocols/roce_receiver.h"
#include "protocols/rtp_video.h"
#include "protocols/spead.h"
#include "protocols/vita49.h"

namespace netdaq::protocols {

std::unique_ptr<Decoder> make_decoder(const ReorderConfig& cfg) {
  switch (cfg.mode) {
    case ReorderMode::fields: return std::make_unique<FieldsDecoder>(cfg);
    case ReorderMode::spead: return std::make_unique<SpeadDecoder>(cfg.spead);
    case ReorderMode::vita49: return std::make_unique<Vita49Decoder>(cfg.vita49);
    case ReorderMode::roce: return std::make_unique<RoceDecoder>(cfg.roce, frame_bytes_of(cfg));
    case ReorderMode::rtp_video: return std::make_unique<RtpVideoDecoder>(cfg.video, cfg.max_streams);
    default:
      throw Error(Errc::invalid_config, std::string("reorder mode ") + to_string(cfg.mode) +
                                            " places slots, not spans: it has no decoder");
  }
}

}  // namespace netdaq::protocols
