# DPDK engine (built when libdpdk is found, see cmake/dpdk.cmake). DPDK's compile flags
# (-include rte_config.h, -march) apply to these files only, never to the rest of netdaq.
set(NETDAQ_DPDK_SOURCES
  engines/dpdk/engine.cpp
  engines/dpdk/eal.cpp
  engines/dpdk/hugepages.cpp
  engines/dpdk/lcore.cpp
  engines/dpdk/device.cpp
  engines/dpdk/mbuf_pools.cpp
  engines/dpdk/flow_rules.cpp
  engines/dpdk/flow_table.cpp
  engines/dpdk/port_stats.cpp
  engines/dpdk/rx.cpp
  engines/dpdk/tx.cpp
)
set_source_files_properties(${NETDAQ_DPDK_SOURCES} PROPERTIES
  COMPILE_OPTIONS "${LIBDPDK_CFLAGS};-DALLOW_EXPERIMENTAL_API;-Wno-pedantic;-Wno-volatile")
list(APPEND NETDAQ_ENGINE_SOURCES ${NETDAQ_DPDK_SOURCES})
list(APPEND NETDAQ_ENGINE_LIBS ${LIBDPDK_LINK_LIBRARIES} ${NETDAQ_RTE_BUS_VDEV})
