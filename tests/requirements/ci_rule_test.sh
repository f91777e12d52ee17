#!/usr/bin/env bash
# The CI rule is read one way by the scripts (scripts/lib/ci.sh), the C++ tests
# (tests/require_env.h, through netdaq_unit_tests' CiRule test), the Python tests
# (tests/python/conftest.py) and CMake (cmake/requirements.cmake): each is asked about the
# same values of CI and must answer as the shell rule does.
#   ci_rule_test.sh SOURCE_DIR UNIT_TEST_BINARY PYTHON
set -uo pipefail
src=$1 unit=$2 python=$3
. "$src/scripts/lib/ci.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'include(%s/cmake/requirements.cmake)\nmessage("${NETDAQ_IN_CI}")\n' "$src" > "$work/probe.cmake"
failed=0
for value in true TRUE True 1 yes YES false FALSE 0 no "" on 2 "true "; do
  if CI=$value netdaq_in_ci; then want=on; else want=off; fi
  cxx=$(CI=$value "$unit" --gtest_filter=CiRule.Reports 2>&1 | sed -n 's/^ci rule: //p')
  py=$(cd "$src/tests/python" && CI=$value "$python" -c 'import conftest; print("on" if conftest.CI else "off")' 2>&1)
  cm=$(CI=$value cmake -P "$work/probe.cmake" 2>&1)
  [ "$cm" = ON ] && cm=on || { [ "$cm" = OFF ] && cm=off; }
  if [ "$cxx" = "$want" ] && [ "$py" = "$want" ] && [ "$cm" = "$want" ]; then
    echo "ok   CI='$value': $want everywhere"
  else
    echo "FAIL CI='$value': shell $want, C++ '$cxx', Python '$py', CMake '$cm'"
    failed=1
  fi
done
exit $failed
