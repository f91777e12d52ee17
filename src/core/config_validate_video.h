// rx.reorder mode rtp_video (docs/video.md): the checks of the `video:` block, called by
// config_validate_reorder.cpp, which checks what every span mode shares.
#pragma once

#include <cstdint>
#include <string>

#include "core/config_check.h"

namespace netdaq::detail {

// The `video:` block was written in YAML, or differs from its defaults in C++.
bool video_set(const Checker& c, const ReorderConfig& g, const std::string& path);

// The video block of a reorder in mode rtp_video: the SDP parameters RFC 4175 can carry, and
// the keys of other modes it does not read.
void check_video(Checker& c, const ReorderConfig& g, const std::string& path);

}  // namespace netdaq::detail
