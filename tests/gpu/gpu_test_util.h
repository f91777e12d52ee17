// GPU tests skip, saying why, where no GPU is usable (CI); they run on the GPU machine.
// NETDAQ_REQUIRE_GPU=1 (set by scripts/gpu-check.sh) turns that skip into a failure, so a
// driver or visibility problem on the GPU machine cannot read as a green run.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "../require_env.h"
#include "netdaq/gpu.h"

#define NDQ_REQUIRE_GPU()                                                                        \
  do {                                                                                           \
    if (::netdaq::gpu::device_count() == 0) {                                                    \
      if (::ndqtest::gpu_required())                                                             \
        FAIL() << "no usable GPU (NETDAQ_REQUIRE_GPU=1: GPU tests must run): "                   \
               << ::netdaq::gpu::unavailable_reason();                                           \
      GTEST_SKIP() << "GPU test skipped: " << ::netdaq::gpu::unavailable_reason();               \
    }                                                                                            \
  } while (0)

namespace ndqtest {

// Hands out RxBursts of packets that stay where they are (pinned memory a test filled) and
// counts the bursts given back. Subclasses say where packet k of a burst lies.
class HeapBursts : public ::netdaq::detail::BurstOwner {
 public:
  // set(k, fields): fill packet k's fields (nseg, data, len, cap, flow).
  template <class Set>
  ::netdaq::RxBurst make(size_t n, Set set) {
    auto* d = new ::netdaq::detail::BurstDesc;
    d->pkts = new ::netdaq::Packet[n];
    d->count = d->capacity = static_cast<uint32_t>(n);
    d->owner = this;
    for (size_t k = 0; k < n; ++k) set(k, ::netdaq::detail::fields(d->pkts[k]));
    ++out_;
    return ::netdaq::RxBurst(d);
  }
  void release(::netdaq::detail::BurstDesc* d) noexcept override {
    delete[] d->pkts;
    delete d;
    ++back_;
  }
  int outstanding() const { return out_ - back_; }

 private:
  int out_ = 0, back_ = 0;
};

// Every packet handed to a pipeline ends in exactly one of its outcomes.
inline ::testing::AssertionResult pipeline_accounted(const ::netdaq::gpu::PipelineStats& s) {
  const uint64_t out = s.packets_placed + s.duplicate + s.late + s.malformed + s.no_buffer + s.control + s.no_stream;
  if (s.packets_in == out) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "packets_in " << s.packets_in << " != placed " << s.packets_placed
                                       << " + duplicate " << s.duplicate << " + late " << s.late << " + malformed "
                                       << s.malformed << " + no_buffer " << s.no_buffer << " + control " << s.control
                                       << " + no_stream " << s.no_stream;
}

// The launch modes a GPU pipeline test runs in: per_burst with each staging, graph (copy) and
// persistent (direct, as it needs), named e.g. "per_burst_copy".
struct LaunchCase {
  ::netdaq::LaunchMode launch;
  ::netdaq::Staging staging;
};
inline std::string launch_case_name(const ::testing::TestParamInfo<LaunchCase>& i) {
  return std::string(::netdaq::to_string(i.param.launch)) + "_" + ::netdaq::to_string(i.param.staging);
}
inline auto every_launch_mode() {
  using ::netdaq::LaunchMode, ::netdaq::Staging;
  return ::testing::Values(LaunchCase{LaunchMode::per_burst, Staging::copy}, LaunchCase{LaunchMode::per_burst, Staging::direct},
                           LaunchCase{LaunchMode::graph, Staging::copy}, LaunchCase{LaunchMode::persistent, Staging::direct});
}

}  // namespace ndqtest
