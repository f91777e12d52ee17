# Socket engine (always built): kernel UDP/TCP.
list(APPEND NETDAQ_ENGINE_SOURCES
  engines/socket/engine.cpp
  engines/socket/address.cpp
  engines/socket/socket_options.cpp
  engines/socket/udp_rx.cpp
  engines/socket/udp_ip_rx.cpp
  engines/socket/udp_tx.cpp
  engines/socket/tcp_rx.cpp
  engines/socket/tcp_tx.cpp
)

# Per-datagram kernel drop counts under UDP GRO (gro_drops.h): an eBPF tracing program,
# compiled with clang and embedded, where libbpf and clang are found (as for afxdp).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND AND NOT TARGET PkgConfig::LIBBPF)  # imported targets are not cached: look again on every configure
  pkg_check_modules(LIBBPF QUIET IMPORTED_TARGET libbpf)
endif()
find_program(NETDAQ_BPF_CLANG NAMES clang clang-16 clang-15 clang-14)
if(LIBBPF_FOUND AND NETDAQ_BPF_CLANG)
  include(${PROJECT_SOURCE_DIR}/cmake/bpf_object.cmake)
  set(NETDAQ_SOCKET_DIR ${CMAKE_CURRENT_SOURCE_DIR}/engines/socket)
  netdaq_bpf_object(SOURCE ${NETDAQ_SOCKET_DIR}/bpf/gro_drops.bpf.c SYMBOL netdaq_socket_gro_drops_obj
                    INCLUDES ${NETDAQ_SOCKET_DIR}/bpf DEPENDS ${NETDAQ_SOCKET_DIR}/bpf/gro_drops_abi.h
                    OUT_SOURCES NETDAQ_ENGINE_SOURCES)
  list(APPEND NETDAQ_ENGINE_SOURCES engines/socket/gro_drops.cpp util/libbpf_log.cpp)
  list(APPEND NETDAQ_ENGINE_LIBS PkgConfig::LIBBPF)
else()
  list(APPEND NETDAQ_ENGINE_SOURCES engines/socket/gro_drops_unavailable.cpp)
  message(STATUS "socket engine: GRO drops counted per batch (libbpf-dev and clang count them per datagram)")
endif()
