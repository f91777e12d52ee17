// Frame: a move-only handle of a finished frame buffer (both builds).
#include "netdaq/gpu.h"

namespace netdaq::gpu {

Frame::Frame(Frame&& o) noexcept
    : owner_(o.owner_), buffer_(o.buffer_), index_(o.index_), data_(o.data_), bytes_(o.bytes_),
      expected_(o.expected_), received_(o.received_), missing_(o.missing_) {
  o.owner_ = nullptr;
}

Frame& Frame::operator=(Frame&& o) noexcept {
  if (this != &o) {
    release();
    owner_ = o.owner_;
    buffer_ = o.buffer_;
    index_ = o.index_;
    data_ = o.data_;
    bytes_ = o.bytes_;
    expected_ = o.expected_;
    received_ = o.received_;
    missing_ = o.missing_;
    o.owner_ = nullptr;
  }
  return *this;
}

Frame::~Frame() { release(); }

void Frame::release() noexcept {
  if (owner_) {
    owner_->release_frame(buffer_);
    owner_ = nullptr;
  }
}

}  // namespace netdaq::gpu
