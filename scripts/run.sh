#!/usr/bin/env bash
# The main job on its embedded default: installs what is missing, builds, and runs a
# loopback acquisition with the socket engine (examples/loopback.yaml). Extra args go to
# `netdaq run` (e.g. --duration 10, or another config file).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh >/dev/null
exec ./build/tools/netdaq/netdaq run "${@:-examples/loopback.yaml}"
