#!/usr/bin/env bash
# Every tool a test, a test script or a benchmark script runs must come from a Debian package
# that scripts/install-deps.sh installs (or from an essential / required package every Debian
# has): a tool installed by hand keeps CI green on one machine and fails it on a fresh one.
# A test's "apt-get install X" hint must name that same package.
#   scripts/check-tool-packages.sh        (run by ctest as tool_packages_are_installed)
# Exits 1 naming each tool whose package is missing from install-deps.sh or misnamed.
set -uo pipefail
cd "$(dirname "$0")/.."

# The packages install-deps.sh installs (its packages=( ... ) list, comments dropped).
listed=$(sed -n '/^packages=(/,/^)/p' scripts/install-deps.sh | sed 's/#.*//' | tr -s ' \t()' '\n\n' | grep -vE '^(packages=|)$')
# Tools install-deps.sh installs only where none is on PATH ("command -v T >/dev/null ||
# packages+=(P)"): a fresh machine gets P, so T from any package passes.
declare -A fallback=()
while read -r t p; do fallback[$t]=$p; listed+=$'\n'$p; done < <(
  sed -nE 's/^command -v ([a-z0-9_.-]+) >\/dev\/null \|\| packages\+=\(([a-z0-9.+-]+)\)$/\1 \2/p' scripts/install-deps.sh)
# The package a file on this machine belongs to ("" if none), trying the merged-/usr aliases.
package_of() {
  local f p
  for f in "$1" "$(readlink -f "$1")" "${1/#\/usr\/bin/\/bin}" "${1/#\/usr\/sbin/\/sbin}"; do
    # (dpkg -S also prints "diversion by PKG from/to: FILE" lines: the owner is on the others)
    p=$(dpkg -S "$f" 2>/dev/null | grep -v '^diversion by' | head -1 | cut -d: -f1)
    [ -n "$p" ] && { echo "${p%%,*}"; return; }
  done
}
always_there() {  # essential or priority required: on every Debian 12 root (debootstrap's base)
  local info
  info=$(dpkg-query -W -f='${Essential} ${Priority}' "$1" 2>/dev/null) || return 1
  [[ $info == yes* || $info == *required ]]
}

declare -A hint=()   # tool -> package a test names in its "apt-get install" hint
declare -A need=()   # tool -> where it is required (must exist)
declare -A used=()   # tool -> where it is run (checked when it exists: argv heads are a guess)
while IFS=$'\t' read -r where tool pkg; do
  need[$tool]=$where
  [ -n "$pkg" ] && hint[$tool]=$pkg
done < <(
  grep -rnoE 'NDQ_REQUIRE_TOOL\("[^"]+", "[^"]+"' tests | sed -E 's/^([^:]+):([0-9]+):.*\("([^"]+)", "([^"]+)"/\1:\2\t\3\t\4/'
  grep -rnoE 'have_tool\("[^"]+"\)' tests | sed -E 's/^([^:]+):([0-9]+):.*\("([^"]+)"\)/\1:\2\t\3\t/'
  grep -noE '[a-z0-9_.-]+:[a-z0-9.+-]+' tests/guest/run-in-guest.sh | grep -E '^3[0-9]:' |
    sed -E 's/^([0-9]+):([^:]+):(.*)/tests\/guest\/run-in-guest.sh:\1\t\2\t\3/'
  grep -rnoE 'command -v [a-z0-9_.-]+' bench/*.sh tests/guest/*.sh tests/deploy/*.sh scripts/*.sh |
    sed -E 's/^([^:]+):([0-9]+):command -v (.*)/\1:\2\t\3\t/'
)
while IFS=$'\t' read -r where tool; do
  used[$tool]=$where
done < <(grep -rnoE '\{"[a-z][a-z0-9_.-]*", "' tests --include='*.cpp' | sed -E 's/^([^:]+):([0-9]+):\{"([^"]+)".*/\1:\2\t\3/')

fail=0 checked=0
check() {  # tool where required
  local tool=$1 where=$2 required=$3 path pkg
  path=$(command -v "$tool") || {
    [ "$required" = 1 ] && { echo "MISSING: $tool (required at $where) is not installed here"; fail=1; }
    return
  }
  [[ $path == /* ]] || return 0  # a shell builtin
  checked=$((checked + 1))
  pkg=$(package_of "$path")
  if [ -z "$pkg" ]; then
    echo "UNPACKAGED: $tool ($path, used at $where) belongs to no Debian package: install-deps.sh cannot provide it"
    fail=1
  elif ! grep -qxF "$pkg" <<<"$listed" && ! always_there "$pkg" && [ -z "${fallback[$tool]:-}" ]; then
    echo "NOT INSTALLED BY install-deps.sh: $tool ($path, used at $where) comes from package '$pkg'"
    fail=1
  fi
  if [ -n "${hint[$tool]:-}" ] && [ -n "$pkg" ] && [ "${hint[$tool]}" != "$pkg" ]; then
    echo "WRONG HINT: $where says 'apt-get install ${hint[$tool]}' for $tool, which comes from '$pkg'"
    fail=1
  fi
}
for t in "${!need[@]}"; do check "$t" "${need[$t]}" 1; done
for t in "${!used[@]}"; do [ -n "${need[$t]:-}" ] || check "$t" "${used[$t]}" 0; done
echo "tool packages: $checked tools checked (${#need[@]} required by tests and scripts, the rest run by tests)"
[ "$fail" = 0 ] && echo "every tool comes from a package scripts/install-deps.sh installs"
exit "$fail"
