// A VideoSender's packets in mapped pinned memory (readable by the GPU in every staging), handed
// out as RxBursts, for the video GPU tests (st2110_gpu_frames, st2110_pipeline_unpack).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu_test_util.h"
#include "sensors/video_sender.h"

namespace ndqtest {

class VideoSentPackets final : public HeapBursts {
 public:
  static constexpr uint32_t kPayloadAt = 42;  // a UDP payload's place in its buffer (Ethernet + IPv4 + UDP)

  VideoSentPackets(::netdaq::sensors::VideoSender& tx, size_t count) : lens_(count) {
    stride_ = (kPayloadAt + tx.max_packet_bytes() + 63) / 64 * 64;
    ok_ = cudaHostAlloc(reinterpret_cast<void**>(&mem_), stride_ * count, cudaHostAllocMapped) == cudaSuccess;
    for (size_t i = 0; ok_ && i < count; ++i)
      lens_[i] = tx.next_packet({mem_ + i * stride_ + kPayloadAt, stride_ - kPayloadAt});
  }
  ~VideoSentPackets() { cudaFreeHost(mem_); }
  VideoSentPackets(const VideoSentPackets&) = delete;
  VideoSentPackets& operator=(const VideoSentPackets&) = delete;
  bool ok() const { return ok_; }
  size_t size() const { return lens_.size(); }
  uint32_t len(size_t i) const { return lens_[i]; }
  // Packets [from, from + n) but those in [drop_from, drop_to) (lost on the way).
  ::netdaq::RxBurst burst(size_t from, size_t n, size_t drop_from = 0, size_t drop_to = 0) {
    std::vector<size_t> keep;
    for (size_t i = from; i < from + n; ++i)
      if (i < drop_from || i >= drop_to) keep.push_back(i);
    return make(keep.size(), [&](size_t k, ::netdaq::detail::PacketFields& f) {
      f.nseg = 1;
      f.data[0] = mem_ + keep[k] * stride_ + kPayloadAt;
      f.len[0] = f.cap[0] = lens_[keep[k]];
    });
  }

 private:
  std::vector<uint32_t> lens_;
  size_t stride_ = 0;
  std::byte* mem_ = nullptr;
  bool ok_ = false;
};

}  // namespace ndqtest
