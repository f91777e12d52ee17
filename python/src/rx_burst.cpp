#include "rx.h"

namespace netdaq::python {

PyRxBurst::PyRxBurst(SessionPtr session, RxBurst burst) : size_(burst.size()), bytes_(burst.bytes()) {
  state_ = std::make_shared<RxBurstState>(RxBurstState{std::move(session), std::move(burst)});
}

const std::shared_ptr<RxBurstState>& PyRxBurst::state() const {
  if (!state_) throw Released("the burst was released: its buffers went back to the pool");
  return state_;
}

void PyRxBurst::release() noexcept {
  if (state_) state_->closed = true;
  state_.reset();
}

RxBurst PyRxBurst::take(const char* who) {
  const auto& st = state();
  if (st.use_count() > 1)
    throw py::buffer_error(std::string(who) + ": packets or NumPy views of this burst are still alive (" +
                           std::to_string(st.use_count() - 1) + "); drop them first, the burst's buffers would be "
                           "reused under them");
  RxBurst b = std::move(st->burst);
  release();
  return b;
}

}  // namespace netdaq::python
