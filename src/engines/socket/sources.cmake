# Socket engine (always built): kernel UDP/TCP.
list(APPEND NETDAQ_ENGINE_SOURCES
  engines/socket/engine.cpp
)
