#!/usr/bin/env bash
# The core, the GPU code, src/net and the CLI decide by engine capabilities, never by engine
# names: no engine name in a string literal outside src/engines (the engine list CMake
# generates lives in the build tree). Prints the offending lines and exits 1 when there are any.
set -euo pipefail
cd "$(dirname "$0")/.."
if hits=$(grep -rnE '"(socket|afxdp|dpdk|rdma|pcap)"' src/core src/gpu src/net tools); then
  echo "engine names compared outside src/engines (ask capabilities: netdaq/engine_info.h):"
  echo "$hits"
  exit 1
fi
echo "no engine names outside src/engines"
