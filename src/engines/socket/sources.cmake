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

# Per-datagram kernel drop counts under UDP GRO (gro_drops.h): an eBPF tracing program,
# compiled with clang and embedded, where libbpf and clang are found (as for afxdp).
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND AND NOT LIBBPF_FOUND)
  pkg_check_modules(LIBBPF QUIET IMPORTED_TARGET libbpf)
endif()
find_program(NETDAQ_BPF_CLANG NAMES clang clang-16 clang-15 clang-14)
if(LIBBPF_FOUND AND NETDAQ_BPF_CLANG)
  set(NETDAQ_SOCKET_DIR ${CMAKE_CURRENT_SOURCE_DIR}/engines/socket)
  set(NETDAQ_GRO_DROPS_OBJ ${CMAKE_CURRENT_BINARY_DIR}/gro_drops.bpf.o)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch OUTPUT_VARIABLE NETDAQ_MULTIARCH
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  add_custom_command(
    OUTPUT ${NETDAQ_GRO_DROPS_OBJ}
    COMMAND ${NETDAQ_BPF_CLANG} -O2 -g -target bpf -Wall -Werror
            -I/usr/include/${NETDAQ_MULTIARCH} -I${NETDAQ_SOCKET_DIR}/bpf
            -c ${NETDAQ_SOCKET_DIR}/bpf/gro_drops.bpf.c -o ${NETDAQ_GRO_DROPS_OBJ}
    DEPENDS ${NETDAQ_SOCKET_DIR}/bpf/gro_drops.bpf.c ${NETDAQ_SOCKET_DIR}/bpf/gro_drops_abi.h
    COMMENT "Compiling the socket engine's GRO drop counter (eBPF)")
  configure_file(${NETDAQ_SOCKET_DIR}/gro_drops_object.cpp.in ${CMAKE_CURRENT_BINARY_DIR}/gro_drops_object.cpp @ONLY)
  set_source_files_properties(${CMAKE_CURRENT_BINARY_DIR}/gro_drops_object.cpp
                              PROPERTIES OBJECT_DEPENDS ${NETDAQ_GRO_DROPS_OBJ})
  list(APPEND NETDAQ_ENGINE_SOURCES ${CMAKE_CURRENT_BINARY_DIR}/gro_drops_object.cpp
       engines/socket/gro_drops.cpp util/libbpf_log.cpp)
  list(APPEND NETDAQ_ENGINE_LIBS PkgConfig::LIBBPF)
else()
  list(APPEND NETDAQ_ENGINE_SOURCES engines/socket/gro_drops_unavailable.cpp)
  message(STATUS "socket engine: GRO drops counted per batch (libbpf-dev and clang count them per datagram)")
endif()
