// Session: owns the memory regions, pools, engines and queues of one Config.
// Several sessions may live in one process; destroy them in any order.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "netdaq/burst.h"
#include "netdaq/config.h"
#include "netdaq/shared_rings.h"
#include "netdaq/stats.h"

namespace netdaq {

namespace detail {
class RxQueueImpl;
class TxQueueImpl;
}  // namespace detail

class RxQueue {
 public:
  // Non-blocking: a burst of up to batch_size packets, or an empty burst. Never throws.
  RxBurst poll() noexcept;
  // True once a finite source (EngineCapabilities::finite_source: a capture file) has ended
  // and every packet it produced was handed out by poll() or counted as dropped: poll()
  // returns nothing more. Always false for network sources. Never throws.
  bool finished() const noexcept;
  QueueStats stats() const;
  const QueueConfig& config() const noexcept;
  const std::string& name() const noexcept;
  const std::string& interface() const noexcept;
  // Gives the queue's kernel-shared rings (AF_XDP) to another consumer, e.g. a GPU kernel
  // (netdaq/gpu_xsk.h): from then on poll() returns empty bursts and the CPU never touches
  // the rings; stats() still counts the kernel's drops. Throws Error (invalid_config): the
  // engine has no such rings, the queue runs in worker mode, or they were handed over already.
  HandedOverRings hand_over_rings();

  explicit RxQueue(std::unique_ptr<detail::RxQueueImpl> impl);
  ~RxQueue();

 private:
  std::unique_ptr<detail::RxQueueImpl> impl_;
};

class TxQueue {
 public:
  // Up to n buffers from the queue's pool (fewer when the pool runs low, counted as
  // pool_empty). Each packet has one segment: the region's buf_size less the headers the
  // engine writes in front (and, dpdk, up to 7 cache lines a frame is shifted by within the
  // room the MTU leaves); Packet::buffer() tells its size. Never throws.
  TxBurst allocate(size_t n) noexcept;
  QueueStats stats() const;
  const QueueConfig& config() const noexcept;
  const std::string& name() const noexcept;
  const std::string& interface() const noexcept;
  uint32_t buffer_size() const noexcept;
  // Gives the queue's kernel-shared TX and completion rings (AF_XDP) to another producer,
  // e.g. a GPU kernel (netdaq/gpu_xsk.h), with up to `buffers` buffers of its pool and the
  // headers it writes in front of a payload of payload_bytes. From then on allocate()
  // returns empty bursts; stats() still counts what the kernel refused. Throws Error: the
  // engine has no such rings or writes no headers (raw frames), the application holds
  // bursts, or they were handed over already.
  HandedOverTxRings hand_over_rings(uint32_t payload_bytes, uint32_t buffers);

  explicit TxQueue(std::unique_ptr<detail::TxQueueImpl> impl);
  ~TxQueue();

 private:
  std::unique_ptr<detail::TxQueueImpl> impl_;
};

class Session {
 public:
  // Validates the config (throws ConfigError), allocates regions and pools, opens every
  // queue of every interface (throws Error) and starts worker threads.
  explicit Session(Config config);
  ~Session();  // stops workers, closes engines, frees memory
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  RxQueue& rx_queue(std::string_view interface, uint16_t id = 0);  // throws Error(not_found)
  TxQueue& tx_queue(std::string_view interface, uint16_t id = 0);
  std::vector<RxQueue*> rx_queues() const;
  std::vector<TxQueue*> tx_queues() const;

  std::vector<QueueStats> stats() const;
  // Per-flow counters of engines that classify packets (afxdp); empty for the others.
  std::vector<FlowStats> flow_stats() const;
  // Steers a flow at run time / stops steering it (dpdk: rte_flow rules). Throws Error:
  // unsupported by the interface's engine or PMD (the message names the rule and driver),
  // not_found for an unknown interface or flow id, invalid_config for a bad flow.
  void add_flow(std::string_view interface, const FlowConfig& flow);
  void remove_flow(std::string_view interface, uint32_t id);
  void stop() noexcept;  // stops workers and engines; idempotent
  const Config& config() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Names of the engines compiled into this build.
std::vector<std::string> engines();
// "0.1.0"
const char* version() noexcept;

}  // namespace netdaq
