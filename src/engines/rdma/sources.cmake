# RDMA engine (built when libibverbs and librdmacm are found, see cmake/rdma.cmake).
list(APPEND NETDAQ_ENGINE_SOURCES
  engines/rdma/engine.cpp
  engines/rdma/verbs.cpp
  engines/rdma/device_memory.cpp
  engines/rdma/listener.cpp
  engines/rdma/manual.cpp
  engines/rdma/qp_params.cpp
  engines/rdma/connected_rx.cpp
  engines/rdma/rx.cpp
  engines/rdma/rx_ring.cpp
  engines/rdma/tx.cpp
)
list(APPEND NETDAQ_ENGINE_LIBS PkgConfig::IBVERBS PkgConfig::RDMACM)
