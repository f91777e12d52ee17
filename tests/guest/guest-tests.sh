#!/usr/bin/env bash
# Everything that needs the guest's kernel, in one boot of tests/guest/run-in-guest.sh (a boot
# costs 10-20 s of TCG and a whole CPU of the 2-core CI machine, so there is one):
#   --dpdk BIN   BIN's DpdkTap.* tests: DPDK's tap PMD builds rte_flow from TC modules the
#                dev and CI kernels lack (NETDAQ_REQUIRE_TAP_FLOWS=1: a missing one fails)
#   --rdma BIN CLI  rdma-core's own tools between two Soft-RoCE devices (rdma-peers-check.sh),
#                then BIN (netdaq's RDMA tests) and `CLI run examples/rdma-pair.yaml` in the
#                same lab (rdma-netdaq.sh)
#   --rdma-peers rdma-core's tools only (a build without the rdma engine)
#   --gro BIN    BIN's GroDrops.* tests on Debian's stock kernel, where the GRO drop counter
#                loads its fexit program (the dev kernel takes the tracepoint one)
# Each part runs even when an earlier one failed; the exit status is 0 only when all passed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
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
    --dpdk) run_part dpdk-tap env NETDAQ_REQUIRE_TAP_FLOWS=1 "$2" '--gtest_filter=DpdkTap.*-DpdkTap.FlowsAreRefused*'; shift 2 ;;
    --rdma) run_part rdma "$here/rdma-peers-check.sh" -- "$here/rdma-netdaq.sh" "$2" "$3"; shift 3 ;;
    --rdma-peers) run_part rdma-peers "$here/rdma-peers-check.sh"; shift ;;
    --gro) run_part gro-drops "$2" '--gtest_filter=*/GroDrops.*'; shift 2 ;;
    *) echo "guest-tests: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "guest-tests: FAILED: ${failed[*]}"
  exit 1
fi
echo "guest-tests: all passed"
