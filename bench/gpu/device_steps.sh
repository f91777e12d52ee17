#!/usr/bin/env bash
# Steps of one GPU-machine call (the `device` tool), each its own command, logs and JSON under
# $OUT: builds what the steps need in build-gpu with scripts/gpu-check.sh's carried packages
# (.carry/), runs GPU tests by filter and the end-to-end benchmarks, so that one call can build,
# check and measure. Prints a short summary last.
#   bench/gpu/device_steps.sh STEP...   STEP: build | tests=FILTER | pipeline=SIZES:LAUNCHES[:NAME] |
#                                       gpu_pipeline=ARGS (commas for spaces)[:NAME] | dpdk=ROUNDS[:NAME] |
#                                       roce_sw=PAYLOADS[:NAME] (bench/roce_sw.md, on a veth) |
#                                       env=VAR=VALUE (exported for the steps after it)
# PIPELINE_ARGS (env=PIPELINE_ARGS=--gen-rate,0.82h2d): more bench/pipeline.sh options for the
# pipeline steps after it, commas for spaces. DPDK_MAIN_CPU / DPDK_RX_CPU (default 1 / 3): the
# dpdk steps' CPUs (worker mode: the application thread / the worker). ROCE_ROUNDS, ROCE_CPU
# (default 5, 3) and ROCE_ONLY (the receivers, e.g. s,a; default all): the roce_sw steps.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out}
mkdir -p "$out"
export CUDA_MODULE_LOADING=EAGER NETDAQ_REQUIRE_GPU=1
PIPELINE_ARGS=${PIPELINE_ARGS:-}
prefix=()
if [ -d .carry/include ]; then
  export CPLUS_INCLUDE_PATH=$PWD/.carry/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
  prefix=(-DCMAKE_PREFIX_PATH=$PWD/.carry -DCLI11_INCLUDE_DIR=$PWD/.carry/include)
fi
export PKG_CONFIG_PATH=$PWD/.carry/lib/pkgconfig:$PWD/.carry/rdma/pkgconfig:$PWD/.carry/dpdk/pkgconfig
export LD_LIBRARY_PATH=$PWD/.carry/lib:$PWD/.carry/pcap-root/usr/lib/x86_64-linux-gnu:$PWD/.carry/pcap-root/lib/x86_64-linux-gnu:$PWD/.carry/rdma-root/lib/x86_64-linux-gnu:$PWD/.carry/httplib-root/usr/lib/x86_64-linux-gnu:$PWD/.carry/rdma-root/usr/lib/x86_64-linux-gnu:$PWD/.carry/dpdk/lib
[ -d .carry/dpdk/bin ] && export PATH=$PATH:$PWD/.carry/dpdk/bin  # dpdk_vs_testpmd.sh: dpdk-testpmd
. scripts/lib/carry_xdp.sh  # libxdp, libbpf and ip: the afxdp engine, roce_sw's veth lab
[ -d .carry/dpdk ] && export NETDAQ_DPDK_DRIVERS=$PWD/.carry/dpdk/pmds && prefix+=(-DNETDAQ_RTE_BUS_VDEV=$PWD/.carry/dpdk/lib/librte_bus_vdev.so)
rc=0
summary=()
for step in "$@"; do
  what=${step%%=*} arg=${step#*=} name=""
  case "$what" in pipeline|gpu_pipeline|dpdk|roce_sw) [[ "$arg" == *:*:* || ( "$what" != pipeline && "$arg" == *:* ) ]] && { name=_${arg##*:}; arg=${arg%:*}; } ;; esac
  t0=$(date +%s)
  case "$what" in
    build)
      nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
      # which CPUs share a core (the rows pin generator, worker, application on CPUs 2, 3, 4)
      lscpu | grep -E "^(Model name|Thread|Core|Socket|L3)" | tr -s ' ' | tee -a "$out/gpu.txt"
      for c in 1 2 3 4; do echo "cpu$c siblings $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list)"; done \
        | tr '\n' ';' | tee -a "$out/gpu.txt"; echo
      cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETDAQ_BUILD_BENCH=ON "${prefix[@]}" \
        > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
      targets=${BUILD_TARGETS:-netdaq,netdaq_gpu_tests,netdaq_cli,netdaq_gpu_pipeline,netdaq_gpu_throughput}
      # shellcheck disable=SC2086  # BUILD_TARGETS (env=BUILD_TARGETS=a,b): only those, split
      cmake --build build-gpu -j"$(nproc)" --target ${targets//,/ } \
        > "$out/build.log" 2>&1 || { grep -E "error" -A3 "$out/build.log" | head -40; exit 1; }
      summary+=("build ok") ;;
    tests)
      # bounded: a kernel that never runs (e.g. beside a persistent kernel) must not eat the call
      timeout "${TESTS_TIMEOUT:-300}" build-gpu/tests/gpu/netdaq_gpu_tests --gtest_filter="$arg" > "$out/gpu_tests.log" 2>&1 || rc=1
      grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" "$out/gpu_tests.log" | head -30
      summary+=("tests $arg: $(grep -E '^\[  (PASSED|FAILED) ' "$out/gpu_tests.log" | tr '\n' ' ')") ;;
    env) export "${arg?}"; echo "env $arg" ;;
    pipeline)
      # shellcheck disable=SC2086  # PIPELINE_ARGS: the options, split
      timeout 400 bench/pipeline.sh --duration 5 --sizes "${arg%%:*}" --launches "${arg#*:}" ${PIPELINE_ARGS//,/ } \
        --netdaq build-gpu/tools/netdaq/netdaq --json "$out/pipeline$name.json" > "$out/pipeline$name.log" 2>&1 || rc=1
      grep -E "^ *generator: " "$out/pipeline$name.log" | head -8
      sed -n '/^ size row/,/^(Mpps/p' "$out/pipeline$name.log" | grep -v "^(Mpps"
      grep -E "FAILED|checks passed" "$out/pipeline$name.log" | cut -c1-200 | head -8 ;;
    gpu_pipeline)
      # shellcheck disable=SC2086  # the arguments, split
      timeout 200 build-gpu/bench/gpu/netdaq_gpu_pipeline ${arg//,/ } --json "$out/gpu_pipeline$name.json" \
        > "$out/gpu_pipeline$name.log" 2>&1 || rc=1
      grep -E "auto|persistent" "$out/gpu_pipeline$name.log" | grep -v "\[info\]" | head -20 ;;
    dpdk)
      timeout 300 bench/dpdk_vs_testpmd.sh --cases null --rounds "$arg" --receivers netdaq,testpmd --duration 4 \
        --main-cpu "${DPDK_MAIN_CPU:-1}" --rx-cpu "${DPDK_RX_CPU:-3}" --netdaq build-gpu/tools/netdaq/netdaq --json "$out/dpdk_vs_testpmd$name.json" \
        > "$out/dpdk$name.log" 2>&1 || rc=1
      tail -12 "$out/dpdk$name.log" ;;
    roce_sw)
      # the software RoCE receive (s) against the plain afxdp receive (a) and recv() per packet (b)
      cmake --build build-gpu -j"$(nproc)" --target netdaq_bench_roce_sw > "$out/build_roce_sw.log" 2>&1 \
        || { grep -E "error" -A3 "$out/build_roce_sw.log" | head -20; rc=1; continue; }
      timeout 300 build-gpu/bench/netdaq_bench_roce_sw --payloads "$arg" --rounds "${ROCE_ROUNDS:-5}" --cpu "${ROCE_CPU:-3}" \
        ${ROCE_ONLY:+--only "$ROCE_ONLY"} --json "$out/roce_sw$name.json" > "$out/roce_sw$name.log" 2>&1 || rc=1
      grep -E "ratio|FAILED|afxdp queue|checks" "$out/roce_sw$name.log" | head -30 ;;
    *) echo "unknown step $step"; rc=1 ;;
  esac
  summary+=("$what: $(($(date +%s) - t0)) s")
done
printf '%s\n' "${summary[@]}"
exit $rc
