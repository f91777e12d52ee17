#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz: config loader, frame parser) with clang, ASan and
# UBSan into ./build-fuzz (or $NETDAQ_FUZZ_BUILD_DIR) and runs them through ctest (label fuzz):
# each replays its seed corpus, then fuzzes for NETDAQ_FUZZ_SECONDS seconds (default 60; 0:
# replay only). Only the library and the two fuzzers are compiled, not the rest of the test
# suite, and the library without the afxdp and dpdk engines: the frame parser and the config
# loader (which checks afxdp and dpdk options whether or not those engines are built) are core
# code, and the engines would double the build (about 430 s of CPU instead of 220 s).
# Exits non-zero when the build or any fuzz test fails; crashing inputs are kept in
# build-fuzz/tests/fuzz/artifacts/. Extra args go to ctest. Needs clang and libclang-rt-14-dev
# (libFuzzer), which scripts/install-deps.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${NETDAQ_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${NETDAQ_FUZZ_SECONDS:-60}

echo "== fuzz: build (clang, ASan + UBSan) in $build_dir =="
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DNETDAQ_BUILD_FUZZ=ON -DNETDAQ_BUILD_BENCH=OFF -DNETDAQ_WITH_CUDA=OFF \
      -DNETDAQ_WITH_AFXDP=OFF -DNETDAQ_WITH_DPDK=OFF \
      -DNETDAQ_FUZZ_SECONDS="$seconds" >/dev/null
cmake --build "$build_dir" -j"$(nproc)" --target netdaq_config_fuzz netdaq_frame_fuzz

echo "== fuzz: seed corpora, then ${seconds} s per fuzzer =="
artifacts_dir=$build_dir/tests/fuzz/artifacts
rm -rf "$artifacts_dir"  # only this run's failing inputs are listed below (ctest recreates it)
status=0
(cd "$build_dir" && ctest -L fuzz --output-on-failure -j"$(nproc)" "$@") || status=$?
if [ "$status" -ne 0 ]; then
  echo "fuzz: FAILED (ctest exit $status)" >&2
  artifacts=$(find "$artifacts_dir" -type f 2>/dev/null || true)
  if [ -n "$artifacts" ]; then
    echo "fuzz: failing inputs (rerun one: $build_dir/tests/fuzz/netdaq_<config|frame>_fuzz FILE):" >&2
    echo "$artifacts" | sed 's/^/  /' >&2
  fi
  exit "$status"
fi
