// Frame: a move-only handle of a finished frame buffer (both builds).
#include "netdaq/gpu.h"

namespace netdaq::gpu {

Frame::Frame(Frame&& o) noexcept
    : owner_(o.owner_), buffer_(o.buffer_), data_(o.data_), info_(o.info_), missing_(o.missing_), items_(o.items_),
      planes_(o.planes_) {
  o.owner_ = nullptr;
}

Frame& Frame::operator=(Frame&& o) noexcept {
  if (this != &o) {
    release();
    owner_ = o.owner_;
    buffer_ = o.buffer_;
    data_ = o.data_;
    info_ = o.info_;
    missing_ = o.missing_;
    items_ = o.items_;
    planes_ = o.planes_;
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
