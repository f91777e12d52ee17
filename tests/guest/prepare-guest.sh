#!/usr/bin/env bash
# Prepares what tests/guest/run-in-guest.sh boots, in CACHE_DIR (reused when already there):
#   vmlinuz          Debian's stock kernel (linux-image-amd64's current ABI version). Why: the
#                    dev and CI VMs' kernels lack the TC pieces DPDK's tap PMD builds rte_flow
#                    from (multiq, flower, skbedit, gact) and cannot load modules.
#   initramfs.cpio.gz  a static busybox, guest-init.sh as /init and the modules it loads:
#                    those that mount the host's root (9p over virtio) and those the tests need.
# Only `apt-get download` and dpkg-deb: nothing is installed on the host.
# Usage: prepare-guest.sh CACHE_DIR
set -euo pipefail
cache=${1:?usage: prepare-guest.sh CACHE_DIR}
here=$(cd "$(dirname "$0")" && pwd)

# virtio_pci, 9pnet_virtio, 9p: the host's root over virtio-9p (the generic kernel has them;
# the -cloud one has no 9p); overlay: a writable /tmp over the host's. The rest: netns + veth
# labs, DPDK's tap device, and what the tap PMD's rte_flow asks of TC (multiq root qdisc,
# ingress for remote=, flower, skbedit to a queue, gact drop/pass, mirred redirects to and from
# the remote netdev, bpf for RSS).
# RDMA over Soft-RoCE (tests/guest/rdma-lab.sh), in dependency order: crc32_generic (rxe
# computes its ICRC with the crypto API's "crc32", which nothing in the guest can autoload: no
# modprobe, no modules.dep), ib_core, ib_uverbs (/dev/infiniband/uverbsN), udp_tunnel and
# ip6_udp_tunnel (RoCEv2's UDP port 4791), rdma_rxe, then the connection manager for librdmacm
# (ib_cm, iw_cm, configfs, rdma_cm, rdma_ucm: /dev/infiniband/rdma_cm). The resolver below adds
# any other dependency from the modules' depends= and loads each after those it needs.
# sch_netem: packets lost on the wire for the software RoCE tests (roce-sw-lab.sh): netem's drops
# look sent to rxe, where a tc drop action's make rxe send the packet again.
# vgem (with drm): a real dma-buf exporter with no GPU, for the rdma engine's GPU-memory
# registration tests (rxe must refuse dma-bufs, clearly).
modules=(virtio_pci 9pnet_virtio 9p overlay
         veth tun sch_multiq sch_ingress cls_flower cls_bpf act_skbedit act_gact act_mirred act_bpf sch_netem
         crc32_generic ib_core ib_uverbs udp_tunnel ip6_udp_tunnel rdma_rxe
         ib_cm iw_cm configfs rdma_cm rdma_ucm drm vgem)

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
exec 9>"$cache/.lock"
flock 9  # one preparation at a time per cache

# The package behind linux-image-amd64 now, e.g. linux-image-6.1.0-56-amd64 (never hard-coded:
# old ABI versions leave the archive). Stale or missing package lists are refreshed once.
kernel_pkg() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'; }
refreshed=0
refresh() { [ $refreshed = 1 ] || { apt-get update -qq >&2 || true; refreshed=1; }; }
pkg=$(kernel_pkg)
[ -n "$pkg" ] || { refresh; pkg=$(kernel_pkg); }
[ -n "$pkg" ] || { echo "prepare-guest: apt-cache knows no linux-image-amd64 (apt sources?)" >&2; exit 1; }
recipe() { echo "$pkg $(cat "$here/prepare-guest.sh" "$here/guest-init.sh" | sha1sum)"; }  # rebuilt when any changes
stamp="$cache/ready"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(recipe)" ]; then
  exit 0
fi

echo "prepare-guest: building the guest ($pkg, busybox-static) in $cache" >&2
work=$(mktemp -d "$cache/tmp.XXXXXX")
trap 'rm -rf "$work"' EXIT
fetch() { (cd "$work" && apt-get download -q "$pkg" busybox-static >/dev/null); }
fetch 2>/dev/null || { refresh; pkg=$(kernel_pkg); fetch; }
kdeb=$(ls "$work"/linux-image-*.deb)

# The kernel image and the module lists (the package has no modules.dep: depmod makes it when
# the package is installed, and the host may have no kmod at all).
dpkg-deb --fsys-tarfile "$kdeb" | tar -x -C "$work" --wildcards './boot/vmlinuz-*' './lib/modules/*/modules.order' \
  './lib/modules/*/modules.builtin'
ver=$(basename "$work"/lib/modules/*)
mdir="$work/lib/modules/$ver"
norm() { sed 's,.*/,,; s,\.ko$,,; s,-,_,g'; }

# Each wanted module and what it depends on (the depends= of its .modinfo), extracted a level
# at a time; built-in ones need nothing.
declare -A path_of=() deps_of=()
while IFS= read -r m; do path_of[$(norm <<< "$m")]=$m; done < "$mdir/modules.order"
todo=()
for n in "${modules[@]}"; do
  if [ -n "${path_of[$n]:-}" ]; then
    todo+=("$n")
  elif ! norm < "$mdir/modules.builtin" | grep -qx "$n"; then
    echo "prepare-guest: $ver has no module $n" >&2
    exit 1
  fi
done
while [ ${#todo[@]} -gt 0 ]; do
  files=()
  for n in "${todo[@]}"; do files+=("./lib/modules/$ver/${path_of[$n]}"); done
  dpkg-deb --fsys-tarfile "$kdeb" | tar -x -C "$work" "${files[@]}"
  next=()
  for n in "${todo[@]}"; do
    deps_of[$n]=$(tr '\0' '\n' < "$mdir/${path_of[$n]}" | sed -n 's/^depends=//p' | tr ',' ' ')
    for d in ${deps_of[$n]}; do
      [ -n "${deps_of[$d]+x}" ] || [[ " ${next[*]} " == *" $d "* ]] || next+=("$d")
    done
  done
  todo=(${next[@]+"${next[@]}"})
done
# Load order: each module after those it depends on.
declare -A seen=()
order=()
visit() {
  local n=$1 d
  [ -n "${seen[$n]:-}" ] && return
  seen[$n]=1
  for d in ${deps_of[$n]}; do visit "$d"; done
  order+=("${path_of[$n]}")
}
for n in "${modules[@]}"; do [ -z "${path_of[$n]:-}" ] || visit "$n"; done

root="$work/initramfs"
mkdir -p "$root/bin" "$root/modules"
dpkg-deb --fsys-tarfile "$work"/busybox-static_*.deb | tar -x -O ./bin/busybox > "$root/bin/busybox"
chmod 755 "$root/bin/busybox"
cp "$here/guest-init.sh" "$root/init"
chmod 755 "$root/init"
for m in "${order[@]}"; do
  cp "$mdir/$m" "$root/modules/"
  basename "$m" >> "$root/modules/order"
done
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs.cpio.gz"
mv "$work/initramfs.cpio.gz" "$cache/initramfs.cpio.gz"
mv "$work"/boot/vmlinuz-* "$cache/vmlinuz"
echo "$ver" > "$cache/kernel-version"
recipe > "$stamp"
echo "prepare-guest: kernel $ver, modules: $(basename -a "${order[@]}" | tr '\n' ' ')" >&2
