// rx.reorder mode roce: RoCEv2 RDMA WRITEs received in software and checked as an RDMA NIC
// checks them (docs/roce-software.md). The queue pairs are what the rdma engine's manual peer
// file declares; the ICRC needs the IP header (an engine that delivers whole frames) and the
// CPU to read every byte.
#include "core/config_validate_roce.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <vector>

#include "netdaq/engine_info.h"
#include "protocols/roce.h"

namespace netdaq::detail {
namespace {

namespace wire = protocols::roce;

std::string hex(uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof s, "%#llx", static_cast<unsigned long long>(v));
  return s;
}

bool written(const Checker& c, const std::string& key) { return c.config().locations.count(key) > 0; }

// The bytes the queue's buffers hold (all its segments), 0 when a region is unknown.
uint64_t buffer_bytes(const Config& cfg, const QueueConfig& q) {
  uint64_t total = 0;
  for (const auto& name : q.memory_regions) {
    const MemoryRegionConfig* r = cfg.find_region(name);
    if (!r) return 0;
    total += r->buf_size;
  }
  return total;
}

// The engines whose packets keep their Ethernet/IP headers: where the ICRC can be checked.
std::string whole_frame_engines() {
  std::vector<std::string> names;
  for (const auto& e : known_engines())
    if (e.capabilities.whole_frames) names.push_back(e.name);
  return join(names);
}

void check_queue_pair(Checker& c, const ReorderConfig& g, size_t i, const std::string& p) {
  const RoceQueuePair& qp = g.roce.queue_pairs[i];
  if (qp.qpn == 0)
    c.error(p + ".qpn", "0", "is required: the QP number the sensor writes to (its destination QP), 0x2..0xFFFFFF");
  else if (!limits::roce_qpn.contains(uint64_t{qp.qpn}))
    c.error(p + ".qpn", hex(qp.qpn),
            "must be 0x2..0xFFFFFF (2..16777215): QP numbers are 24 bits, and QPs 0 and 1 are the SMI and GSI "
            "queue pairs, never a sensor's");
  if (!limits::roce_psn.contains(uint64_t{qp.psn}))
    c.error(p + ".psn", hex(qp.psn), "must be 0..0xFFFFFF (0..16777215): PSNs are 24 bits");
  c.range(p + ".slots", qp.slots, limits::roce_slots);

  // A slot holds one frame: its size is slot_size, or frame_bytes for every queue pair.
  const uint64_t slot = qp.slot_size ? qp.slot_size : g.frame_bytes;
  if (slot == 0) {
    c.error(p + ".slot_size", "0",
            "is required: the largest frame the sensor writes into one slot, in bytes (the peer file's "
            "ring.slot_size); or set frame_bytes for every queue pair");
    return;
  }
  if (qp.slot_size) c.range(p + ".slot_size", qp.slot_size, limits::frame_bytes);
  // (Every slot_size given: frame_bytes must be the largest, which check_spans says.)
  if (qp.slot_size && g.frame_bytes && qp.slot_size > g.frame_bytes && roce_frame_bytes(g) == 0)
    c.error(p + ".slot_size", std::to_string(qp.slot_size),
            "must be at most frame_bytes (" + std::to_string(g.frame_bytes) + "): a slot's bytes go to one frame buffer");
  if (qp.slot_size && (qp.slot_size * 8) % sample_bits(g.input))
    c.error(p + ".slot_size", std::to_string(qp.slot_size),
            "must hold whole " + std::string(to_string(g.input)) + " input samples");
  if (qp.stride && qp.stride < slot)
    c.error(p + ".stride", std::to_string(qp.stride),
            "must be at least slot_size (" + std::to_string(slot) + "): slots must not overlap; 0 or left out: slot_size");
  const uint64_t stride = qp.stride ? qp.stride : slot;
  // The window [base_va, base_va + slots x stride) lies in the 64-bit address space.
  const unsigned __int128 end = static_cast<unsigned __int128>(qp.base_va) +
                                static_cast<unsigned __int128>(qp.slots) * stride;
  if (end > (static_cast<unsigned __int128>(1) << 64))
    c.error(p + ".base_va", hex(qp.base_va),
            "the window base_va + slots x stride (" + hex(qp.base_va) + " + " + std::to_string(qp.slots) + " x " +
                std::to_string(stride) + ") ends beyond the 64-bit address space; lower base_va, slots or stride");
  if (g.roce.metadata_bytes && g.roce.metadata_bytes >= slot)
    c.error(p + ".slot_size", std::to_string(slot),
            "must be more than roce.metadata_bytes (" + std::to_string(g.roce.metadata_bytes) +
                "): a frame's own bytes are told from its metadata write by length");
}

}  // namespace

bool roce_set(const Checker& c, const ReorderConfig& g, const std::string& path) {
  const RoceOptions d;
  const RoceOptions& o = g.roce;
  return written(c, path + ".roce") || !o.queue_pairs.empty() || o.check_icrc != d.check_icrc || o.mtu != d.mtu ||
         o.metadata_bytes != d.metadata_bytes || o.psn_window != d.psn_window;
}

uint64_t roce_frame_bytes(const ReorderConfig& g) noexcept {
  uint64_t largest = 0;
  for (const auto& qp : g.roce.queue_pairs) {
    if (!qp.slot_size) return 0;
    largest = std::max(largest, qp.slot_size);
  }
  return largest;
}

void check_roce(Checker& c, const InterfaceConfig& iface, const QueueConfig* q, const ReorderConfig& g,
                const std::string& path) {
  const RoceOptions& o = g.roce;
  const std::string p = path + ".roce";
  const bool ib_mtu = std::find(kRoceMtus.begin(), kRoceMtus.end(), o.mtu) != kRoceMtus.end();
  if (!ib_mtu)
    c.error(p + ".mtu", std::to_string(o.mtu),
            "must be one of: 256, 512, 1024, 2048, 4096 (the InfiniBand MTUs): the sensor's path MTU, the payload "
            "of every WRITE FIRST and MIDDLE");
  if (!std::has_single_bit(o.psn_window) || !limits::roce_psn_window.contains(uint64_t{o.psn_window}))
    c.error(p + ".psn_window", std::to_string(o.psn_window),
            "must be a power of two 1..8388608 (half the 24-bit PSN space): the PSNs behind the newest kept to tell "
            "a late packet from a duplicate");
  c.range(p + ".metadata_bytes", o.metadata_bytes, limits::roce_metadata_bytes);
  // The record is told by its length and kept from its one packet.
  if (ib_mtu && o.metadata_bytes > o.mtu)
    c.error(p + ".metadata_bytes", std::to_string(o.metadata_bytes),
            "must be at most roce.mtu (" + std::to_string(o.mtu) +
                "): the end-of-frame metadata is one WRITE with immediate of one packet");

  // Queue pairs: at least one, each its own QPN (a stream each).
  if (o.queue_pairs.empty())
    c.error(p + ".queue_pairs", "",
            "needs at least one queue pair in mode roce: {qpn, rkey, base_va, slots, stride, slot_size, psn} of each "
            "sensor, as the rdma engine's peer file declares them");
  for (size_t i = 0; i < o.queue_pairs.size(); ++i) {
    const std::string qp = p + ".queue_pairs[" + std::to_string(i) + "]";
    check_queue_pair(c, g, i, qp);
    for (size_t k = 0; k < i; ++k)
      if (o.queue_pairs[k].qpn == o.queue_pairs[i].qpn && o.queue_pairs[i].qpn)
        c.error(qp + ".qpn", hex(o.queue_pairs[i].qpn),
                "is also the qpn of roce.queue_pairs[" + std::to_string(k) +
                    "]: each queue pair is one sensor (one stream); give each its own");
  }
  if (o.queue_pairs.size() > g.max_streams)
    c.error(path + ".max_streams", std::to_string(g.max_streams),
            "must be at least the number of roce.queue_pairs (" + std::to_string(o.queue_pairs.size()) +
                "): each queue pair is a stream of its own; set max_streams: " + std::to_string(o.queue_pairs.size()));

  // WRITE FIRST and MIDDLE carry mtu bytes each: every packet starts on a granule.
  const uint32_t granule = g.granule ? g.granule : 8;
  if (ib_mtu && granule && o.mtu % granule)
    c.error(path + ".granule", std::to_string(granule),
            "must divide roce.mtu (" + std::to_string(o.mtu) +
                "): WRITE FIRST and MIDDLE packets carry mtu bytes each, so every packet starts on a granule");

  // The ICRC covers the IP and UDP headers: the engine must deliver them.
  const auto caps = capabilities_of(iface);
  if (o.check_icrc && caps && !caps->whole_frames)
    c.error(p + ".check_icrc", "true",
            "needs each packet's IP and UDP headers (the ICRC covers them); interface '" + iface.name + "' (engine " +
                iface.engine + ") delivers UDP payloads only: use an engine that delivers whole frames (" +
                whole_frame_engines() + ") or socket with ip_headers: true, or set check_icrc: false");
  if (!q) return;
  const Config& cfg = c.config();
  // The largest packet: BTH, RETH, immediate, mtu bytes and the ICRC in the UDP payload.
  const uint64_t largest = wire::kBthBytes + wire::kRethBytes + wire::kImmBytes + o.mtu + wire::kIcrcBytes;
  // Engines that receive a packet into several buffers (afxdp multi-buffer) hold more.
  const uint64_t held = buffer_bytes(cfg, *q) * (caps ? std::max(caps->rx_buffers_per_packet, 1u) : 1u);
  if (ib_mtu && held && held < largest)
    c.error(p + ".mtu", std::to_string(o.mtu),
            "packets carry up to " + std::to_string(largest) + " bytes of UDP payload (BTH, RETH, immediate, " +
                std::to_string(o.mtu) + " bytes, ICRC), more than the queue's buffers hold (" + std::to_string(held) +
                " bytes): set mtu to the sensor's path MTU or raise buf_size");
  // The CPU computes the ICRC over every byte of the packet, from one buffer (Packet::frame()
  // is empty for a packet split into headers and data).
  if (o.check_icrc && q->memory_regions.size() > 1)
    c.error(p + ".check_icrc", "true",
            "needs each packet whole in one buffer (the ICRC covers it from the IP header on), and rx queue " +
                std::to_string(q->id) + " splits headers from data (" + std::to_string(q->memory_regions.size()) +
                " regions): use one region, or set check_icrc: false");
  else if (o.check_icrc)
    for (const auto& name : q->memory_regions)
      if (const MemoryRegionConfig* r = cfg.find_region(name); r && r->kind == MemoryKind::device)
        c.error(p + ".check_icrc", "true",
                "the CPU computes the ICRC over every byte of the packet, and region '" + r->name +
                    "' is of kind device, which the CPU cannot read: use kind pinned or mapped, or set check_icrc: false");
}

}  // namespace netdaq::detail
