#!/usr/bin/env bash
# The Debian packages on a clean Debian 12: CPack builds libnetdaq0, libnetdaq-dev and netdaq
# from BUILD_DIR; their control data is checked (Depends from dpkg-shlibdeps, the shlibs file
# and ldconfig); then apt installs them into a fresh Debian 12 root (debootstrap,
# resolving their Depends from the archive), where `netdaq --version`, the built-in loopback
# acquisition and examples/cpp (built from the installed docs with find_package and pkg-config
# against libnetdaq-dev) run; removing the packages must leave no netdaq file behind.
# The root's base (minbase + a C++ toolchain, ~400 MB) is made once into $NETDAQ_DEB_ROOT_BASE
# (default /var/tmp/netdaq-deb-root.base) and copied for each run. Needs root and the network
# (the Debian archive).
#   deb_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
base=${NETDAQ_DEB_ROOT_BASE:-/var/tmp/netdaq-deb-root.base}
work=$(mktemp -d /var/tmp/netdaq-deb-test.XXXXXX)
root=$work/root
fail() { echo "deb_test: FAIL: $*" >&2; exit 1; }
unmount_root() {
  for m in dev/pts dev proc sys; do
    mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m" || true
  done
}
cleanup() { unmount_root; rm -rf "$work"; }
trap cleanup EXIT
. "$(dirname "$0")/../../scripts/lib/ci.sh"
[ "$(id -u)" = 0 ] || { echo "deb_test: needs root (chroot)"; netdaq_in_ci && exit 1; exit 77; }

echo "== cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$work/debs" >"$work/cpack.log" 2>&1) || { tail -20 "$work/cpack.log"; fail "cpack"; }
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
for p in libnetdaq0 libnetdaq-dev netdaq; do
  deb=$work/debs/${p}_${version}-1_amd64.deb
  [ -f "$deb" ] || fail "cpack made no $(basename "$deb")"
  echo "$p: Depends: $(dpkg-deb -f "$deb" Depends)"
done
debs=("$work"/debs/*.deb)
lib_deb=$work/debs/libnetdaq0_${version}-1_amd64.deb
depends() { dpkg-deb -f "$work/debs/${1}_${version}-1_amd64.deb" Depends; }
grep -q 'libyaml-cpp' <<<"$(depends libnetdaq0)" || fail "libnetdaq0 does not depend on libyaml-cpp (dpkg-shlibdeps?)"
grep -q 'libpcap' <<<"$(depends netdaq)" || fail "netdaq does not depend on libpcap (dpkg-shlibdeps?)"
grep -q "libnetdaq0 (= ${version}-1)" <<<"$(depends libnetdaq-dev)" \
  || fail "libnetdaq-dev does not depend on libnetdaq0 (= ${version}-1)"
mkdir "$work/ctrl" && dpkg-deb -e "$lib_deb" "$work/ctrl"
grep -q '^libnetdaq 0 libnetdaq0' "$work/ctrl/shlibs" || fail "libnetdaq0 has no shlibs entry for libnetdaq.so.0"
grep -qs 'ldconfig' "$work/ctrl/triggers" "$work/ctrl/postinst" \
  || fail "libnetdaq0 runs no ldconfig (trigger or postinst)"
grep -q 'libnetdaq.so.0 -> ' <<<"$(dpkg-deb -c "$lib_deb")" || fail "libnetdaq0 lacks the SONAME link"

echo "== a fresh Debian 12 root ($base)"
exec 9>"$base.lock"
flock 9   # one debootstrap at a time
if [ ! -f "$base/.ok" ]; then
  echo "making it once: debootstrap bookworm minbase + g++, cmake, make, pkg-config"
  command -v debootstrap >/dev/null || fail "debootstrap missing (scripts/install-deps.sh installs it)"
  rm -rf "$base"
  debootstrap --variant=minbase --include=ca-certificates,g++,cmake,make,pkg-config bookworm "$base" \
    >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; fail "debootstrap"; }
  if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1 || [ -s /etc/apt/sources.list ]; then
    rm -f "$base/etc/apt/sources.list"   # this machine's sources: debootstrap's list has only "main"
    [ -s /etc/apt/sources.list ] && cp /etc/apt/sources.list "$base/etc/apt/sources.list"
    cp -r /etc/apt/sources.list.d/. "$base/etc/apt/sources.list.d/" 2>/dev/null || true
  fi
  touch "$base/.ok"
fi
flock -u 9
cp -a "$base" "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir "$root/debs" && cp "${debs[@]}" "$root/debs/"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive "$@"; }

echo "== apt-get install the three packages (their Depends from the archive)"
in_root apt-get update -qq >"$work/apt.log" 2>&1 || { tail "$work/apt.log"; fail "apt-get update in the root"; }
in_root sh -c 'apt-get install -y -qq --no-install-recommends /debs/*.deb' >>"$work/apt.log" 2>&1 \
  || { tail -20 "$work/apt.log"; fail "apt-get install of the packages"; }
in_root dpkg -l libnetdaq0 libnetdaq-dev netdaq | grep '^ii'

echo "== netdaq --version"
in_root netdaq --version | tee "$work/version.out"
grep -q "^netdaq $version" "$work/version.out" || fail "netdaq --version"
echo "== netdaq run (the built-in loopback acquisition), 2 s"
in_root netdaq run -d 2 -q --expect-no-loss >"$work/run.out" 2>&1 || { cat "$work/run.out"; fail "netdaq run"; }
grep -E '^total' "$work/run.out" || tail -3 "$work/run.out"

echo "== examples/cpp from /usr/share/doc/netdaq, against libnetdaq-dev"
in_root sh -ec '
  ex=/usr/share/doc/netdaq/examples/cpp
  for e in receive_rates send; do
    cmake -S $ex/$e -B /tmp/$e >/dev/null && cmake --build /tmp/$e >/dev/null
  done
  g++ -std=c++20 -o /tmp/quickstart $ex/quickstart/main.cpp $(pkg-config --cflags --libs netdaq)
  /tmp/quickstart $ex/quickstart/quickstart.yaml --packets 1000
  /tmp/receive_rates/receive_rates $ex/receive_rates/receive.yaml --packets 5000 --seconds 30 > /tmp/rx.out 2>&1 &
  rx=$!
  for i in $(seq 50); do grep -q "^receiving on" /tmp/rx.out && break; sleep 0.1; done
  /tmp/send/send $ex/send/send.yaml --packets 5000 --pps 50000 | tail -1
  wait $rx
  tail -1 /tmp/rx.out
  grep -q "^summary: received=5000 .* drops=0" /tmp/rx.out' || fail "examples/cpp in the fresh root"

echo "== dpkg --purge leaves nothing"
in_root dpkg --purge netdaq libnetdaq-dev libnetdaq0 >/dev/null
left=$(in_root sh -c 'ls -d /usr/lib/libnetdaq* /usr/lib/*/libnetdaq* /usr/include/netdaq /usr/bin/netdaq /usr/share/doc/netdaq /usr/lib/cmake/netdaq 2>/dev/null' || true)
[ -z "$left" ] || fail "left after purge: $left"
echo "deb_test: every check passed"
