# The pcap engine as the core sees it, compiled in every build (its runtime may not be):
# description, options and validation.
list(APPEND NETDAQ_ENGINE_CONFIG_SOURCES
  engines/pcap/describe.cpp
  engines/pcap/validate.cpp
)
