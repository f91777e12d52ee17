#!/usr/bin/env bash
# netdaq's own RDMA tests, in the lab rdma-peers-check.sh brought up (its NDQ_RDMA_* exported):
#   rdma-netdaq.sh TESTS_BIN [CLI]
# TESTS_BIN: netdaq_rdma_tests (tests/integration/rdma/); CLI: `netdaq run` of
# examples/rdma-pair.yaml (whose addresses are the lab's), which must lose nothing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
status=0
"$1"
rc=$?
[ "$rc" = 0 ] || { echo "rdma-netdaq: FAIL ${1##*/} (status $rc)"; status=1; }
if [ -n "${2:-}" ]; then
  echo "rdma-netdaq: $2 run examples/rdma-pair.yaml --expect-no-loss"
  "$2" run "$here/../../examples/rdma-pair.yaml" --expect-no-loss
  rc=$?
  [ "$rc" = 0 ] || { echo "rdma-netdaq: FAIL netdaq run (status $rc)"; status=1; }
fi
exit $status
