#!/usr/bin/env bash
# `netdaq --version` names every engine the build has; under CI (scripts/lib/ci.sh) that must
# be all five, so a test group cannot vanish with its engine. Outside CI the socket engine,
# which is always built, must be there.
#   engines_built_test.sh NETDAQ_CLI
set -uo pipefail
. "$(dirname "$0")/../../scripts/lib/ci.sh"
line=$("$1" --version | grep '^engines:') || { echo "netdaq --version printed no 'engines:' line"; exit 1; }
echo "$line"
want=(socket)
netdaq_in_ci && want=(socket afxdp dpdk rdma pcap)
missing=()
for e in "${want[@]}"; do
  grep -qw -- "$e" <<<"${line#engines:}" || missing+=("$e")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "FAIL: engines missing from this build${CI:+ (CI=$CI)}: ${missing[*]}"
  exit 1
fi
echo "ok: ${want[*]} built"
