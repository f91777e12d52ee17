# The dpdk engine needs libdpdk (Debian: libdpdk-dev, DPDK 22.11). Appends "dpdk" to
# NETDAQ_ENGINES when it is found.
option(NETDAQ_WITH_DPDK "Build the dpdk engine when libdpdk is found" ON)
if(NETDAQ_WITH_DPDK)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(LIBDPDK QUIET libdpdk)
  endif()
  # rte_vdev_init lives in the vdev bus driver, which pkg-config lists only for static links.
  find_library(NETDAQ_RTE_BUS_VDEV rte_bus_vdev)
  if(LIBDPDK_FOUND AND NETDAQ_RTE_BUS_VDEV)
    list(APPEND NETDAQ_ENGINES dpdk)
    message(STATUS "dpdk engine: libdpdk ${LIBDPDK_VERSION}")
  else()
    netdaq_part_missing("dpdk engine" libdpdk-dev)
  endif()
endif()
