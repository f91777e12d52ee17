#!/usr/bin/env bash
# Makes .carry/, what scripts/gpu-check.sh needs on the GPU machine (Ubuntu 24.04, CUDA, no
# package registry) beyond its own packages, from this Debian 12 machine's apt sources:
# `apt-get download` + `dpkg -x` into a temporary directory, nothing installed here.
#   .carry/include                 CLI11, nlohmann-json and DLPack (header-only)
#   .carry/include/isa-l, lib/libisal.so*, lib/pkgconfig/libisal.pc   ISA-L (the RoCEv2 ICRC)
#   .carry/pcap-root, lib/pkgconfig/libpcap.pc          libpcap (+ libdbus-1)
#   .carry/httplib-root, lib/pkgconfig/cpp-httplib.pc   cpp-httplib (headers in .carry/include)
#   .carry/rdma-root, rdma/pkgconfig/{libibverbs,librdmacm}.pc
#                                  rdma-core's verbs and rdma_cm (+ libnl-3, libnl-route-3)
#   .carry/dpdk/{include,lib,pmds,pkgconfig/libdpdk.pc}
#                                  DPDK 22.11: the headers, the libraries netdaq links and
#                                  their runtime needs (libnuma, libfdt, libbsd, libmd), and
#                                  the net_ring, net_null and mempool_ring drivers
#   .carry/ucx-root, ucx/pkgconfig/ucx*.pc
#                                  UCX 1.13 (the fleet: netdaq ingest / build): libucx0 +
#                                  libucx-dev, with only the cma transport module (tcp, posix
#                                  and sysv shared memory are in libuct itself; the ib and
#                                  rdmacm modules need mlx5 providers the GPU machine lacks)
#   .carry/xdp-root, xdp/{pkgconfig,bpf,bin}
#                                  libxdp + libbpf (the afxdp engine), the eBPF objects compiled
#                                  here (no clang there), iproute2's ip (NetnsLab's veth pairs)
#   .carry/dpdk/bin/dpdk-testpmd   this machine's dpdk-testpmd (dpdk-dev) with its libraries in
#                                  .carry/dpdk/testpmd (the benchmarks' reference receiver)
# Every .pc file names its prefix relative to ${pcfiledir}, so .carry/ works wherever the
# working tree is copied. Idempotent: .carry/ is made anew on every run. Run as root or as a
# user that may run apt-get download (the package lists must be current: apt-get update).
#   scripts/make-carry.sh
set -euo pipefail
cd "$(dirname "$0")/.."
carry=$PWD/.carry
arch=x86_64-linux-gnu

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# As root, apt-get download would fetch as _apt, which may not write into $tmp: fetch as root.
apt_opts=(-q)
[ "$(id -u)" = 0 ] && apt_opts+=(-o APT::Sandbox::User=root)

# unpack ROOT PACKAGE...: downloads each package and unpacks it into ROOT.
unpack() {
  local root=$1 deb
  shift
  mkdir -p "$tmp/debs" "$root"
  (cd "$tmp/debs" && apt-get download "${apt_opts[@]}" "$@" >/dev/null) ||
    { echo "make-carry: apt-get download $* failed (apt-get update?)" >&2; exit 1; }
  for p in "$@"; do
    deb=$(ls "$tmp/debs/${p}"_*.deb)
    dpkg -x "$deb" "$root"
  done
}
# tidy ROOT: drops what no build needs (docs, static archives, Debian's own .pc files with
# /usr paths) and symlinks that point outside ROOT's files (e.g. the dev links to providers).
tidy() {
  rm -rf "${1:?}/usr/share" "$1/usr/lib/$arch/pkgconfig" "$1/usr/lib/$arch/rsocket"
  find "$1" -name '*.a' -delete
  find "$1" -xtype l -delete
}
# relocate SRC DST PREFIX: writes DEBIAN'S .pc file SRC as DST with prefix=PREFIX (relative
# to ${pcfiledir}) in place of /usr, and without Requires.private / Libs.private (those
# modules are not on the GPU machine, and netdaq links dynamically).
relocate() {
  mkdir -p "$(dirname "$2")"
  {
    echo "prefix=$3"
    sed -E -e '/^prefix=/d' -e '/^(Requires|Libs)\.private:/d' \
      -e 's#^([a-z_]+)="?/usr([^"]*)"?$#\1=${prefix}\2#' -e 's#^([a-z_]+)="([^"]*)"$#\1=\2#' "$1"
  } > "$2"
}

rm -rf "$carry"
mkdir -p "$carry"

# CLI11, nlohmann-json and DLPack (the Python module's frames): header-only; gpu-check.sh
# puts .carry/include on the include path. (pybind11 comes with the GPU machine's Python.)
unpack "$tmp/hdr" libcli11-dev nlohmann-json3-dev libdlpack-dev
mkdir -p "$carry/include"
cp -a "$tmp/hdr/usr/include/CLI" "$tmp/hdr/usr/include/nlohmann" "$tmp/hdr/usr/include/dlpack" "$carry/include/"

# ISA-L (the RoCEv2 ICRC, src/protocols/roce.cpp): headers and library where CMake's
# find_path / find_library look under CMAKE_PREFIX_PATH=.carry, libisal.pc for netdaq-static.pc.
unpack "$carry/isal-root" libisal-dev libisal2
cp -a "$carry/isal-root/usr/include/isa-l" "$carry/isal-root/usr/include/isa-l.h" "$carry/include/"
mkdir -p "$carry/lib"
cp -a "$carry/isal-root/usr/lib/$arch"/libisal.so* "$carry/lib/"
relocate "$carry/isal-root/usr/lib/$arch/pkgconfig/libisal.pc" "$carry/lib/pkgconfig/libisal.pc" '${pcfiledir}/../..'
sed -i 's#^libdir=.*#libdir=${prefix}/lib#' "$carry/lib/pkgconfig/libisal.pc"
rm -rf "$carry/isal-root"

# libpcap (netdaq capture, the integration tests' pcap writer).
unpack "$carry/pcap-root" libpcap0.8-dev libpcap0.8 libdbus-1-3
relocate "$carry/pcap-root/usr/lib/$arch/pkgconfig/libpcap.pc" "$carry/lib/pkgconfig/libpcap.pc" \
  '${pcfiledir}/../../pcap-root/usr'
tidy "$carry/pcap-root"

# cpp-httplib (the metrics server), with the OpenSSL, zlib and Brotli headers its Cflags ask
# for (Debian builds it with them); the GPU machine has those libraries, not their headers.
unpack "$tmp/httplib" libcpp-httplib-dev libssl-dev libbrotli-dev zlib1g-dev
unpack "$carry/httplib-root" libcpp-httplib0.11
cp -a "$tmp/httplib/usr/include/httplib.h" "$tmp/httplib/usr/include/openssl" "$tmp/httplib/usr/include/brotli" \
  "$tmp/httplib/usr/include/zlib.h" "$tmp/httplib/usr/include/zconf.h" "$carry/include/"
cp -a "$tmp/httplib/usr/include/$arch/openssl/." "$carry/include/openssl/"  # opensslconf.h, configuration.h
ln -s libcpp-httplib.so.0.11 "$carry/httplib-root/usr/lib/$arch/libcpp-httplib.so"
relocate "$tmp/httplib/usr/lib/$arch/pkgconfig/cpp-httplib.pc" "$carry/lib/pkgconfig/cpp-httplib.pc" \
  '${pcfiledir}/../../httplib-root/usr'
sed -i 's#^includedir=.*#includedir=${pcfiledir}/../../include#' "$carry/lib/pkgconfig/cpp-httplib.pc"
tidy "$carry/httplib-root"

# rdma-core (the rdma engine): verbs and rdma_cm with libnl, which Ubuntu may not have.
# Debian's libibverbs.so / librdmacm.so dev links are relative (-> libX.so.1), so they resolve
# inside rdma-root; the provider dev links (libmlx5.so, ...) would not and are dropped.
unpack "$carry/rdma-root" libibverbs-dev libibverbs1 librdmacm-dev librdmacm1 libnl-3-200 libnl-route-3-200
for pc in libibverbs librdmacm; do
  relocate "$carry/rdma-root/usr/lib/$arch/pkgconfig/$pc.pc" "$carry/rdma/pkgconfig/$pc.pc" \
    '${pcfiledir}/../../rdma-root/usr'
done
tidy "$carry/rdma-root"

# UCX (the fleet, cmake/fleet.cmake: pkg-config ucx): Debian 12's libraries and headers.
# Debian's UCX is built without CUDA (no cuda_copy / cuda_ipc), so GPU frames are staged in
# pinned host memory before they are sent (docs/fleet.md, "GPU frames"). UCX finds its
# transport modules in the ucx/ folder beside libucs (gpu-check.sh also sets UCX_MODULE_DIR).
# libucs needs libnuma.so.1, which .carry/dpdk/lib holds.
unpack "$carry/ucx-root" libucx0 libucx-dev
for pc in ucx ucx-ucs ucx-uct; do
  relocate "$carry/ucx-root/usr/lib/$arch/pkgconfig/$pc.pc" "$carry/ucx/pkgconfig/$pc.pc" \
    '${pcfiledir}/../../ucx-root/usr'
done
# Debian writes "prefix = /usr" (spaces): relocate's patterns expect none, so set the dirs here.
sed -i -E -e '\#^prefix *= */usr$#d' -e '/^[a-z_]+ *= */{s/^([a-z_]+) *= */\1=/}' -e 's#^(exec_prefix)=.*#\1=${prefix}#' \
  -e 's#^libdir=.*#libdir=${prefix}/lib/'"$arch"'#' -e 's#^includedir=.*#includedir=${prefix}/include#' \
  -e '/^bindir=/d' "$carry/ucx/pkgconfig"/*.pc
rm -f "$carry/ucx-root/usr/lib/$arch/ucx"/libuct_{ib,rdmacm}.so*
tidy "$carry/ucx-root"

# DPDK: the headers (Debian splits rte_config.h & co. into include/$arch/dpdk: merged here)
# and only the libraries netdaq links (libdpdk.pc lists all 51; netdaq uses eal, ethdev, mbuf,
# mempool, ring, net and the vdev bus) with what they and the three drivers need.
rte_libs=(eal kvargs telemetry ethdev net mbuf mempool ring meter pci bus_pci bus_vdev)
rte_pmds=(net_ring net_null mempool_ring)
sys_libs=(libnuma.so.1 libfdt.so.1 libbsd.so.0 libmd.so.0)
pkgs=(libdpdk-dev libbsd-dev libnuma1 libfdt1 libbsd0 libmd0)
for l in "${rte_libs[@]}" "${rte_pmds[@]}"; do pkgs+=("librte-${l//_/-}23"); done
unpack "$tmp/dpdk" "${pkgs[@]}"
src=$tmp/dpdk/usr/lib/$arch
dpdk=$carry/dpdk
mkdir -p "$dpdk/include" "$dpdk/lib" "$dpdk/pmds" "$dpdk/pkgconfig"
cp -a "$tmp/dpdk/usr/include/dpdk/." "$tmp/dpdk/usr/include/$arch/dpdk/." "$dpdk/include/"
cp -a "$tmp/dpdk/usr/include/bsd" "$dpdk/include/"  # rte_string_fns.h includes <bsd/string.h>
abi=$(ls "$src"/librte_eal.so.*.* | sed -E 's/.*\.so\.//')  # 23.0
for l in "${rte_libs[@]}"; do
  f=librte_$l.so
  cp -L "$src/$f.$abi" "$dpdk/lib/"
  ln -s "$f.$abi" "$dpdk/lib/$f.${abi%%.*}"
  ln -s "$f.${abi%%.*}" "$dpdk/lib/$f"
done
for l in "${sys_libs[@]}"; do
  real=$(readlink -f "$src/$l")
  cp "$real" "$dpdk/lib/"
  [ "$(basename "$real")" = "$l" ] || ln -s "$(basename "$real")" "$dpdk/lib/$l"
done
ln -s libbsd.so.0 "$dpdk/lib/libbsd.so"
# The drivers, loaded with -d .carry/dpdk/pmds (NETDAQ_DPDK_DRIVERS): one file each, since EAL
# loads every *.so and *.so.$abi file of the directory.
for l in "${rte_pmds[@]}"; do cp -L "$src/librte_$l.so.$abi" "$dpdk/pmds/"; done
# Libraries the drivers need that netdaq does not link must still load from .carry/dpdk/lib.
missing=$(for f in "$dpdk"/lib/*.so.* "$dpdk"/pmds/*; do objdump -p "$f" | awk '/NEEDED/ {print $2}'; done |
  sort -u | while read -r n; do
    [ -e "$dpdk/lib/$n" ] || [[ $n =~ ^(libc|libm|ld-linux-x86-64)\.so ]] || echo "$n"
  done)
[ -z "$missing" ] || { echo "make-carry: .carry/dpdk lacks $missing" >&2; exit 1; }
orig=$tmp/dpdk/usr/lib/$arch/pkgconfig
version=$(sed -n 's/^Version: *//p' "$orig/libdpdk.pc")
cflags=$(sed -n 's/^Cflags: *//p' "$orig/libdpdk-libs.pc" | sed -E 's#-I\$\{includedir\}/\.\./[^ ]*dpdk ##')
libs=""
for l in "${rte_libs[@]}"; do libs+=" -lrte_$l"; done
cat > "$dpdk/pkgconfig/libdpdk.pc" <<EOF
prefix=\${pcfiledir}/..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: DPDK
Description: The Data Plane Development Kit (DPDK), Debian 12's, as much as netdaq needs
Version: $version
Libs: -L\${libdir}$libs -lbsd
Cflags: $cflags
EOF

# dpdk-testpmd, the reference receiver of bench/dpdk_vs_testpmd.sh and bench/pipeline.sh: this
# machine's binary (package dpdk-dev, installed here) in .carry/dpdk/testpmd/ with every library
# it loads (ldd, here) that .carry/dpdk/lib lacks, the drivers it links included;
# .carry/dpdk/bin/dpdk-testpmd runs it with those on its own LD_LIBRARY_PATH only, so that
# Debian 12's libsystemd, libz, ... never shadow the GPU machine's own for other programs. Its
# net_null / net_ring drivers come from -d .carry/dpdk/pmds (NETDAQ_DPDK_DRIVERS), as netdaq's.
testpmd=$(command -v dpdk-testpmd) || { echo "make-carry: dpdk-testpmd not found (apt-get install dpdk-dev)" >&2; exit 1; }
! ldd "$testpmd" | grep -q "not found" || { echo "make-carry: $testpmd: $(ldd "$testpmd" | grep "not found")" >&2; exit 1; }
mkdir -p "$dpdk/bin" "$dpdk/testpmd/lib"
cp "$testpmd" "$dpdk/testpmd/dpdk-testpmd"
ldd "$testpmd" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
  case "$name" in libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) continue ;; esac
  [ -e "$dpdk/lib/$name" ] || cp -L "$path" "$dpdk/testpmd/lib/$name"
done
cat > "$dpdk/bin/dpdk-testpmd" <<'EOF'
#!/bin/sh
# Debian 12's dpdk-testpmd with the libraries it needs (scripts/make-carry.sh)
here=$(dirname "$(readlink -f "$0")")/..
LD_LIBRARY_PATH=$here/testpmd/lib:$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec "$here/testpmd/dpdk-testpmd" "$@"
EOF
chmod +x "$dpdk/bin/dpdk-testpmd"

# libxdp + libbpf (the afxdp engine on the GPU machine: the GPU-driven receiver's tests) and
# iproute2's ip (NetnsLab makes those tests' namespaces and veth pairs with it). The machine has
# no clang for the eBPF programs: they are compiled here, as cmake/bpf_object.cmake would, and
# .carry/xdp/bin/bpf-object (given to CMake as NETDAQ_BPF_CLANG) hands out the object of the
# source it is asked to compile. ip runs with its own libraries only (.carry/xdp/bin/ip).
unpack "$carry/xdp-root" libxdp-dev libxdp1 libbpf-dev libbpf1 iproute2 libmnl0 libbsd0 libmd0 libcap2
for pc in libxdp libbpf; do
  relocate "$carry/xdp-root/usr/lib/$arch/pkgconfig/$pc.pc" "$carry/xdp/pkgconfig/$pc.pc" '${pcfiledir}/../../xdp-root/usr'
done
tidy "$carry/xdp-root"
mkdir -p "$carry/xdp/bpf" "$carry/xdp/bin"
for src in src/engines/afxdp/bpf/steer.bpf.c src/engines/socket/bpf/gro_drops.bpf.c tests/integration/bpf/drop_every_nth.bpf.c; do
  clang -O2 -g -target bpf -Wall -Werror -I/usr/include/$arch -I"$(dirname "$src")" -c "$src" \
    -o "$carry/xdp/bpf/$(basename "$src" .c).o"
done
cat > "$carry/xdp/bin/bpf-object" <<'EOF'
#!/bin/sh
# Stands in for clang -target bpf on the GPU machine: copies the object scripts/make-carry.sh
# compiled from the same source (-c SRC) to -o OUT.
here=$(dirname "$(readlink -f "$0")")/..
src= out=
while [ $# -gt 0 ]; do
  case "$1" in -c) src=$2; shift ;; -o) out=$2; shift ;; esac
  shift
done
obj=$here/bpf/$(basename "$src" .c).o
[ -f "$obj" ] || { echo "bpf-object: no object for $src in $here/bpf (scripts/make-carry.sh)" >&2; exit 1; }
cp "$obj" "$out"
EOF
cat > "$carry/xdp/bin/ip" <<'EOF'
#!/bin/sh
# Debian 12's ip (iproute2) with its libraries (scripts/make-carry.sh)
root=$(dirname "$(readlink -f "$0")")/../../xdp-root
LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu exec "$root/bin/ip" "$@"
EOF
chmod +x "$carry/xdp/bin/bpf-object" "$carry/xdp/bin/ip"

echo "make-carry: $(du -sh "$carry" | cut -f1) in .carry (include, pcap-root, httplib-root, rdma-root, ucx-root, dpdk, xdp)"
