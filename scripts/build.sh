#!/usr/bin/env bash
# Configures and builds netdaq into ./build (or $NETDAQ_BUILD_DIR). Extra args go to cmake.
# NETDAQ_TARGETS="a b" builds only those targets (scripts/run.sh: the library and the CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${NETDAQ_BUILD_DIR:-build}
generator=()
command -v ninja >/dev/null && [ ! -f "$build_dir/Makefile" ] && generator=(-G Ninja)
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
targets=()
for t in ${NETDAQ_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"
