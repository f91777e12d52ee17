# pcap engine (built when libpcap is found, see cmake/pcap.cmake): replays capture files.
list(APPEND NETDAQ_ENGINE_SOURCES
  engines/pcap/engine.cpp
  engines/pcap/pcap_reader.cpp
  engines/pcap/rx.cpp
)
list(APPEND NETDAQ_ENGINE_LIBS PkgConfig::PCAP)
