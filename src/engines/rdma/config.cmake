# The rdma engine as the core sees it (its name; the runtime is not written yet).
list(APPEND NETDAQ_ENGINE_CONFIG_SOURCES
  engines/rdma/describe.cpp
)
