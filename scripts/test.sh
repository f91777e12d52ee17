#!/usr/bin/env bash
# Builds netdaq and runs every test (unit, config, CLI, integration over loopback, network
# namespaces and hugepages), then the same suite again in an AddressSanitizer + UBSan build.
# Needs root for the namespace and hugepage tests; with CI=true those never skip.
# Installs what is missing first. NETDAQ_SKIP_SANITIZERS=1 skips the second pass.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh

echo "== build and test (RelWithDebInfo) =="
./scripts/build.sh
# GPU tests (ctest label gpu) run where a GPU is usable and skip elsewhere, saying why:
gpu_line=$("${NETDAQ_BUILD_DIR:-build}"/tools/netdaq/netdaq --version | grep '^gpu:' || echo 'gpu: ?')
echo "GPU tests: $gpu_line (they skip without a usable GPU; scripts/gpu-check.sh runs them on a GPU machine)"
# ctest_with_summary DIR ARGS...: ctest in DIR (its closing lines: how many passed, failed,
# the label times), then per label how many ran, passed, failed and skipped, and why each skip.
ctest_with_summary() {
  local dir=$1 rc=0
  shift
  (cd "$dir" && ctest --output-on-failure --timeout 600 -j1 --output-junit ctest-junit.xml "$@") || rc=$?
  python3 scripts/ctest-summary.py "$dir" ctest-junit.xml || true
  return $rc
}
ctest_with_summary "${NETDAQ_BUILD_DIR:-build}" "$@"

echo "== fuzzers (clang + libFuzzer, bounded time) =="
./scripts/fuzz.sh

if [ "${NETDAQ_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== build and test with AddressSanitizer + UBSan =="
  # valgrind cannot run ASan binaries; ASan's leak checker covers the same ground here. The
  # deps checks (packages, CI rules) test scripts, not netdaq's code: the first pass ran them.
  excluded='memcheck|install|deps'
  # Where no GPU is usable the GPU tests only skip, as the first pass showed: not again here,
  # where each of the ~360 would cost an ASan process start (~0.5 s) for the same skip. Nor is
  # device code run here, so it is compiled unoptimized to PTX only (cicc -O0, no ptxas):
  # executor_persistent.cu 134 s -> 22 s. The host code (the GPU-driven AF_XDP receiver's CPU
  # driver runs in the integration tests) is built as in the first pass.
  cuda=(-UCMAKE_CUDA_FLAGS -UCMAKE_CUDA_ARCHITECTURES)
  case $gpu_line in *"no usable GPU"* | *"not built in"*)
    excluded+='|gpu'
    cuda=(-DCMAKE_CUDA_ARCHITECTURES=90-virtual "-DCMAKE_CUDA_FLAGS=-Xcicc -O0") ;;
  esac
  NETDAQ_BUILD_DIR=build-asan ./scripts/build.sh -DNETDAQ_SANITIZE=ON -DNETDAQ_BUILD_BENCH=OFF "${cuda[@]}"
  # FaultKill: 6 kills a case instead of 16-17 (the first pass ran all 150): each costs an ASan
  # start of the CLI, ~1 s.
  NETDAQ_FAULT_KILLS=6 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp ctest_with_summary build-asan -LE "$excluded" "$@"
fi
