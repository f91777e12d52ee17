// The receiving half FrameReceiver and EventBuilder share: the listener, the senders'
// endpoints, the fragment and hello handlers, and the credits going back. Where a fragment's
// bytes go is the Placer's decision; the receive side moves them there (rendezvous straight
// into the destination, eager data copied) and says when they are in.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "fleet/ucx_context.h"
#include "fleet/wire.h"
#include "netdaq/fleet.h"

namespace netdaq::fleet::detail {

// Who sent a fragment, so its credit can go back (if that connection still stands).
struct SenderRef {
  uint32_t conn = 0;
  uint32_t generation = 0;
  uint64_t seq = 0;
};

struct Placement {
  RefusalReason refusal = RefusalReason::none;
  std::byte* dest = nullptr;
  uint64_t ticket = 0;
};

class Placer {
 public:
  // Where the fragment's h.meta.bytes go, or why it is refused. Called from UCX's progress.
  virtual Placement place(const FragmentHeader& h, const SenderRef& from) noexcept = 0;
  // The fragment's bytes are in its destination (ok) or the transfer failed.
  virtual void arrived(uint64_t ticket, bool ok) noexcept = 0;

 protected:
  ~Placer() = default;
};

class ReceiveSide {
 public:
  // max_receives: fragments the placer may have placed and not yet seen arrive.
  ReceiveSide(const ReceiverConfig& cfg, Placer& placer, uint32_t max_receives);  // throws netdaq::Error
  ~ReceiveSide();
  ReceiveSide(const ReceiveSide&) = delete;
  ReceiveSide& operator=(const ReceiveSide&) = delete;

  uint16_t port() const noexcept { return port_; }
  void progress() noexcept;
  // Sends c to the sender of a fragment; nothing when that connection is gone.
  void send_credit(const SenderRef& to, CreditStatus status, RefusalReason reason, uint64_t frame,
                   uint64_t bytes) noexcept;
  ReceiverStats& stats() noexcept { return stats_; }
  const ReceiverStats& stats() const noexcept { return stats_; }

 private:
  static constexpr uint32_t kMaxConnections = 256;
  static constexpr uint32_t kMessagePool = 4096;
  enum class ConnState : uint8_t { free, open, failed };
  struct Conn {
    ReceiveSide* side = nullptr;
    ucp_ep_h ep = nullptr;
    uint32_t index = 0;
    uint32_t generation = 0;
    ConnState state = ConnState::free;
  };
  // A credit or welcome on its way out: its bytes live here until UCX is done with them.
  struct Message {
    ReceiveSide* side = nullptr;
    uint32_t index = 0;
    std::byte bytes[kCreditBytes];
  };
  struct Receive {  // a rendezvous transfer under way
    ReceiveSide* side = nullptr;
    uint32_t index = 0;
    uint64_t ticket = 0;
    uint64_t length = 0;
  };
  struct Pending {  // a message waiting for a free Message
    SenderRef to;
    uint16_t am = 0;
    uint8_t length = 0;
    std::byte bytes[kCreditBytes];
  };

  static void on_connection(ucp_conn_request_h request, void* arg);
  static void on_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  static ucs_status_t on_fragment(void* arg, const void* header, size_t header_length, void* data,
                                  size_t length, const ucp_am_recv_param_t* param);
  static ucs_status_t on_hello(void* arg, const void* header, size_t header_length, void* data,
                               size_t length, const ucp_am_recv_param_t* param);
  static void on_message_sent(void* request, ucs_status_t status, void* user_data);
  static void on_data(void* request, ucs_status_t status, size_t length, void* user_data);

  void finish(Receive& rx, ucs_status_t status) noexcept;
  bool find_conn(const ucp_am_recv_param_t* param, SenderRef& ref) const noexcept;
  void count_refusal(RefusalReason r) noexcept;
  void send_message(const SenderRef& to, uint16_t am, const std::byte* bytes, size_t n) noexcept;
  void close_failed() noexcept;

  Placer& placer_;
  ucp_listener_h listener_ = nullptr;
  uint16_t port_ = 0;
  std::array<Conn, kMaxConnections> conns_{};
  std::vector<Message> messages_;
  std::vector<uint32_t> free_messages_;
  std::vector<Receive> receives_;
  std::vector<uint32_t> free_receives_;
  std::vector<Pending> pending_;  // ring
  size_t pending_head_ = 0, pending_count_ = 0;
  bool any_failed_ = false;
  ReceiverStats stats_;
  // Last, so destroyed first: receives and credits UCX completes at its end (on_data,
  // on_message_sent) find their Receive and Message still there.
  UcxWorker ucx_;
};

}  // namespace netdaq::fleet::detail
