#!/usr/bin/env bash
# Builds netdaq and runs every test (unit, config, CLI, integration over loopback and
# network namespaces). Needs root for the namespace tests; with CI=true those never skip.
# Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
cd "${NETDAQ_BUILD_DIR:-build}"
ctest --output-on-failure --timeout 600 -j1 "$@"
