// The afxdp engine's RX and TX ports (rx.cpp, tx.cpp), opened by engine.cpp.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/engine.h"
#include "netdaq/engines/afxdp.h"
#include "net/frame_headers.h"
#include "engines/afxdp/xdp_program.h"
#include "engines/afxdp/xsk_socket.h"

namespace netdaq::detail::afxdp {

// program: the interface's steering program (outlives the port). mode: e.g. "native XDP".
std::unique_ptr<RxPort> make_rx_port(const QueueResources& q, std::shared_ptr<XskSocket> xsk,
                                     const SteeringProgram& program);
// headers: what the engine writes in front of each payload; nullopt: the application writes
// the whole frame (afxdp.tx_raw_frames).
std::unique_ptr<TxPort> make_tx_port(const QueueResources& q, std::shared_ptr<XskSocket> xsk,
                                     const std::optional<Ipv4UdpHeaders>& headers);

}  // namespace netdaq::detail::afxdp
