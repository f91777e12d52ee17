# The dpdk engine as the core sees it, compiled in every build (its runtime may not be):
# description, options and validation.
list(APPEND NETDAQ_ENGINE_CONFIG_SOURCES
  engines/dpdk/describe.cpp
  engines/dpdk/validate.cpp
)
