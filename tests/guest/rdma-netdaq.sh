#!/usr/bin/env bash
# netdaq's own RDMA tests, in the lab rdma-peers-check.sh brought up (its NDQ_RDMA_* exported):
#   rdma-netdaq.sh COUNT TESTS_BIN [CLI]
# TESTS_BIN: netdaq_rdma_tests (tests/integration/rdma/), all COUNT of its tests run and pass
# (gtest-run.sh); CLI: `netdaq run` of examples/rdma-pair.yaml (whose addresses are the lab's),
# which must lose nothing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
status=0
"$here/gtest-run.sh" "$1" "$2"
rc=$?
[ "$rc" = 0 ] || { echo "rdma-netdaq: FAIL ${2##*/} (status $rc)"; status=1; }
if [ -n "${3:-}" ]; then
  echo "rdma-netdaq: $3 run examples/rdma-pair.yaml --expect-no-loss"
  "$3" run "$here/../../examples/rdma-pair.yaml" --expect-no-loss
  rc=$?
  [ "$rc" = 0 ] || { echo "rdma-netdaq: FAIL netdaq run (status $rc)"; status=1; }
fi
exit $status
