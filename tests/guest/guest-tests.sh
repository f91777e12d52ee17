#!/usr/bin/env bash
# Everything that needs the guest's kernel, in one boot of tests/guest/run-in-guest.sh (a boot
# costs 10-20 s of TCG and a whole CPU of the 2-core CI machine, so there is one):
#   --dpdk BIN   BIN's DpdkTap.* tests: DPDK's tap PMD builds rte_flow from TC modules the
#                dev and CI kernels lack (NETDAQ_REQUIRE_TAP_FLOWS=1: a missing one fails)
#   --rdma BIN CLI  rdma-core's own tools between two Soft-RoCE devices (rdma-peers-check.sh),
#                then BIN (netdaq's RDMA tests) and `CLI run examples/rdma-pair.yaml` in the
#                same lab (rdma-netdaq.sh)
#   --rdma-peers rdma-core's tools only (a build without the rdma engine)
#   --roce-sw CLI  netdaq's software RoCE path against rxe (roce-sw-check.sh): rxe's writes
#                become frames (afxdp, frames: host), losses on the wire counted exactly, and
#                `CLI roce-send`'s packets taken by rxe, a bad ICRC refused
#   --gro BIN    BIN's GroDrops.* tests on Debian's stock kernel, where the GRO drop counter
#                loads its fexit program (the dev kernel takes the tracepoint one), as they
#                check (NETDAQ_EXPECT_GRO_HOOK=fexit)
# Each part runs even when an earlier one failed; the exit status is 0 only when all passed.
# Every gtest run goes through gtest-run.sh with the number of tests its filter selects (below):
# a filter that selects nothing, or fewer, or a test that skips, fails the part.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# How many tests each part runs: change them with the tests (`BIN --gtest_filter=... --gtest_list_tests`).
gro_tests=4        # */GroDrops.*: GRO on/off x IPv4/IPv6
dpdk_tap_tests=5   # DpdkTap.* but FlowsAreRefused*
rdma_tests=27      # all of netdaq_rdma_tests (tests/integration/rdma/)
failed=()
run_part() {
  local name=$1
  shift
  echo "guest-tests: ---- $name: $*"
  "$@"
  local rc=$?
  echo "guest-tests: ---- $name: exit status $rc"
  [ "$rc" = 0 ] || failed+=("$name ($rc)")
}
while [ $# -gt 0 ]; do
  case $1 in
    --dpdk) run_part dpdk-tap env NETDAQ_REQUIRE_TAP_FLOWS=1 "$here/gtest-run.sh" "$dpdk_tap_tests" "$2" '--gtest_filter=DpdkTap.*-DpdkTap.FlowsAreRefused*'; shift 2 ;;
    --rdma) run_part rdma "$here/rdma-peers-check.sh" -- "$here/rdma-netdaq.sh" "$rdma_tests" "$2" "$3"; shift 3 ;;
    --rdma-peers) run_part rdma-peers "$here/rdma-peers-check.sh"; shift ;;
    --roce-sw) run_part roce-sw "$here/roce-sw-check.sh" "$2"; shift 2 ;;
    # The guest's 6.1 kernel: the GRO drop counter must load its fexit program (a kernel that
    # took the tracepoint instead fails the run: gro_drops_test.cpp).
    --gro) run_part gro-drops env NETDAQ_EXPECT_GRO_HOOK=fexit "$here/gtest-run.sh" "$gro_tests" "$2" '--gtest_filter=*/GroDrops.*'; shift 2 ;;
    *) echo "guest-tests: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "guest-tests: FAILED: ${failed[*]}"
  exit 1
fi
echo "guest-tests: all passed"
