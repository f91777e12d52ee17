#include "afxdp_config.h"

namespace ndqtest {

using namespace netdaq;

FlowConfig udp_flow(uint32_t id, uint16_t queue, uint16_t udp_dst) {
  FlowConfig f;
  f.id = id;
  f.queue = queue;
  f.match.udp_dst = udp_dst;
  return f;
}

Config AfxdpIface::build() const {
  Config c;
  c.log.level = "warn";
  c.memory_regions.push_back(MemoryRegionConfig{"umem", MemoryKind::host, buf_size, num_bufs});
  InterfaceConfig i;
  i.name = "x0";
  i.engine = "afxdp";
  i.address = dev;
  i.options.get<AfxdpOptions>() = afxdp;
  if (!dst_mac.empty()) i.options.get<AfxdpOptions>().dst_mac = dst_mac;
  for (uint16_t id : rx_queues) {
    QueueConfig q;
    q.id = id;
    q.mode = mode;
    q.batch_size = 64;
    q.ring_depth = ring_depth;
    q.memory_regions = {"umem"};
    i.rx.queues.push_back(q);
  }
  i.rx.flows = flows;
  if (tx_queue) {
    QueueConfig q;
    q.id = *tx_queue;
    q.batch_size = 64;
    q.ring_depth = 16;
    q.memory_regions = {"umem"};
    i.tx.queues.push_back(q);
    i.tx.destination = destination;
    i.tx.rate_pps = rate_pps;
  }
  c.interfaces.push_back(i);
  return c;
}

}  // namespace ndqtest
