#!/usr/bin/env bash
# Builds netdaq on a GPU machine and runs every GPU test, the end-to-end socket -> GPU run
# and the GPU benchmarks; logs and JSON go to $OUT (or ./out). Used through the `device`
# tool (docs/gpu.md): the machine has CUDA, yaml-cpp, spdlog and GoogleTest but no package
# registry, so what else netdaq needs travels in .carry/ (ignored by git; pass it to the device
# tool's carry): header-only CLI11 and nlohmann-json in .carry/include, and libpcap, rdma-core
# and DPDK as below. scripts/make-carry.sh makes .carry/ from this Debian 12 machine's packages.
#   scripts/gpu-check.sh gpu-filter PATTERN: only netdaq_gpu_tests, only the tests PATTERN names
#   (--gtest_filter), e.g. while a new GPU feature is brought up (XSK_BENCH=1: and the
#   GPU-driven AF_XDP benchmarks)
#   scripts/gpu-check.sh [tests|bench|fleet|all]   (default all; fleet: only what the fleet's
#   tests need is built, then the GPU fleet test and ctest -R fleet run)
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
# ISA-L (the RoCEv2 ICRC): .carry/include/isa-l, .carry/lib/libisal.so*, .carry/lib/pkgconfig/libisal.pc.
if [ -e .carry/lib/pkgconfig/libisal.pc ]; then
  export PKG_CONFIG_PATH=$PWD/.carry/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if [ -d .carry/pcap-root ]; then
  export PKG_CONFIG_PATH=$PWD/.carry/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$PWD/.carry/pcap-root/usr/lib/x86_64-linux-gnu:$PWD/.carry/pcap-root/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# rdma-core (the rdma engine; tests/gpu/rdma_gpu_memory_test.cpp): `apt-get download
# libibverbs-dev libibverbs1 librdmacm-dev librdmacm1 libnl-3-200 libnl-route-3-200`, each
# `dpkg -x` into .carry/rdma-root, plus .carry/rdma/pkgconfig/{libibverbs,librdmacm}.pc with
# prefix=${pcfiledir}/../../rdma-root/usr (no Requires.private). The machine has no RDMA device.
if [ -d .carry/httplib-root ]; then  # cpp-httplib (the metrics server): its .pc is in .carry/lib/pkgconfig
  export LD_LIBRARY_PATH=$PWD/.carry/httplib-root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if [ -d .carry/rdma ]; then
  export PKG_CONFIG_PATH=$PWD/.carry/rdma/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$PWD/.carry/rdma-root/usr/lib/x86_64-linux-gnu:$PWD/.carry/rdma-root/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
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
# UCX (the fleet: netdaq ingest / build, tests/gpu/fleet_gpu_frames_test.cpp): Debian 12's
# libucx0 + libucx-dev `dpkg -x`ed into .carry/ucx-root, .carry/ucx/pkgconfig/ucx*.pc with
# prefix=${pcfiledir}/../../ucx-root/usr. UCX loads its transport modules (cma) from the ucx/
# folder beside libucs; UCX_MODULE_DIR says so in case it looks elsewhere. Built without CUDA:
# GPU frames are staged in pinned host memory before they are sent (docs/fleet.md).
if [ -d .carry/ucx ]; then
  export PKG_CONFIG_PATH=$PWD/.carry/ucx/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$PWD/.carry/ucx-root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export UCX_MODULE_DIR=$PWD/.carry/ucx-root/usr/lib/x86_64-linux-gnu/ucx
fi
# libxdp, libbpf and ip (the afxdp engine and the GPU-driven receiver's namespaced tests)
. scripts/lib/carry_xdp.sh
# The Python module: built for the machine's python3 (the one with PyTorch and CuPy), with the
# pybind11 installed beside it.
if py_inc=$(python3 -c 'import pybind11; print(pybind11.get_include())' 2>/dev/null); then
  prefix+=(-DPython_EXECUTABLE="$(python3 -c 'import sys; print(sys.executable)')" -DPYBIND11_INCLUDE_DIR="$py_inc")
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/logs/gpu.txt"
echo "== configure and build"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETDAQ_BUILD_BENCH=ON "${prefix[@]}" \
  > "$out/logs/configure.log" 2>&1 || { tail -30 "$out/logs/configure.log"; exit 1; }
grep -E "netdaq:|fleet:" "$out/logs/configure.log"
targets=(netdaq netdaq_gpu_tests netdaq_unit_tests netdaq_cli netdaq_cli_tests netdaq_python)
# The fleet's host tests (real UCX endpoints over 127.0.0.1), where UCX was found.
fleet=0
grep -q "fleet: UCX" "$out/logs/configure.log" && { fleet=1; targets+=(netdaq_fleet_tests); }
for b in bench/gpu/*.cu; do targets+=("netdaq_$(basename "$b" .cu)"); done
# GPU-driven receive and send vs the CPU-driven paths (bench/xsk_gpu_receive.cpp, xsk_gpu_send.cpp)
targets+=(netdaq_bench_xsk_gpu_receive netdaq_bench_xsk_gpu_send)
# fleet: only what the fleet's tests run (the CLI's ingest / build and the two test binaries).
if [ "$what" = fleet ]; then targets=(netdaq_cli netdaq_gpu_tests); [ $fleet = 1 ] && targets+=(netdaq_fleet_tests); fi
[ "$what" = gpu-filter ] && targets=(netdaq_gpu_tests netdaq_cli netdaq_bench_xsk_gpu_receive netdaq_bench_xsk_gpu_send)
cmake --build build-gpu -j"$(nproc)" --target "${targets[@]}" > "$out/logs/build.log" 2>&1 \
  || { grep -E "error|Error" -A3 "$out/logs/build.log" | head -60; exit 1; }
echo "built: ${targets[*]}"
# Every GPU test must run here: NETDAQ_REQUIRE_GPU=1 makes a test that finds no usable GPU
# fail instead of skipping, and any skipped test fails the check (a driver or visibility
# problem must not read as green).
export NETDAQ_REQUIRE_GPU=1
# skipped JSON: the names of the tests a gtest JSON report (--gtest_output=json:...) lists as
# skipped, one per line; no report (the binary crashed before writing it) prints a line too.
skipped() {
  python3 - "$1" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"(no test report: {e})"); sys.exit()
for s in r.get("testsuites", []):
    for t in s.get("testsuite", []):
        if t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN":
            print(f"{s['name']}.{t['name']}")
PY
}
# gtest_run NAME BINARY ARGS...: runs a gtest binary (log and JSON report under logs/NAME),
# prints its closing lines; a failure or any skipped test sets rc=1.
gtest_run() {
  local name=$1 bin=$2
  shift 2
  # GTEST_TIMEOUT=S: killed after S seconds (a test that hangs still leaves its log).
  timeout "${GTEST_TIMEOUT:-0}" "$bin" --gtest_output=json:"$out/logs/$name.json" "$@" > "$out/logs/$name.log" 2>&1 || rc=1
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|gpu [0-9]+:|->|error" "$out/logs/$name.log" | head -80
  local s
  s=$(skipped "$out/logs/$name.json")
  if [ -n "$s" ]; then
    echo "FAILED: $name: tests skipped on the GPU machine (every one must run here):"
    echo "$s" | head -20
    rc=1
  fi
}
# fleet_tests: the fleet's tests, GPU frames (tests/gpu/fleet_gpu_frames_test.cpp: sensor ->
# netdaq ingest with frames: gpu -> UCX -> netdaq build, every byte checked) and the host ones
# (UCX over 127.0.0.1 TCP and shared memory): ctest -R fleet, less the root / Prometheus ones.
fleet_tests() {
  if [ $fleet != 1 ]; then
    echo "FAILED: the build has no fleet (UCX not found: scripts/make-carry.sh makes .carry/ucx)"; rc=1; return
  fi
  if [ "$what" = fleet ]; then  # (tests: the whole GPU suite above ran them)
    echo "== GPU frames through a fleet (netdaq_gpu_tests fleet/* and FrameStaging.*)"
    gtest_run fleet_gpu_tests build-gpu/tests/gpu/netdaq_gpu_tests --gtest_filter='fleet/*:FrameStaging.*'
  fi
  [ "$what" = fleet ] || grep -h "^gpu fleet" "$out/logs/gpu_tests.log"  # (gtest_run showed them in fleet)
  echo "== fleet host tests: ctest -R fleet -L unit"
  ctest --test-dir build-gpu -R fleet -L unit --output-on-failure > "$out/logs/fleet_ctest.log" 2>&1 || rc=1
  grep -E "tests passed|tests failed|\*\*\*Failed|\*\*\*Skipped|Not Run|Total Test time|Failure" "$out/logs/fleet_ctest.log" | head -30
}
# GPU-driven AF_XDP receive and send against the CPU-driven paths, one veth (issue 35).
xsk_jumbo_bench() {
  echo "== bench xsk_gpu_receive, jumbo (MTU 9000, multi-buffer: 7,600 B fits two AF_XDP buffers, 8,192 B three)"
  timeout 150 build-gpu/bench/netdaq_bench_xsk_gpu_receive --sizes 7600,8192 --poll-us 10000 --frame-packets 256 \
    --json "$out/xsk_gpu_receive_jumbo.json" > "$out/logs/xsk_gpu_receive_jumbo.log" 2>&1 \
    || { echo "FAILED: bench xsk_gpu_receive jumbo (exit $?)"; rc=1; }
  cat "$out/logs/xsk_gpu_receive_jumbo.log"
}
# The CPU's share at its least: 1,024-packet frames taken every 50 or 100 ms (per frame and per
# look, never per packet), from one sender, then from two (a higher rate, the same looks).
xsk_lowcpu_bench() {
  echo "== bench xsk_gpu_receive, least CPU (1,024-packet frames, a look every 50 or 100 ms)"
  timeout 120 build-gpu/bench/netdaq_bench_xsk_gpu_receive --modes gpu --sizes 1400,8192 --poll-us 50000,100000 \
    --frame-packets 1024 --seconds 3 --json "$out/xsk_gpu_receive_lowcpu.json" > "$out/logs/xsk_gpu_receive_lowcpu.log" 2>&1 \
    || { echo "FAILED: bench xsk_gpu_receive lowcpu (exit $?)"; rc=1; }
  cat "$out/logs/xsk_gpu_receive_lowcpu.log"
  echo "== bench xsk_gpu_receive, least CPU at a higher rate (two sender threads)"
  timeout 120 build-gpu/bench/netdaq_bench_xsk_gpu_receive --modes gpu --sizes 1024,1400 --poll-us 50000 \
    --frame-packets 1024 --seconds 3 --senders 2 --json "$out/xsk_gpu_receive_lowcpu2.json" \
    > "$out/logs/xsk_gpu_receive_lowcpu2.log" 2>&1 || { echo "FAILED: bench xsk_gpu_receive lowcpu x2 (exit $?)"; rc=1; }
  cat "$out/logs/xsk_gpu_receive_lowcpu2.log"
}
xsk_benches() {
  [ "${1:-}" = jumbo ] && { xsk_jumbo_bench; return; }
  [ "${1:-}" = lowcpu ] && { xsk_lowcpu_bench; return; }
  echo "== bench xsk_gpu_receive (GPU-driven afxdp receive vs the CPU loop and the CPU-polled pipeline, veth)"
  timeout 300 build-gpu/bench/netdaq_bench_xsk_gpu_receive --poll-us 200,10000 --json "$out/xsk_gpu_receive.json" \
    > "$out/logs/xsk_gpu_receive.log" 2>&1 || { echo "FAILED: bench xsk_gpu_receive (exit $?)"; rc=1; }
  cat "$out/logs/xsk_gpu_receive.log"
  echo "== bench xsk_gpu_receive, frames of 256 packets (the CPU's share: per frame handed over, not per packet)"
  timeout 60 build-gpu/bench/netdaq_bench_xsk_gpu_receive --modes gpu --sizes 1400 --poll-us 200,10000 --frame-packets 256 \
    --json "$out/xsk_gpu_receive_256.json" > "$out/logs/xsk_gpu_receive_256.log" 2>&1 \
    || { echo "FAILED: bench xsk_gpu_receive 256 (exit $?)"; rc=1; }
  cat "$out/logs/xsk_gpu_receive_256.log"
  xsk_jumbo_bench
  xsk_lowcpu_bench
  echo "== bench xsk_gpu_send (GPU-driven afxdp send vs the CPU loop and netdaq's CPU afxdp sender, veth)"
  timeout 240 build-gpu/bench/netdaq_bench_xsk_gpu_send --json "$out/xsk_gpu_send.json" \
    > "$out/logs/xsk_gpu_send.log" 2>&1 || { echo "FAILED: bench xsk_gpu_send (exit $?)"; rc=1; }
  cat "$out/logs/xsk_gpu_send.log"
}
rc=0
if [ "$what" != bench ]; then
  if [ "$what" = gpu-filter ]; then
    echo "== GPU tests matching ${2:?gpu-filter needs a gtest filter}"
    export CUDA_MODULE_LOADING=EAGER
    gtest_run gpu_tests_filtered build-gpu/tests/gpu/netdaq_gpu_tests --gtest_filter="$2"
    # XSK_BENCH=1: the GPU-driven AF_XDP benchmarks too (XSK_BENCH=jumbo or lowcpu: only those rows).
    [ -n "${XSK_BENCH:-}" ] && xsk_benches "$XSK_BENCH"
    [ $rc = 0 ] && echo "gpu-check gpu-filter: passed" || echo "gpu-check gpu-filter: FAILED"
    exit $rc
  fi
  [ "$what" = fleet ] || echo "== GPU tests"
  # Lazy module loading can wait forever behind a running persistent kernel: load all up front.
  export CUDA_MODULE_LOADING=EAGER
  [ "$what" = fleet ] || gtest_run gpu_tests build-gpu/tests/gpu/netdaq_gpu_tests
  fleet_tests
  [ "$what" = fleet ] && { [ $rc = 0 ] && echo "gpu-check fleet: every step passed" || echo "gpu-check fleet: FAILED"; exit $rc; }
  echo "== unit tests (host side, incl. the frame tracker and doorbell ring)"
  # Less vita49_tshark: Wireshark is not on this machine (no package registry); CI runs it.
  build-gpu/tests/unit/netdaq_unit_tests --gtest_brief=1 --gtest_filter='-vita49_tshark.*:roce_sw_tshark.*' \
    --gtest_output=json:"$out/logs/unit_tests.json" \
    > "$out/logs/unit_tests.log" 2>&1 || rc=1
  tail -3 "$out/logs/unit_tests.log"
  # The unit tests that cover machines without a GPU skip where one is usable: run exactly
  # those again with no GPU visible, where each must pass (and none skip).
  no_gpu=$(skipped "$out/logs/unit_tests.json" | paste -sd: -)
  if [ -n "$no_gpu" ]; then
    echo "== unit tests that need no visible GPU ($no_gpu), with CUDA_VISIBLE_DEVICES=''"
    NETDAQ_REQUIRE_GPU=0 CUDA_VISIBLE_DEVICES='' gtest_run unit_tests_no_gpu build-gpu/tests/unit/netdaq_unit_tests \
      --gtest_filter="$no_gpu"
  fi
  build-gpu/tools/netdaq/netdaq --version
  echo "== netdaq check --json: the GPU checks run here (gpu.driver, gpu.attributes, gpu.clocks skip only without a GPU)"
  build-gpu/tools/netdaq/netdaq check --json > "$out/check.json" 2> "$out/logs/check.log"
  python3 scripts/lib/checks_ran.py "$out/check.json" gpu.driver gpu.attributes gpu.clocks || rc=1
  echo "== CLI tests that touch the GPU"
  gtest_run cli_gpu_tests build-gpu/tests/cli/netdaq_cli_tests --gtest_filter='*Gpu*:*Version*'
  echo "== netdaq run examples/gpu-frames.yaml (socket loopback -> frames in GPU memory)"
  build-gpu/tools/netdaq/netdaq run examples/gpu-frames.yaml -q --expect-no-loss --json "$out/run_gpu_frames.json" \
    > "$out/logs/run_gpu_frames.log" 2>&1 || { echo "FAILED: netdaq run examples/gpu-frames.yaml"; rc=1; }
  tail -12 "$out/logs/run_gpu_frames.log"
  echo "== the installed library: examples/cpp/gpu_frames and send built against it (find_package), on loopback"
  inst=$PWD/build-gpu/install-check
  rm -rf "$inst"
  { cmake --install build-gpu --prefix "$inst/prefix" &&
    for ex in gpu_frames send; do
      cmake -S "examples/cpp/$ex" -B "$inst/$ex" -G Ninja -DCMAKE_PREFIX_PATH="$inst/prefix" && cmake --build "$inst/$ex" || exit 1
    done; } > "$out/logs/install_examples.log" 2>&1 || { tail -20 "$out/logs/install_examples.log"; echo "FAILED: examples/cpp against the install"; rc=1; }
  if [ -x "$inst/gpu_frames/gpu_frames" ] && [ -x "$inst/send/send" ]; then
    "$inst/gpu_frames/gpu_frames" examples/cpp/gpu_frames/gpu_frames.yaml --seconds 8 > "$out/logs/gpu_frames_example.log" 2>&1 &
    gf=$!
    for _ in $(seq 100); do grep -q 'frames of' "$out/logs/gpu_frames_example.log" && break; sleep 0.1; done
    "$inst/send/send" examples/cpp/send/send.yaml --packets 6400 --size 1024 --pps 50000 | tail -1
    gf_rc=0; wait $gf || gf_rc=$?
    head -2 "$out/logs/gpu_frames_example.log"; tail -2 "$out/logs/gpu_frames_example.log"
    ldd "$inst/gpu_frames/gpu_frames" | grep libnetdaq
    { [ $gf_rc = 0 ] && grep -qE '^summary: frames=[0-9]+ complete=([1-9][0-9]*) ' "$out/logs/gpu_frames_example.log"; } \
      || { echo "FAILED: examples/cpp/gpu_frames (exit $gf_rc) made no complete frame"; rc=1; }
  fi
  echo "== Python: frames into PyTorch and CuPy through DLPack, loopback and config suites"
  # NETDAQ_REQUIRE_GPU=1: a missing GPU, torch or cupy fails; any skip fails the check.
  PYTHONPATH=$PWD/build-gpu/python NETDAQ_SOURCE_DIR=$PWD NETDAQ_CLI=$PWD/build-gpu/tools/netdaq/netdaq \
    python3 -m pytest -v -rs -p no:cacheprovider tests/python/test_gpu.py tests/python/test_loopback.py \
    tests/python/test_config.py tests/python/test_st2110_video.py > "$out/logs/python_tests.log" 2>&1 || rc=1
  grep -E "PASSED|FAILED|SKIPPED|ERROR|passed|failed|^E " "$out/logs/python_tests.log" | head -60
  grep -qiE "[0-9]+ skipped" "$out/logs/python_tests.log" && { echo "FAILED: Python tests skipped"; rc=1; }
  PYTHONPATH=$PWD/build-gpu/python timeout 120 python3 examples/python/frames_to_torch.py examples/gpu-frames.yaml \
    > "$out/logs/python_frames_to_torch.log" 2>&1 || { echo "FAILED: examples/python/frames_to_torch.py"; rc=1; }
  tail -5 "$out/logs/python_frames_to_torch.log"
fi
if [ "$what" != tests ]; then
  for b in bench/gpu/*.cu; do
    name=$(basename "$b" .cu)
    echo "== bench $name"
    timeout 240 "build-gpu/bench/gpu/netdaq_$name" --json "$out/$name.json" > "$out/logs/$name.log" 2>&1 \
      || { echo "FAILED: bench $name (exit $?)"; rc=1; }
    tail -40 "$out/logs/$name.log"
  done
  xsk_benches
  echo "== bench python_vs_cpp (Python receive loop vs netdaq bench --rx-only, loopback)"
  PYTHONPATH=$PWD/build-gpu/python timeout 300 python3 bench/python_vs_cpp.py --netdaq build-gpu/tools/netdaq/netdaq \
    --json "$out/python_vs_cpp.json" > "$out/logs/python_vs_cpp.log" 2>&1 || { echo "FAILED: bench python_vs_cpp"; rc=1; }
  tail -4 "$out/logs/python_vs_cpp.log"
fi
[ $rc = 0 ] && echo "gpu-check: every step passed, no test skipped" || echo "gpu-check: FAILED (see above)"
exit $rc
