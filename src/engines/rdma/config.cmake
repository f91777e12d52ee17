# The rdma engine as the core sees it, compiled in every build (its runtime may not be):
# description, options and validation.
list(APPEND NETDAQ_ENGINE_CONFIG_SOURCES
  engines/rdma/describe.cpp
  engines/rdma/validate.cpp
)
