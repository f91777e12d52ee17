#!/usr/bin/env bash
# Under CI (scripts/lib/ci.sh's rule) a part whose dependency is missing fails the configure,
# naming the part and its Debian packages; outside CI the same configure goes on without it.
# Real configures of this tree in a scratch directory, with librdmacm hidden from pkg-config
# (a pkg-config that answers "not found" for it and passes every other query on), and with
# the Python interpreter's development files not looked for.
#   missing_part_test.sh SOURCE_DIR
set -uo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
real_pkg_config=$(command -v pkg-config) || { echo "missing_part_test: needs pkg-config"; exit 1; }
cat > "$work/pkg-config" <<WRAP
#!/bin/sh
case " \$* " in *" librdmacm "*) exit 1 ;; esac
exec $real_pkg_config "\$@"
WRAP
chmod +x "$work/pkg-config"

failed=0
# configure NAME CI-VALUE EXPECT(fail|pass) PATTERN CMAKE-ARGS...: PATTERN must be in the output.
configure() {
  local name=$1 ci=$2 expect=$3 pattern=$4
  shift 4
  local out rc
  out=$(CI=$ci cmake -S "$src" -B "$work/$name" -DNETDAQ_WITH_CUDA=OFF -DNETDAQ_BUILD_TESTS=OFF \
          -DNETDAQ_WITH_AFXDP=OFF -DNETDAQ_WITH_DPDK=OFF "$@" 2>&1)
  rc=$?
  if { [ "$expect" = fail ] && [ $rc = 0 ]; } || { [ "$expect" = pass ] && [ $rc != 0 ]; }; then
    echo "FAIL $name (CI='$ci'): configure exit status $rc, expected to $expect"; failed=1
  elif ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL $name (CI='$ci'): the output does not say '$pattern'"; failed=1
  else
    echo "ok   $name (CI='$ci'): exit $rc, says '$pattern'"
    return
  fi
  echo "$out" | tail -15 | sed 's/^/     | /'
}
no_rdmacm=(-DPKG_CONFIG_EXECUTABLE="$work/pkg-config")
configure no-rdmacm-ci true fail "rdma engine: apt-get install libibverbs-dev librdmacm-dev" "${no_rdmacm[@]}"
configure no-rdmacm-ci1 1 fail "rdma engine: apt-get install libibverbs-dev librdmacm-dev" "${no_rdmacm[@]}"
configure no-rdmacm-local "" pass "rdma engine not built (needs libibverbs-dev librdmacm-dev)" "${no_rdmacm[@]}"
configure no-python-ci true fail "Python module: apt-get install python3-dev pybind11-dev libdlpack-dev" \
  -DCMAKE_DISABLE_FIND_PACKAGE_Python=ON
configure everything-ci true pass "Configuring done" -DNETDAQ_BUILD_BENCH=ON
exit $failed
