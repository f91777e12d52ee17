# Socket engine (always built): kernel UDP/TCP.
list(APPEND NETDAQ_ENGINE_SOURCES
  engines/socket/engine.cpp
  engines/socket/address.cpp
  engines/socket/socket_options.cpp
  engines/socket/udp_rx.cpp
  engines/socket/udp_tx.cpp
  engines/socket/tcp_rx.cpp
  engines/socket/tcp_tx.cpp
)
