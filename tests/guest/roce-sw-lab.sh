#!/usr/bin/env bash
# A Soft-RoCE (rdma_rxe) device facing netdaq's software RoCE path across a veth pair, for the
# interop tests of the QEMU guest (tests/guest/roce-sw-check.sh). As root, in the guest:
#
#   roce-sw-lab.sh up          removes what an earlier lab left, builds one, prints its
#                              variables (eval "$(roce-sw-lab.sh up)"); messages go to stderr
#   roce-sw-lab.sh drop P      from now on P % of the packets rxe sends are lost on the wire
#                              (netem; each counted); P=0 stops it
#   roce-sw-lab.sh dropped     prints how many packets netem dropped
#   roce-sw-lab.sh down        removes it all; exit 0 when nothing is left
#
#   NDQ_ROCE_DEV=rxe_roce  NDQ_ROCE_GID_INDEX=<i>  NDQ_ROCE_NS=ndq-roce
#   NDQ_ROCE_NETDEV_A=ndq-roce-a (rxe's, initial namespace, 10.78.0.1)
#   NDQ_ROCE_NETDEV_B=ndq-roce-b (netdaq's, in namespace ndq-roce, 10.78.0.2)
#   NDQ_ROCE_IP_A / NDQ_ROCE_IP_B, NDQ_ROCE_MAC_A / NDQ_ROCE_MAC_B
#
# rxe stays in the initial namespace (on 6.1 it opens its UDP socket and looks its routes up
# there only: tests/guest/rdma-lab.sh); netdaq's end is in a namespace of its own, where no
# rxe listens on UDP 4791, so every RoCE packet for 10.78.0.2 reaches netdaq and nothing else.
set -uo pipefail
ns=ndq-roce
a=ndq-roce-a
b=ndq-roce-b
ip_a=10.78.0.1
ip_b=10.78.0.2
dev=rxe_roce

log() { echo "roce-sw-lab: $*" >&2; }
die() { log "$*"; exit 1; }

# Sets gi to the index of dev's RoCE v2 GID for IPv4 ip_a (bash builtins: a process costs
# ~0.4 s in the TCG guest).
gid_index() {
  local path=/sys/class/infiniband/$dev/ports/1 want g t i
  local -a o
  IFS=. read -r -a o <<< "$ip_a"
  printf -v want '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${o[0]}" "${o[1]}" "${o[2]}" "${o[3]}"
  gi=
  for ((i = 0; ; i++)); do
    [ -e "$path/gids/$i" ] || return 0
    read -r g < "$path/gids/$i" || continue
    [ "$g" = "$want" ] || continue
    read -r t < "$path/gid_attrs/types/$i" 2>/dev/null || continue
    [ "$t" = "RoCE v2" ] && { gi=$i; return 0; }
  done
}

down() {
  [ -e /sys/class/infiniband/$dev ] && { rdma link delete $dev || log "cannot delete $dev"; }
  ip link delete $a 2>/dev/null
  ip netns delete $ns 2>/dev/null
  [ -e /sys/class/infiniband/$dev ] && die "$dev is still there"
  [ -e /sys/class/net/$a ] && die "$a is still there"
  [ -e /run/netns/$ns ] && die "namespace $ns is still there"
  return 0
}

show() {
  local mac_a mac_b
  [ -e /sys/class/infiniband/$dev ] || die "no $dev: is the lab up?"
  gid_index
  [ -n "$gi" ] || die "$dev has no RoCE v2 GID for $ip_a"
  read -r mac_a < /sys/class/net/$a/address
  mac_b=$(ip -n $ns -br link show $b | awk '{print $3}')
  echo "NDQ_ROCE_DEV=$dev"
  echo "NDQ_ROCE_GID_INDEX=$gi"
  echo "NDQ_ROCE_NS=$ns"
  echo "NDQ_ROCE_NETDEV_A=$a"
  echo "NDQ_ROCE_NETDEV_B=$b"
  echo "NDQ_ROCE_IP_A=$ip_a"
  echo "NDQ_ROCE_IP_B=$ip_b"
  echo "NDQ_ROCE_MAC_A=$mac_a"
  echo "NDQ_ROCE_MAC_B=$mac_b"
}

up() {
  local out n
  down
  out=$(ip -batch - 2>&1 <<EOF
netns add $ns
link add $a type veth peer name $b netns $ns
EOF
) || die "ip -batch failed: $out"
  # No IPv6 on the veth: its router solicitations and MLD reports would cross netem too
  # (drop counts that are not RoCE packets). rxe's IPv4 GID does not need it.
  echo 1 > /proc/sys/net/ipv6/conf/$a/disable_ipv6 &&
    ip netns exec $ns sh -c "echo 1 > /proc/sys/net/ipv6/conf/$b/disable_ipv6" || die "cannot disable IPv6 on the veth"
  out=$(ip -batch - 2>&1 <<EOF
addr add $ip_a/24 dev $a
link set $a up
netns exec $ns ip addr add $ip_b/24 dev $b
netns exec $ns ip link set $b up
netns exec $ns ip link set lo up
EOF
) || die "ip -batch failed: $out"
  out=$(rdma link add $dev type rxe netdev $a 2>&1) || die "cannot add $dev on $a (rdma_rxe loaded?): $out"
  # ib_core fills the GID table from the netdev's addresses in a work queue: wait (10 s at most).
  for ((n = 0; n < 100; n++)); do
    gid_index
    [ -n "$gi" ] && break
    sleep 0.1
  done
  [ -n "$gi" ] || die "$dev has no RoCE v2 GID for $ip_a after 10 s"
  # Both ways (fills the neighbour tables before any RoCE traffic: rxe and netdaq's senders
  # need the other end's MAC).
  ping -q -c 1 -W 5 $ip_b >/dev/null || die "no ping from $a to $ip_b"
  ip netns exec $ns ping -q -c 1 -W 5 $ip_a >/dev/null || die "no ping from $b to $ip_a"
  # ... and kept: no ARP crosses netem later (only RoCE packets are lost, and counted).
  local mac_a mac_b
  read -r mac_a < /sys/class/net/$a/address
  mac_b=$(ip -n $ns -br link show $b | awk '{print $3}')
  ip neigh replace $ip_b lladdr "$mac_b" dev $a nud permanent &&
    ip -n $ns neigh replace $ip_a lladdr "$mac_a" dev $b nud permanent || die "cannot pin the neighbour entries"
  show
  log "up: $dev on $a ($ip_a) <-> $b ($ip_b, namespace $ns)"
}

# Packets rxe sends are lost on the wire: netem on a drops PERCENT % of them (0: none) and
# counts each. (Not a tc drop action: rxe sees that drop and sends the packet again; netem's
# look sent.) Only RoCE crosses the veth while it is on (the neighbour entries are there).
drop() {
  local percent=$1
  tc qdisc delete dev $a root 2>/dev/null
  [ "$percent" = 0 ] && return 0
  tc qdisc add dev $a root netem loss "$percent%" || die "cannot add netem on $a (sch_netem loaded?)"
}

dropped() {
  # "Sent B bytes P pkt (dropped D, overlimits ...)"
  local out
  out=$(tc -s qdisc show dev $a root 2>/dev/null)
  [[ $out =~ dropped\ ([0-9]+) ]] || die "no drop statistics on $a: $out"
  echo "${BASH_REMATCH[1]}"
}

[ "$(id -u)" = 0 ] || die "needs root"
case ${1:-} in
  up) up ;;
  show) show ;;
  down) down ;;
  drop) drop "${2:?every how many packets}" ;;
  dropped) dropped ;;
  *) echo "usage: roce-sw-lab.sh up|show|drop N|dropped|down" >&2; exit 2 ;;
esac
