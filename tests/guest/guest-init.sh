#!/bin/busybox sh
# /init of the guest that tests/guest/run-in-guest.sh boots (PID 1, busybox). Loads the
# modules prepare-guest.sh put in /modules, mounts the host's root read-only (9p) with writable
# /tmp and /var/tmp over the host's, fresh /run, /dev, /proc, /sys, /sys/fs/bpf, runs /cmd.sh
# (from the run's own initramfs piece) chrooted there, prints "NETDAQ_GUEST_EXIT <nonce>
# <status>" on the console for the host to parse, and powers off.
/bin/busybox mkdir -p /proc /sys /dev /usr/bin /sbin /usr/sbin /newroot
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1

finish() {
  echo
  echo "NETDAQ_GUEST_EXIT $(cat /nonce) $1"
  poweroff -f
}
fail() { echo "guest-init: $*"; finish 125; }

for m in $(cat /modules/order); do insmod "/modules/$m" || fail "insmod $m"; done

r=/newroot
# cache=loose: the host's files do not change while the guest runs; it makes loading the
# test binaries and shared libraries over 9p much faster.
mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=262144,cache=loose hostroot $r || fail "cannot mount the host's root"
mount -t proc proc $r/proc
mount -t sysfs sys $r/sys
mount -t devtmpfs dev $r/dev
mkdir -p $r/dev/pts $r/dev/shm
mount -t devpts devpts $r/dev/pts
mount -t tmpfs shm $r/dev/shm
mount -t bpf bpf $r/sys/fs/bpf
# /tmp and /var/tmp: the host's (a build directory may lie there) with writes kept in the
# guest's memory (overlay); /run: a fresh one (the host's runtime state is not the guest's).
mkdir -p /rw
mount -t tmpfs rw /rw
for d in /tmp /var/tmp; do
  mkdir -p /rw$d/upper /rw$d/work
  chmod 1777 /rw$d/upper
  mount -t overlay overlay -o lowerdir=$r$d,upperdir=/rw$d/upper,workdir=/rw$d/work $r$d || fail "overlay on $d"
done
mount -t tmpfs -o mode=755 run $r/run || fail "tmpfs on /run"
mkdir -p $r/run/lock $r/run/netdaq-guest
cp /cmd.sh $r/run/netdaq-guest/cmd.sh
hostname netdaq-guest
ip link set lo up

chroot $r /bin/bash /run/netdaq-guest/cmd.sh
finish $?
