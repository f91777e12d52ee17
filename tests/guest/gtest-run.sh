#!/usr/bin/env bash
# Every gtest run of the guest goes through here, so that a run cannot pass by running less
# than it should (a --gtest_filter that selects nothing exits 0, as does a test that skips):
#
#   gtest-run.sh COUNT BINARY [ARG...]
#
# runs BINARY ARG... (its output as it comes) and exits 0 only when BINARY exited 0 and its
# summary says exactly COUNT tests ran and COUNT passed ("[==========] N tests from M test
# suites ran." and "[  PASSED  ] N tests."); otherwise it says what differed and exits 1 (or
# BINARY's own non-zero status). COUNT: the number of tests the filter selects, kept beside
# the filter in guest-tests.sh (a test added or removed there changes it).
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
want=$1
shift
[[ $want =~ ^[1-9][0-9]*$ ]] || { echo "gtest-run: COUNT must be a number > 0, not '$want'" >&2; exit 2; }
log=$(mktemp /tmp/gtest-run.XXXXXX)
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
ran='' passed=''
# (bash builtins: a process costs ~0.4 s in the TCG guest; the last summary lines count)
while IFS= read -r line; do
  [[ $line =~ ^\[==========\]\ ([0-9]+)\ tests?\ from\ .*\ ran\. ]] && ran=${BASH_REMATCH[1]}
  [[ $line =~ ^\[\ \ PASSED\ \ \]\ ([0-9]+)\ tests?\. ]] && passed=${BASH_REMATCH[1]}
done < "$log"
name="${1##*/} ${*:2}"
if [ "$rc" != 0 ]; then
  echo "gtest-run: FAIL $name: exit status $rc"
  exit "$rc"
fi
if [ "${ran:-none}" != "$want" ] || [ "${passed:-none}" != "$want" ]; then
  echo "gtest-run: FAIL $name: ${ran:-no summary of} tests ran, ${passed:-none} passed; $want expected (a filter that selects other tests, or a skip)"
  exit 1
fi
echo "gtest-run: PASS $name: $want tests ran, $want passed"
