#!/usr/bin/env bash
# Builds netdaq on a GPU machine and runs every GPU test, the end-to-end socket -> GPU run
# and the GPU benchmarks; logs and JSON go to $OUT (or ./out). Used through the `device`
# tool (docs/gpu.md): the machine has CUDA, yaml-cpp, spdlog and GoogleTest but no package
# registry, so header-only CLI11 and nlohmann-json travel in .carry/include.
#   scripts/gpu-check.sh [tests|bench|all]   (default all)
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
out=${OUT:-out}
mkdir -p "$out/logs"
trap 'tar -C "$out" -czf "$out/logs.tgz" logs && rm -rf "$out/logs"' EXIT
if [ -d .carry/include ]; then
  export CPLUS_INCLUDE_PATH=$PWD/.carry/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
  prefix=(-DCMAKE_PREFIX_PATH=$PWD/.carry -DCLI11_INCLUDE_DIR=$PWD/.carry/include)
fi
# libpcap (netdaq capture): `apt-get download libpcap0.8-dev libpcap0.8 libdbus-1-3`, each
# `dpkg -x` into .carry/pcap-root, plus .carry/lib/pkgconfig/libpcap.pc with
# prefix=${pcfiledir}/../../pcap-root/usr (libdir ${prefix}/lib/x86_64-linux-gnu).
if [ -d .carry/pcap-root ]; then
  export PKG_CONFIG_PATH=$PWD/.carry/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$PWD/.carry/pcap-root/usr/lib/x86_64-linux-gnu:$PWD/.carry/pcap-root/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# DPDK (the dpdk engine's GPU test): Debian 12's headers, libraries and the net_ring /
# net_null / mempool_ring drivers copied into .carry/dpdk (include, lib, pmds) with a
# pkgconfig/libdpdk.pc whose prefix is ${pcfiledir}/..; the test loads the drivers with -d.
if [ -d .carry/dpdk ]; then
  export PKG_CONFIG_PATH=$PWD/.carry/dpdk/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$PWD/.carry/dpdk/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export NETDAQ_DPDK_DRIVERS=$PWD/.carry/dpdk/pmds
  prefix+=(-DNETDAQ_RTE_BUS_VDEV=$PWD/.carry/dpdk/lib/librte_bus_vdev.so)
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/logs/gpu.txt"
echo "== configure and build"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETDAQ_BUILD_BENCH=ON "${prefix[@]}" \
  > "$out/logs/configure.log" 2>&1 || { tail -30 "$out/logs/configure.log"; exit 1; }
grep "netdaq:" "$out/logs/configure.log"
targets=(netdaq_gpu_tests netdaq_unit_tests netdaq_cli netdaq_cli_tests)
for b in bench/gpu/*.cu; do targets+=("netdaq_$(basename "$b" .cu)"); done
cmake --build build-gpu -j"$(nproc)" --target "${targets[@]}" > "$out/logs/build.log" 2>&1 \
  || { grep -E "error|Error" -A3 "$out/logs/build.log" | head -60; exit 1; }
echo "built: ${targets[*]}"
rc=0
if [ "$what" != bench ]; then
  echo "== GPU tests"
  # Lazy module loading can wait forever behind a running persistent kernel: load all up front.
  export CUDA_MODULE_LOADING=EAGER
  build-gpu/tests/gpu/netdaq_gpu_tests 2>&1 | tee "$out/logs/gpu_tests.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|gpu [0-9]+:|->|error" | head -80
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  echo "== unit tests (host side, incl. the frame tracker and doorbell ring)"
  build-gpu/tests/unit/netdaq_unit_tests --gtest_brief=1 > "$out/logs/unit_tests.log" 2>&1 || rc=1
  tail -3 "$out/logs/unit_tests.log"
  build-gpu/tools/netdaq/netdaq --version
  echo "== CLI tests that touch the GPU"
  build-gpu/tests/cli/netdaq_cli_tests --gtest_filter='*Gpu*:*Version*' 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED|     OK) |Failure" || rc=1
  echo "== netdaq run examples/gpu-frames.yaml (socket loopback -> frames in GPU memory)"
  build-gpu/tools/netdaq/netdaq run examples/gpu-frames.yaml -q --json "$out/run_gpu_frames.json" 2>&1 | tail -12 || rc=1
fi
if [ "$what" != tests ]; then
  for b in bench/gpu/*.cu; do
    name=$(basename "$b" .cu)
    echo "== bench $name"
    timeout 240 "build-gpu/bench/gpu/netdaq_$name" --json "$out/$name.json" 2>&1 | tee "$out/logs/$name.log" | tail -40 || rc=1
  done
fi
exit $rc
