# AF_XDP engine (built when libxdp, libbpf and clang are found, see cmake/afxdp.cmake).
# The eBPF steering program is compiled with clang and embedded into libnetdaq.
set(NETDAQ_AFXDP_DIR ${CMAKE_CURRENT_SOURCE_DIR}/engines/afxdp)
set(NETDAQ_STEER_OBJ ${CMAKE_CURRENT_BINARY_DIR}/steer.bpf.o)
execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch OUTPUT_VARIABLE NETDAQ_MULTIARCH
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
add_custom_command(
  OUTPUT ${NETDAQ_STEER_OBJ}
  COMMAND ${NETDAQ_BPF_CLANG} -O2 -g -target bpf -Wall -Werror
          -I/usr/include/${NETDAQ_MULTIARCH} -I${NETDAQ_AFXDP_DIR}/bpf
          -c ${NETDAQ_AFXDP_DIR}/bpf/steer.bpf.c -o ${NETDAQ_STEER_OBJ}
  DEPENDS ${NETDAQ_AFXDP_DIR}/bpf/steer.bpf.c ${NETDAQ_AFXDP_DIR}/bpf/steer_abi.h
  COMMENT "Compiling the afxdp steering program (eBPF)")
configure_file(${NETDAQ_AFXDP_DIR}/steer_object.cpp.in ${CMAKE_CURRENT_BINARY_DIR}/steer_object.cpp @ONLY)
set_source_files_properties(${CMAKE_CURRENT_BINARY_DIR}/steer_object.cpp PROPERTIES OBJECT_DEPENDS ${NETDAQ_STEER_OBJ})

list(APPEND NETDAQ_ENGINE_SOURCES
  ${CMAKE_CURRENT_BINARY_DIR}/steer_object.cpp
  engines/afxdp/engine.cpp
  engines/afxdp/interface_info.cpp
  engines/afxdp/xdp_program.cpp
  engines/afxdp/umem.cpp
  engines/afxdp/xsk_socket.cpp
  engines/afxdp/tx_headers.cpp
  engines/afxdp/rx.cpp
  engines/afxdp/tx.cpp
  util/libbpf_log.cpp
)
list(APPEND NETDAQ_ENGINE_LIBS PkgConfig::LIBXDP PkgConfig::LIBBPF)
