#!/usr/bin/env bash
# Runs COMMAND inside a QEMU guest that boots Debian's stock kernel with the host's root
# filesystem shared read-only (9p), virtme-style: same binaries, same build directory, the
# guest kernel's modules instead of the host's. Why: the dpdk engine's rte_flow on net_tap
# needs TC modules (multiq, flower, skbedit, gact, ...) that the dev and CI VMs' kernel lacks.
#
#   run-in-guest.sh [--cache DIR] [--timeout SECONDS] [--env NAME=VALUE]... -- COMMAND [ARG...]
#
# COMMAND runs as root in the current directory (not under /run or /dev: the guest mounts
# fresh ones there), with PATH, HOME, LANG, CI, NETDAQ_*, GTEST_*, *SAN_OPTIONS and each --env
# passed on. Writable in the guest: /tmp and /var/tmp (the host's, writes kept in the guest),
# /run (so /var/run), /dev/shm, /sys/fs/bpf; the rest is read-only. The exit status is
# COMMAND's; 124 when the guest ran past --timeout (default 900 s; QEMU is killed), 125 when it
# ended without a status.
# TCG (no KVM: nested KVM is broken on the dev and CI VMs); NETDAQ_GUEST_ACCEL=kvm tries KVM.
# The guest (kernel, initramfs) is prepared in --cache (default ./guest) by prepare-guest.sh.
# Missing tools make it exit 77 (ctest: skipped), or 1 with CI=true.
. "$(dirname "$0")/../../scripts/lib/ci.sh"  # netdaq_in_ci
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=$PWD/guest
limit=900
extra_env=()
while [ $# -gt 0 ]; do
  case $1 in
    --cache) cache=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --env) extra_env+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { sed -n '2,17p' "$0" >&2; exit 2; }

missing=()
for t in qemu-system-x86_64:qemu-system-x86 cpio:cpio apt-get:apt dpkg-deb:dpkg flock:util-linux; do
  command -v "${t%%:*}" >/dev/null || missing+=("${t%%:*} (apt-get install ${t#*:})")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "run-in-guest: missing ${missing[*]}; scripts/install-deps.sh installs them" >&2
  netdaq_in_ci && exit 1
  exit 77
fi
"$here/prepare-guest.sh" "$cache"

tmp=$(mktemp -d)
qemu_pid=
cleanup() {
  [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null && wait "$qemu_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# This run's piece of the initramfs: /cmd.sh and a nonce that the exit marker must carry (so
# that no line the command prints can pass for it). Appended cpio archives add to the first.
nonce=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
mkdir "$tmp/run"
echo "$nonce" > "$tmp/run/nonce"
{
  for v in PATH HOME LANG LC_ALL $(compgen -e | grep -E '^(CI|NETDAQ_[A-Z0-9_]*|GTEST_[A-Z0-9_]*|[A-Z]*SAN_OPTIONS)$'); do
    [ -n "${!v+x}" ] && printf 'export %s=%q\n' "$v" "${!v}"
  done
  for e in ${extra_env[@]+"${extra_env[@]}"}; do printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"; done
  printf 'cd %q || exit 125\n' "$PWD"
  printf 'exec'
  printf ' %q' "$@"
  echo
} > "$tmp/run/cmd.sh"
(cd "$tmp/run" && printf 'cmd.sh\nnonce\n' | cpio -o -H newc --quiet | gzip -1) > "$tmp/run.cpio.gz"
cat "$cache/initramfs.cpio.gz" "$tmp/run.cpio.gz" > "$tmp/initrd"

if [ "${NETDAQ_GUEST_ACCEL:-tcg}" = kvm ]; then
  accel=(-accel kvm -cpu host)
else
  accel=(-accel tcg -cpu max)
fi
echo "run-in-guest: kernel $(cat "$cache/kernel-version"), ${accel[1]}, limit ${limit}s: $*" >&2
start=$(date +%s)
: > "$tmp/console"
# No network device: the tests make their own namespaces, veths and taps inside the guest.
timeout -k 10 "$limit" qemu-system-x86_64 -nodefaults -no-reboot -display none -serial stdio \
  "${accel[@]}" -smp 2 -m 2048 \
  -kernel "$cache/vmlinuz" -initrd "$tmp/initrd" \
  -append "console=ttyS0 quiet panic=-1 mitigations=off clocksource=tsc tsc=reliable" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  < /dev/null >> "$tmp/console" 2>&1 &
qemu_pid=$!
tail -n +1 --pid="$qemu_pid" -f "$tmp/console" | sed -u 's/\r$//' &
set +e
wait "$qemu_pid"
qemu_rc=$?
set -e
qemu_pid=
wait  # the console echo
rc=$(tr -d '\r' < "$tmp/console" | awk -v n="$nonce" '$1 == "NETDAQ_GUEST_EXIT" && $2 == n { rc = $3 } END { print rc }')
took=$(($(date +%s) - start))
if [ -z "$rc" ]; then
  if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
    echo "run-in-guest: the guest ran past ${limit}s and was killed" >&2
    exit 124
  fi
  echo "run-in-guest: the guest ended after ${took}s without an exit status (qemu status $qemu_rc)" >&2
  exit 125
fi
echo "run-in-guest: exit status $rc after ${took}s" >&2
exit "$rc"
