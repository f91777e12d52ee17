// An XskFrameReceiver in a process of its own (this test binary started again, with
// NDQ_XSK_CHILD set: a global test environment takes the role before any test runs), so that
// a test can kill it with SIGKILL while its driver runs, as a crashing application would.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "netdaq/gpu_xsk.h"

namespace ndqtest {

class ReceiverChild {
 public:
  // Starts the child: in namespace `ns`, a session with afxdp interface "x0" on `veth` taking
  // UDP port `port` into a receiver driven by `driver` (GPU: a mapped UMEM) that takes frames
  // until killed. Returns once the receiver runs; throws std::runtime_error with the child's
  // reason if it fails or does not report within 60 s.
  ReceiverChild(const std::string& ns, const std::string& veth, uint16_t port,
                netdaq::gpu::XskFrameReceiver::Driver driver);
  ~ReceiverChild();  // kill()
  ReceiverChild(const ReceiverChild&) = delete;
  ReceiverChild& operator=(const ReceiverChild&) = delete;

  // SIGKILL, and waits for it. Returns true if it was still running when killed.
  bool kill();

 private:
  pid_t pid_ = -1;
};

}  // namespace ndqtest
