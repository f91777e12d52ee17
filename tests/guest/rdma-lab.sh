#!/usr/bin/env bash
# Two Soft-RoCE (rdma_rxe) devices that talk to each other over a veth pair, for RDMA tests in
# the QEMU guest of tests/guest/run-in-guest.sh (its kernel has rdma_rxe; prepare-guest.sh
# loads it and the rest of the RDMA stack). As root:
#
#   rdma-lab.sh up     removes what an earlier lab left, then builds one; prints its shell
#                      variables (eval "$(rdma-lab.sh up)"), messages go to stderr
#   rdma-lab.sh show   prints the variables of the lab that is up
#   rdma-lab.sh down   removes it all (rxe devices, veths, routing rules); exit 0 when nothing is there
#
# or sourced (`. rdma-lab.sh`), giving `rdma_lab up|show|down` (each in a subshell).
#
#   NDQ_RDMA_DEV0=rxe_ndq0  NDQ_RDMA_NETDEV0=ndq-rdma-0  NDQ_RDMA_IP0=10.77.0.1  NDQ_RDMA_GID_INDEX0=1
#   NDQ_RDMA_DEV1=rxe_ndq1  NDQ_RDMA_NETDEV1=ndq-rdma-1  NDQ_RDMA_IP1=10.77.0.2  NDQ_RDMA_GID_INDEX1=1
#   (plus NDQ_RDMA_GID0/1: the GIDs, e.g. ::ffff:10.77.0.1)
#
# What was found on Debian 12's kernel 6.1.0-56-amd64 (rdma-core 44, perftest 4.5, TCG guest):
# - Both ends stay in the initial network namespace. rxe on 6.1 has one UDP socket (port 4791)
#   in init_net and looks its routes up in init_net, whatever namespace its netdev is in: with
#   the veth ends moved into two namespaces (rdma system netns shared) the QP pair connects,
#   then the first send completes with "local QP operation error" and nothing goes on the wire.
#   Two addresses of one namespace are local to each other, so a plain lab routes RoCE through
#   lo, where no rxe listens ("Failed to modify QP to RTR"). So this lab steers it with policy
#   routing: the lookup of the local table moves from rule preference 0 to 1000, and a rule
#   per veth end (preference 100/101, "oif <veth>") sends traffic bound to that end to the
#   other end's address through the wire; accept_local=1 and rp_filter=0 on the veth ends let
#   a packet from an address of this host in. rxe and ib_core ask for routes with the netdev
#   as oif, so all RoCE traffic crosses the veth (its packet counters and both devices'
#   `rdma statistic` counters grow); other traffic (a TCP side channel to 10.77.0.2) still
#   goes through lo. `down` puts the local rule back at preference 0.
# - rdma_cm: bind the active side to its own address (rping -I 10.77.0.1, rdma_resolve_addr
#   with a source address); with no source address the route to 10.77.0.2 is local and
#   rdma_cm picks the passive side's device for both ends (rxe loopback, no wire).
# - GID index for RoCEv2 over IPv4: 1 here (index 0 is the veth's IPv6 link-local fe80::
#   address, also RoCE v2; rxe has no RoCE v1 entries). Never hard-code it: this script reads
#   it from /sys/class/infiniband/<dev>/ports/1/gids/<i> (the IPv4-mapped ::ffff:a.b.c.d) and
#   gid_attrs/types/<i> ("RoCE v2").
# - Port limits: max_msg_sz 0x800000 (8 MiB), yet rxe does not enforce it: an RC SEND of
#   8 MiB + 1 (ibv_rc_pingpong -s 8388609) went through; keep messages <= 8 MiB anyway (what
#   the port says, and what real NICs hold to). Active MTU 1024 with the veth's 1500 (the
#   largest IB MTU below it), gid_tbl_len 1024, max_qp_wr 1048576, max_sge 32, max_cqe 32767,
#   max_mr 524287, max_qp_rd_atom 128, atomics (ATOMIC_HCA), MEM_WINDOW, no ODP.
# - RC, UC and UD QPs all work (ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong), as do SEND
#   and RDMA WRITE (ib_send_bw, ib_write_bw) and rdma_cm (rping).
# - ibv_reg_dmabuf_mr is refused: EOPNOTSUPP (rxe has no reg_user_mr_dmabuf), so no
#   GPUDirect-style dma-buf memory regions on rxe; ibv_reg_mr on host memory works.
# - Speed under TCG: 12-35 MB/s for SEND and WRITE with 4 KiB messages, 0.2-9 ms per pingpong
#   iteration (the low ends on an idle guest). Starting a process costs 0.1-0.5 s over 9p:
#   this script and rdma-peers-check.sh use bash builtins and `ip -batch` / `rdma -b`.

_rdma_lab_netdev=(ndq-rdma-0 ndq-rdma-1)
_rdma_lab_ip=(10.77.0.1 10.77.0.2)
_rdma_lab_dev=(rxe_ndq0 rxe_ndq1)
_rdma_lab_table=(7700 7701)
_rdma_lab_pref=(100 101)
_rdma_lab_local_pref=1000

_rdma_lab_log() { echo "rdma-lab: $*" >&2; }
_rdma_lab_die() { _rdma_lab_log "$*"; exit 1; }

# Sets _rdma_lab_gi to the GID table entry of dev's port 1 holding IPv4 address ip as a
# RoCE v2 GID, or to "". (bash builtins only: a process costs ~0.4 s in the TCG guest)
_rdma_lab_gid_index() {
  local dev=$1 ip=$2 want i g t path
  path=/sys/class/infiniband/$dev/ports/1
  _rdma_lab_gi=
  local -a o
  IFS=. read -r -a o <<< "$ip"
  printf -v want '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${o[0]}" "${o[1]}" "${o[2]}" "${o[3]}"
  # (unused entries read as zeros, their gid_attrs as EINVAL; used ones come first)
  for ((i = 0; ; i++)); do
    [ -e "$path/gids/$i" ] || return 0
    read -r g < "$path/gids/$i" || continue
    [ "$g" = "$want" ] || continue
    read -r t < "$path/gid_attrs/types/$i" 2>/dev/null || continue
    [ "$t" = "RoCE v2" ] && { _rdma_lab_gi=$i; return 0; }
  done
}

_rdma_lab_checks() {
  [ "$(id -u)" = 0 ] || _rdma_lab_die "needs root"
  command -v ip >/dev/null || _rdma_lab_die "no ip (apt-get install iproute2)"
  command -v rdma >/dev/null || _rdma_lab_die "no rdma (apt-get install iproute2)"
  # rxe works in the initial network namespace only (see above).
  [ "$(readlink /proc/self/ns/net)" = "$(readlink /proc/1/ns/net)" ] ||
    _rdma_lab_die "run me in the initial network namespace: rxe on this kernel uses init_net only"
}

_rdma_lab_down() {
  local i cmds=
  for i in 0 1; do
    [ -e "/sys/class/infiniband/${_rdma_lab_dev[$i]}" ] && cmds+="link delete ${_rdma_lab_dev[$i]}"$'\n'
  done
  if [ -n "$cmds" ]; then
    rdma -f -b - <<< "$cmds" || _rdma_lab_log "cannot delete an rxe device"
  fi
  # What is not there fails, quietly; then the local table's rule is put back at preference 0
  # (first), and ours at 1000 removed (twice: an interrupted `up` may have left two).
  cmds="link delete ${_rdma_lab_netdev[0]}"$'\n'"link delete ${_rdma_lab_netdev[1]}"$'\n'
  for i in 0 1; do
    cmds+="rule delete pref ${_rdma_lab_pref[$i]}"$'\n'"rule delete pref ${_rdma_lab_pref[$i]}"$'\n'
    cmds+="route flush table ${_rdma_lab_table[$i]}"$'\n'
  done
  cmds+="rule add pref 0 lookup local"$'\n'
  cmds+="rule delete pref $_rdma_lab_local_pref lookup local"$'\n'"rule delete pref $_rdma_lab_local_pref lookup local"$'\n'
  ip -force -batch - <<< "$cmds" >/dev/null 2>&1
  # Leaving two "pref 0 lookup local" rules is harmless; leaving none is not.
  [[ $(ip rule show pref 0) == *"lookup local"* ]] || _rdma_lab_die "no rule for the local table at preference 0"
  for i in 0 1; do
    [ -e "/sys/class/infiniband/${_rdma_lab_dev[$i]}" ] && _rdma_lab_die "${_rdma_lab_dev[$i]} is still there"
    [ -e "/sys/class/net/${_rdma_lab_netdev[$i]}" ] && _rdma_lab_die "${_rdma_lab_netdev[$i]} is still there"
  done
  return 0
}

_rdma_lab_show() {
  local i gi
  for i in 0 1; do
    [ -e "/sys/class/infiniband/${_rdma_lab_dev[$i]}" ] || _rdma_lab_die "no ${_rdma_lab_dev[$i]}: is the lab up?"
    _rdma_lab_gid_index "${_rdma_lab_dev[$i]}" "${_rdma_lab_ip[$i]}"
    gi=$_rdma_lab_gi
    [ -n "$gi" ] || _rdma_lab_die "${_rdma_lab_dev[$i]} has no RoCE v2 GID for ${_rdma_lab_ip[$i]}"
    echo "NDQ_RDMA_DEV$i=${_rdma_lab_dev[$i]}"
    echo "NDQ_RDMA_NETDEV$i=${_rdma_lab_netdev[$i]}"
    echo "NDQ_RDMA_IP$i=${_rdma_lab_ip[$i]}"
    echo "NDQ_RDMA_GID_INDEX$i=$gi"
    echo "NDQ_RDMA_GID$i=::ffff:${_rdma_lab_ip[$i]}"
  done
}

_rdma_lab_up() {
  local i o n a b cmds out g0
  _rdma_lab_down
  a=${_rdma_lab_netdev[0]} b=${_rdma_lab_netdev[1]}
  cmds="link add $a type veth peer name $b"$'\n'
  for i in 0 1; do
    o=$((1 - i))
    n=${_rdma_lab_netdev[$i]}
    cmds+="addr add ${_rdma_lab_ip[$i]}/24 dev $n"$'\n'"link set $n up"$'\n'
    # traffic leaving through n for the other end's address goes on the wire
    cmds+="route add ${_rdma_lab_ip[$o]} dev $n src ${_rdma_lab_ip[$i]} table ${_rdma_lab_table[$i]}"$'\n'
    cmds+="rule add pref ${_rdma_lab_pref[$i]} oif $n lookup ${_rdma_lab_table[$i]}"$'\n'
  done
  cmds+="rule add pref $_rdma_lab_local_pref lookup local"$'\n'"rule delete pref 0 lookup local"$'\n'
  cmds+="route get ${_rdma_lab_ip[1]} oif $a"$'\n'"route get ${_rdma_lab_ip[0]} oif $b"$'\n'
  out=$(ip -batch - <<< "$cmds" 2>&1) || _rdma_lab_die "ip -batch failed: $out"
  # ip route get: through the veth, not local
  [[ $out == *"${_rdma_lab_ip[1]} dev $a "*"${_rdma_lab_ip[0]} dev $b "* ]] ||
    _rdma_lab_die "the veth ends' addresses do not route through the veth: $out"
  for n in "$a" "$b"; do
    # A packet from an address of this host arriving on n is let in (by default it is a martian).
    { echo 1 > "/proc/sys/net/ipv4/conf/$n/accept_local" && echo 0 > "/proc/sys/net/ipv4/conf/$n/rp_filter"; } ||
      _rdma_lab_die "cannot set accept_local / rp_filter on $n"
  done
  # (rp_filter takes the larger of all/ and the device's; the guest's all/ is 0)
  read -r n < /proc/sys/net/ipv4/conf/all/rp_filter
  [ "$n" = 0 ] || _rdma_lab_log "warning: net.ipv4.conf.all.rp_filter is $n, not 0: the veth ends may drop each other's packets"
  out=$(rdma -b - 2>&1 <<< "link add ${_rdma_lab_dev[0]} type rxe netdev $a
link add ${_rdma_lab_dev[1]} type rxe netdev $b") ||
    _rdma_lab_die "cannot add the rxe devices ${_rdma_lab_dev[*]} (rdma_rxe loaded?): $out"
  # ib_core fills the GID tables from the netdevs' addresses in a work queue: wait (10 s at most).
  for ((n = 0; n < 100; n++)); do
    _rdma_lab_gid_index "${_rdma_lab_dev[0]}" "${_rdma_lab_ip[0]}"
    g0=$_rdma_lab_gi
    _rdma_lab_gid_index "${_rdma_lab_dev[1]}" "${_rdma_lab_ip[1]}"
    [ -n "$g0" ] && [ -n "$_rdma_lab_gi" ] && break
    sleep 0.1
  done
  # Both ways through the wire (also fills the neighbour tables before any RDMA traffic).
  if command -v ping >/dev/null; then
    for i in 0 1; do
      o=$((1 - i))
      ping -q -c 1 -W 5 -I "${_rdma_lab_netdev[$i]}" "${_rdma_lab_ip[$o]}" >/dev/null ||
        _rdma_lab_die "no ping from ${_rdma_lab_netdev[$i]} to ${_rdma_lab_ip[$o]}"
    done
  fi
  _rdma_lab_show
  _rdma_lab_log "up: ${_rdma_lab_dev[0]} on $a (${_rdma_lab_ip[0]}) <-> ${_rdma_lab_dev[1]} on $b (${_rdma_lab_ip[1]})"
}

_rdma_lab_main() {
  case ${1:-} in
    up) _rdma_lab_checks; _rdma_lab_up ;;
    down) _rdma_lab_checks; _rdma_lab_down ;;
    show) _rdma_lab_show ;;
    *) echo "usage: rdma-lab.sh up|show|down" >&2; return 2 ;;
  esac
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  rdma_lab() { (_rdma_lab_main "$@"); }
else
  set -uo pipefail
  _rdma_lab_main "$@"
fi
