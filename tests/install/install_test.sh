#!/usr/bin/env bash
# netdaq as an installed library: `cmake --install` into a staging prefix, then every program
# in examples/cpp/ built against that prefix (not the build tree) twice, with find_package and
# with pkg-config; the receive and send examples run against each other on loopback and their
# summaries are checked (sent == received + drops), and the README's snippet program runs.
# The static library (component static) links one example too.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d /tmp/netdaq-install-test.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }
prefix=$work/prefix
examples=(quickstart receive_rates send header_split gpu_frames)

echo "== cmake --install $build --prefix <staging>"
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/netdaq/netdaq.h bin/netdaq lib/cmake/netdaq/netdaq-config.cmake lib/pkgconfig/netdaq.pc \
         share/doc/netdaq/examples/cpp/quickstart/main.cpp; do
  [ -e "$prefix/$f" ] || fail "the install lacks $f"
done
soname=$(objdump -p "$prefix"/lib/libnetdaq.so.*.*.* | awk '/SONAME/ {print $2}')
[ "$soname" = libnetdaq.so.0 ] || fail "SONAME is '$soname', not libnetdaq.so.0"
echo "SONAME $soname; installed $("$prefix/bin/netdaq" --version | sed -n 1p)"
# The public headers name no dependency's header (a user needs no DPDK, libxdp, CUDA or cpp-httplib headers).
if grep -rhoE '#include <(rte_|xdp/|bpf/|infiniband/|rdma/|cuda|yaml-cpp|spdlog|fmt|httplib)[^>]*>' "$prefix/include"; then
  fail "an installed header includes a dependency's header"
fi

echo "== examples/cpp with find_package(netdaq) and with pkg-config"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
for ex in "${examples[@]}"; do
  cmake -S "$src/examples/cpp/$ex" -B "$work/cmake/$ex" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null \
    || fail "configuring examples/cpp/$ex against the install"
  cmake --build "$work/cmake/$ex" >/dev/null || fail "building examples/cpp/$ex with find_package"
  mkdir -p "$work/pc/$ex"
  # shellcheck disable=SC2046
  g++ -std=c++20 -O2 -Wall -Wextra -o "$work/pc/$ex/$ex" "$src/examples/cpp/$ex/main.cpp" \
      $(pkg-config --cflags --libs netdaq) -Wl,-rpath,"$prefix/lib" || fail "building examples/cpp/$ex with pkg-config"
  echo "built $ex (cmake, pkg-config)"
done
loads() { local libs; libs=$(ldd "$1") && grep -q -- "$2" <<<"$libs"; }   # (no SIGPIPE under pipefail)
loads "$work/cmake/receive_rates/receive_rates" "$prefix/lib/libnetdaq.so.0" \
  || fail "receive_rates does not load the installed libnetdaq.so.0"

echo "== quickstart (the README's snippet), cmake build"
"$work/cmake/quickstart/quickstart" --packets 2000 | tee "$work/quickstart.out"
grep -q '^summary: sent=2000 received=2000 ' "$work/quickstart.out" || fail "quickstart did not receive all 2000"

# receive_rates (one build) against send (the other build), N packets over loopback.
run_pair() {
  local rx=$1 tx=$2 n=$3 out=$work/$4
  "$rx" "$src/examples/cpp/receive_rates/receive.yaml" --packets "$n" --seconds 30 >"$out.rx" 2>&1 &
  local rx_pid=$!
  pids+=("$rx_pid")
  for _ in $(seq 50); do grep -q '^receiving on' "$out.rx" && break; sleep 0.1; done
  "$tx" "$src/examples/cpp/send/send.yaml" --packets "$n" --pps 50000 >"$out.tx" 2>&1 || { cat "$out.tx"; fail "send failed"; }
  wait "$rx_pid" || { cat "$out.rx"; fail "receive_rates failed"; }
  tail -1 "$out.tx"; tail -1 "$out.rx"
  grep -q "^summary: sent=$n " "$out.tx" || fail "send did not send $n"
  local got drops
  got=$(sed -n 's/^summary: received=\([0-9]*\) .*/\1/p' "$out.rx")
  drops=$(sed -n 's/^summary: .* drops=\([0-9]*\).*/\1/p' "$out.rx")
  [ -n "$got" ] && [ -n "$drops" ] || fail "receive_rates printed no summary"
  [ $((got + drops)) -eq "$n" ] || fail "sent $n != received $got + drops $drops"
  [ "$got" -ge $((n / 2)) ] || fail "only $got of $n received"
}
echo "== receive_rates (find_package build) <- send (pkg-config build), loopback"
run_pair "$work/cmake/receive_rates/receive_rates" "$work/pc/send/send" 20000 pair1
echo "== receive_rates (pkg-config build) <- send (find_package build), loopback"
run_pair "$work/pc/receive_rates/receive_rates" "$work/cmake/send/send" 20000 pair2

echo "== header_split (socket engine: headers and payloads in two regions)"
"$work/cmake/header_split/header_split" "$src/examples/cpp/header_split/header_split.yaml" --packets 4 > "$work/hs.out" 2>&1 \
  || { cat "$work/hs.out"; fail "header_split failed"; }
grep -q '^summary: received=4 ' "$work/hs.out" || { cat "$work/hs.out"; fail "header_split did not receive 4"; }
tail -1 "$work/hs.out"

echo "== gpu_frames: runs where a GPU is usable, else exits 77 saying why"
rc=0; "$work/cmake/gpu_frames/gpu_frames" "$src/examples/cpp/gpu_frames/gpu_frames.yaml" --seconds 1 >"$work/gpu.out" 2>&1 || rc=$?
tail -1 "$work/gpu.out"
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || fail "gpu_frames exited $rc"

echo "== component gpu: netdaq::gpu (netdaq + the CUDA runtime) where netdaq has CUDA, else a clear refusal"
mkdir -p "$work/gpu-src"
cat > "$work/gpu-src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.22)
project(gpu_component LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(netdaq CONFIG REQUIRED COMPONENTS gpu)
add_executable(gpu_component main.cpp)
target_link_libraries(gpu_component PRIVATE netdaq::gpu)
CMAKE
cat > "$work/gpu-src/main.cpp" <<'CPP'
#include <cuda_runtime.h>
#include <netdaq/netdaq.h>
#include <cstdio>
int main() {
  int n = -1;
  const cudaError_t err = cudaGetDeviceCount(&n);  // the application's own CUDA runtime
  std::printf("netdaq gpu built in: %d; cudaGetDeviceCount: %s, %d\n", netdaq::gpu::built_in(), cudaGetErrorName(err), n);
  return netdaq::gpu::built_in() ? 0 : 1;
}
CPP
if grep -q 'set(netdaq_HAVE_CUDA ON)' "$prefix/lib/cmake/netdaq/netdaq-config.cmake"; then
  cmake -S "$work/gpu-src" -B "$work/gpu" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null || fail "find_package(netdaq COMPONENTS gpu)"
  cmake --build "$work/gpu" >/dev/null || fail "building against netdaq::gpu"
  "$work/gpu/gpu_component" || fail "the netdaq::gpu program"
else
  if cmake -S "$work/gpu-src" -B "$work/gpu" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" >"$work/gpu.log" 2>&1; then
    fail "COMPONENTS gpu was found in a netdaq built without CUDA"
  fi
  grep -q "built without CUDA" "$work/gpu.log" || { cat "$work/gpu.log"; fail "no reason given for the missing gpu component"; }
  echo "no CUDA in this netdaq: COMPONENTS gpu refused, saying why"
fi

echo "== the static library (component static), find_package(netdaq COMPONENTS static)"
cmake --install "$build" --prefix "$prefix" --component static >/dev/null
[ -f "$prefix/lib/libnetdaq.a" ] || fail "component static installed no libnetdaq.a"
mkdir -p "$work/static-src"
cat > "$work/static-src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.22)
project(static_receive_rates LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(netdaq CONFIG REQUIRED COMPONENTS static)
add_executable(receive_rates $src/examples/cpp/receive_rates/main.cpp)
target_link_libraries(receive_rates PRIVATE netdaq::netdaq_static)
CMAKE
cmake -S "$work/static-src" -B "$work/static" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null || fail "configuring against netdaq::netdaq_static"
cmake --build "$work/static" >/dev/null || fail "linking against netdaq::netdaq_static"
if loads "$work/static/receive_rates" libnetdaq; then fail "the static build loads libnetdaq.so"; fi
run_pair "$work/static/receive_rates" "$work/cmake/send/send" 5000 pair3
echo "== the static library with pkg-config (netdaq-static.pc)"
mkdir -p "$work/static-pc"
# shellcheck disable=SC2046
g++ -std=c++20 -O2 -o "$work/static-pc/send" "$src/examples/cpp/send/main.cpp" $(pkg-config --cflags --libs netdaq-static) \
  || fail "linking send with pkg-config netdaq-static"
if loads "$work/static-pc/send" libnetdaq; then fail "the netdaq-static.pc build loads libnetdaq.so"; fi
run_pair "$work/static/receive_rates" "$work/static-pc/send" 5000 pair4
echo "install_test: every check passed"
