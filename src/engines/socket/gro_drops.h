// Socket engine: per-datagram kernel drop counts for UDP GRO receive sockets.
//
// With GRO the kernel drops whole coalesced batches and counts each as one drop, so
// SO_MEMINFO alone undercounts lost datagrams by up to 64x. GroDropCounter loads a small
// eBPF tracing program (bpf/gro_drops.bpf.c) once per process that counts, per watched
// socket, the batches dropped and the datagrams in them. Where it cannot (not built with
// libbpf, no CAP_BPF, a kernel without BTF or fexit) acquire() says why and the queue reports
// its drops per batch, saying so in its mode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace netdaq::detail::socket_engine {

struct GroDrops {
  uint64_t batches = 0;    // dropped skbs (each counted once by sk_drops)
  uint64_t datagrams = 0;  // the datagrams in them
};

class GroDropCounter {
 public:
  // The process's counter, loaded on first use; nullptr with *why_not set when unavailable.
  static std::shared_ptr<GroDropCounter> acquire(std::string* why_not);
  virtual ~GroDropCounter() = default;
  // Starts counting for the socket (its SO_COOKIE); false with *why_not set on failure.
  virtual bool watch(int fd, uint64_t* cookie, std::string* why_not) = 0;
  virtual void unwatch(uint64_t cookie) noexcept = 0;
  // Where the kernel is watched, e.g. "tracepoint udp_fail_queue_rcv_skb".
  virtual const char* hook() const noexcept = 0;
  // What was dropped for the socket since watch(). Never throws; zeros if unknown.
  virtual GroDrops read(uint64_t cookie) const noexcept = 0;
};

}  // namespace netdaq::detail::socket_engine
