// The rings of an rx queue whose engine shares them with the kernel (AF_XDP), handed to
// another consumer: a GPU kernel (netdaq/gpu_xsk.h) or any code that speaks the AF_XDP ring
// protocol. After RxQueue::hand_over_rings() the queue's CPU side never touches them again:
// poll() returns empty bursts, while stats() keeps counting what the kernel dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace netdaq {

// One single-producer / single-consumer ring in memory the kernel maps into the process.
// Indices run freely (wrap at 2^32); entry i is at entries[i & (size - 1)].
struct SharedRing {
  uint32_t* producer = nullptr;
  uint32_t* consumer = nullptr;
  uint32_t* flags = nullptr;    // XDP_RING_NEED_WAKEUP (bit 0) where the kernel asks for a kick
  void* entries = nullptr;
  uint32_t size = 0;            // entries, a power of two
  // The page-aligned span of the mapping that holds all of the above (to register it with
  // a GPU driver: cudaHostRegister).
  void* span = nullptr;
  size_t span_bytes = 0;
  // The span's address, shared with the queue. A new owner that must keep the address its own
  // after the queue goes (a GPU driver whose CUDA registration of the span outlives the
  // socket) keeps a copy; a queue that goes first leaves an inaccessible mapping at the span
  // until the last copy is released, so that no new mapping lands there.
  std::shared_ptr<void> address_hold;
};

struct HandedOverRings {
  SharedRing rx;    // entries: struct xdp_desc { u64 addr; u32 len; u32 options; } (16 bytes)
  SharedRing fill;  // entries: u64 UMEM addresses of free buffers
  // The UMEM: the queue's region; descriptor addresses are byte offsets into it.
  std::byte* umem = nullptr;
  size_t umem_bytes = 0;
  uint32_t chunk = 0;           // bytes per buffer (a descriptor's addr / chunk is its buffer)
  uint32_t buffers = 0;         // buffers of the queue's pool
  int fd = -1;                  // the XSK socket: recvfrom(fd, MSG_DONTWAIT) wakes the kernel's side
  bool need_wakeup = false;     // the socket was bound with XDP_USE_NEED_WAKEUP
  bool zero_copy = false;
  bool multi_buffer = false;    // a frame may span several descriptors (XDP_PKT_CONTD)
};

// A tx queue's rings (TxQueue::hand_over_rings): after it the queue's allocate() returns
// empty bursts and its CPU side never touches them; stats() keeps the kernel's counts.
struct HandedOverTxRings {
  SharedRing tx;          // entries: struct xdp_desc (16 bytes), written by the new owner
  SharedRing completion;  // entries: u64 UMEM addresses of buffers the kernel has sent
  std::byte* umem = nullptr;
  size_t umem_bytes = 0;
  uint32_t chunk = 0;
  // Buffers taken from the queue's pool for the new owner (UMEM byte offsets), theirs for good:
  // no more than the TX and the completion ring each hold.
  std::vector<uint64_t> buffers;
  // Bytes each buffer holds from its offset. A packet larger than that spans several buffers,
  // one descriptor each, all but the last marked XDP_PKT_CONTD: only where multi_buffer.
  uint32_t buffer_bytes = 0;
  bool multi_buffer = false;    // the socket was bound with XDP_USE_SG
  // The Ethernet/IPv4/UDP headers the queue writes in front of a payload of the size asked
  // for (its tx.destination), IPv4 checksum included.
  std::vector<std::byte> headers;
  int fd = -1;                  // sendto(fd, MSG_DONTWAIT) makes the kernel transmit
  bool need_wakeup = false;
  bool zero_copy = false;       // copy mode transmits only inside sendto: every batch needs a kick
};

}  // namespace netdaq
