# AF_XDP engine (built when libxdp, libbpf and clang are found, see cmake/afxdp.cmake).
# The eBPF steering program is compiled with clang and embedded into libnetdaq.
include(${PROJECT_SOURCE_DIR}/cmake/bpf_object.cmake)
set(NETDAQ_AFXDP_DIR ${CMAKE_CURRENT_SOURCE_DIR}/engines/afxdp)
netdaq_bpf_object(SOURCE ${NETDAQ_AFXDP_DIR}/bpf/steer.bpf.c SYMBOL netdaq_afxdp_steer_obj
                  INCLUDES ${NETDAQ_AFXDP_DIR}/bpf DEPENDS ${NETDAQ_AFXDP_DIR}/bpf/steer_abi.h
                  OUT_SOURCES NETDAQ_ENGINE_SOURCES)

list(APPEND NETDAQ_ENGINE_SOURCES
  engines/afxdp/engine.cpp
  engines/afxdp/interface_info.cpp
  engines/afxdp/xdp_program.cpp
  engines/afxdp/umem.cpp
  engines/afxdp/xsk_socket.cpp
  engines/afxdp/tx_headers.cpp
  engines/afxdp/rx.cpp
  engines/afxdp/tx.cpp
  engines/afxdp/shared_ring.cpp
  util/libbpf_log.cpp
)
list(APPEND NETDAQ_ENGINE_LIBS PkgConfig::LIBXDP PkgConfig::LIBBPF)
