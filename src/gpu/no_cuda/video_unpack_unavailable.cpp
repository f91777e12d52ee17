// Stand-in for a build without CUDA: the video unpack says so clearly.
#include "netdaq/status.h"
#include "netdaq/video_unpack.h"

namespace netdaq::gpu {

void unpack_video(const VideoOptions&, const void*, const VideoPlanes&, Stream) {
  throw Error(Errc::unsupported,
              "video unpack: this build of netdaq has no GPU support (rebuild with a CUDA toolkit installed)");
}

}  // namespace netdaq::gpu
