// One AF_XDP socket bound to (interface, queue id), with the rings the queue's RX and/or TX
// port use. Asks for zero-copy and falls back to copy mode (logged) unless told otherwise.
// Binds with XDP_USE_SG (multi-buffer: a frame larger than one UMEM chunk comes as several
// descriptors, all but the last marked XDP_PKT_CONTD); where the kernel or driver refuses
// it, binds without, logs why and says so in mode().
#pragma once

#include <linux/if_xdp.h>
#include <xdp/xsk.h>

// Multi-buffer AF_XDP (Linux 6.6); older kernel headers lack the names.
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif
#include <string>

#include "engines/afxdp/interface_info.h"
#include "engines/afxdp/umem.h"

namespace netdaq::detail::afxdp {

class XskSocket {
 public:
  // Throws Error: queue beyond the NIC's queues, zero-copy refused (mode zero_copy),
  // privileges, memlock, busy polling refused.
  XskSocket(const NetdevInfo& dev, uint32_t queue, Umem& umem, bool rx, bool tx, const AfxdpOptions& opts,
            const std::string& context);
  ~XskSocket();
  XskSocket(const XskSocket&) = delete;
  XskSocket& operator=(const XskSocket&) = delete;

  int fd() const noexcept;
  uint32_t queue() const noexcept { return queue_; }
  Umem& umem() const noexcept { return umem_; }
  xsk_ring_cons* rx() noexcept { return &rx_; }
  xsk_ring_prod* tx() noexcept { return &tx_; }
  xsk_ring_prod* fill() noexcept { return fill_; }
  xsk_ring_cons* comp() noexcept { return comp_; }
  uint32_t fill_size() const noexcept { return fill_size_; }

  bool zero_copy() const noexcept { return zero_copy_; }
  bool need_wakeup() const noexcept { return need_wakeup_; }
  bool busy_poll() const noexcept { return busy_poll_; }
  bool multi_buffer() const noexcept { return multi_buffer_; }
  // "zero-copy" or "copy", plus "need_wakeup" / "busy_poll" when on, then "multi-buffer" or
  // "single-buffer (XDP_USE_SG refused: <why>)".
  std::string mode() const;
  xdp_statistics statistics() const noexcept;  // zeros if the kernel does not answer

 private:
  int create(const NetdevInfo& dev, bool rx, bool tx, uint16_t bind_flags);
  int create_sg(const NetdevInfo& dev, bool rx, bool tx, uint16_t bind_flags);
  int create_once(const NetdevInfo& dev, bool rx, bool tx, uint16_t bind_flags);
  void set_busy_poll(const AfxdpOptions& opts, const std::string& context);

  uint32_t queue_;
  Umem& umem_;
  xsk_socket* xsk_ = nullptr;
  xsk_ring_cons rx_{};
  xsk_ring_prod tx_{};
  xsk_ring_prod own_fill_{};
  xsk_ring_cons own_comp_{};
  xsk_ring_prod* fill_ = &own_fill_;
  xsk_ring_cons* comp_ = &own_comp_;
  uint32_t fill_size_ = 0;
  uint32_t rx_size_ = 0, tx_size_ = 0;
  bool zero_copy_ = false, need_wakeup_ = false, busy_poll_ = false, multi_buffer_ = false;
  std::string sg_refused_;  // errno text of the refused XDP_USE_SG bind
};

}  // namespace netdaq::detail::afxdp
