#!/usr/bin/env bash
# The main job on its embedded default: installs what is missing, builds, and runs a
# loopback acquisition with the socket engine (examples/loopback.yaml). Extra args go to
# `netdaq run` (e.g. --duration 10, or another config file).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# Only the library and the CLI (tests, benchmarks and fuzzers are scripts/test.sh's), with
# the build's progress on stderr.
echo "netdaq: building the library and the CLI into ./build" >&2
NETDAQ_TARGETS=netdaq_cli ./scripts/build.sh >&2
exec ./build/tools/netdaq/netdaq run "${@:-examples/loopback.yaml}"
