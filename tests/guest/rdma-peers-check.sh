#!/usr/bin/env bash
# Proof that RDMA works for real in the guest of run-in-guest.sh, with rdma-core's and
# perftest's own tools (no netdaq code): brings up rdma-lab.sh (two rxe devices over a veth
# pair), runs each tool's server on rxe_ndq1 (10.77.0.2) and its client on rxe_ndq0
# (10.77.0.1), and prints one PASS/FAIL line per tool. A tool passes when both sides exit 0
# and both rxe devices sent and received packets while it ran (so the traffic crossed the
# veth: an rxe loopback moves one device's counters only). Then pyverbs opens a device and
# queries its port. Every run is bounded (iterations, and `timeout` per side); the lab is
# always torn down. Exit 0 when all passed, 1 when any failed, 77 (skip) when a tool is
# missing, 1 then too with CI=true. As root, in the guest:
#   tests/guest/run-in-guest.sh --cache build/guest -- tests/guest/rdma-peers-check.sh
# NDQ_RDMA_CHECK_TIMEOUT: seconds per tool run (default 60).
#   rdma-peers-check.sh -- COMMAND [ARG...]
# then runs COMMAND in the same lab (one guest boot for the tools and netdaq's own RDMA
# tests), with the lab's NDQ_RDMA_* variables exported; its failure fails the check.
. "$(dirname "$0")/../../scripts/lib/ci.sh"  # netdaq_in_ci
set -uo pipefail
then_run=()
if [ "${1:-}" = -- ]; then shift; then_run=("$@"); fi
here=$(cd "$(dirname "$0")" && pwd)
lab=$here/rdma-lab.sh
limit=${NDQ_RDMA_CHECK_TIMEOUT:-60}

missing=()
command -v ip >/dev/null || missing+=("ip (apt-get install iproute2)")
command -v rdma >/dev/null || missing+=("rdma (apt-get install iproute2)")
command -v ping >/dev/null || missing+=("ping (apt-get install iputils-ping)")
command -v ibv_rc_pingpong >/dev/null || missing+=("ibv_rc_pingpong (apt-get install ibverbs-utils)")
command -v ibv_uc_pingpong >/dev/null || missing+=("ibv_uc_pingpong (apt-get install ibverbs-utils)")
command -v rping >/dev/null || missing+=("rping (apt-get install rdmacm-utils)")
command -v ib_send_bw >/dev/null || missing+=("ib_send_bw (apt-get install perftest)")
command -v ib_write_bw >/dev/null || missing+=("ib_write_bw (apt-get install perftest)")
# Debian's python3 (a python3 earlier in PATH, e.g. pyenv's, lacks Debian's pyverbs)
py=/usr/bin/python3
pyverbs=(/usr/lib/python3/dist-packages/pyverbs/device.*.so)
{ [ -x "$py" ] && [ -e "${pyverbs[0]}" ]; } || missing+=("pyverbs (apt-get install python3-pyverbs)")
if [ ${#missing[@]} -gt 0 ]; then
  echo "rdma-peers-check: missing ${missing[*]}; scripts/install-deps.sh installs them" >&2
  netdaq_in_ci && exit 1
  exit 77
fi
[ "$(id -u)" = 0 ] || { echo "rdma-peers-check: needs root (run it through tests/guest/run-in-guest.sh)" >&2; exit 1; }

# (bash builtins where a loop would run a process: one costs ~0.4 s in the TCG guest)
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
logs=$(mktemp -d /tmp/rdma-peers-check.XXXXXX)
teardown() {
  "$lab" down || echo "rdma-peers-check: FAIL teardown (rdma-lab.sh down)"
  rm -rf "$logs"
}
trap teardown EXIT
trap 'exit 130' INT TERM

t0=$(now_ms)
lab_out=$("$lab" up) || { echo "rdma-peers-check: FAIL rdma-lab.sh up"; exit 1; }
eval "$lab_out"
echo "rdma-peers-check: lab up in $(($(now_ms) - t0)) ms:" $lab_out

failed=()
# sent_pkts and rcvd_pkts of both rxe devices' port 1 (what `rdma statistic` shows), one line.
counters() {
  local d c v line=
  for d in "$NDQ_RDMA_DEV0" "$NDQ_RDMA_DEV1"; do
    for c in sent_pkts rcvd_pkts; do
      read -r v < "/sys/class/infiniband/$d/ports/1/hw_counters/$c" || v=0
      line+="$v "
    done
  done
  echo "$line"
}
# A TCP port listening (perftest and the ibv pingpongs exchange QP numbers over TCP first).
tcp_listening() {
  local hex f local_addr st _
  printf -v hex ':%04X' "$1"
  for f in /proc/net/tcp /proc/net/tcp6; do
    while read -r _ local_addr _ st _; do
      [[ $local_addr == *"$hex" && $st == 0A ]] && return 0
    done < "$f"
  done
  return 1
}
# An rdma_cm id listening on ADDR:PORT (rping's server).
cm_listening() { [[ $(rdma resource show cm_id 2>/dev/null) == *"state LISTEN "*"src-addr $1:$2 "* ]]; }
# The last line of FILE matching the bash regex RE.
last_match() { local l m=; while IFS= read -r l; do [[ $l =~ $2 ]] && m=$l; done < "$1"; echo "$m"; }

# peer NAME WAIT_CMD SUMMARY -- SERVER_CMD... -- CLIENT_CMD...: runs the server, waits (10 s
# at most) until WAIT_CMD says it listens, runs the client, both under `timeout`; SUMMARY: a
# regex for the client's line to quote.
peer() {
  local name=$1 wait_cmd=$2 summary=$3 server=() client=() spid src crc before after i start ms moved traffic quote
  shift 3
  [ "${1:-}" = -- ] || { echo "peer $name: no --" >&2; exit 2; }
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do server+=("$1"); shift; done
  shift
  client=("$@")
  read -r -a before <<< "$(counters)"
  start=$(now_ms)
  timeout -k 5 "$limit" "${server[@]}" > "$logs/$name.server" 2>&1 &
  spid=$!
  for ((i = 0; i < 100; i++)); do
    eval "$wait_cmd" && break
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.1
  done
  timeout -k 5 "$limit" "${client[@]}" > "$logs/$name.client" 2>&1
  crc=$?
  [ "$crc" = 0 ] || kill "$spid" 2>/dev/null
  wait "$spid"
  src=$?
  ms=$(($(now_ms) - start))
  read -r -a after <<< "$(counters)"
  moved=1
  for i in 0 1 2 3; do [ "${after[$i]:-0}" -gt "${before[$i]:-0}" ] || moved=0; done
  traffic="$NDQ_RDMA_DEV0 sent/rcvd $((after[0] - before[0]))/$((after[1] - before[1])) pkts, $NDQ_RDMA_DEV1 $((after[2] - before[2]))/$((after[3] - before[3]))"
  if [ "$src" = 0 ] && [ "$crc" = 0 ] && [ "$moved" = 1 ]; then
    read -r -a quote <<< "$(last_match "$logs/$name.client" "$summary")"
    echo "rdma-peers-check: PASS $name (${ms} ms; $traffic; ${quote[*]})"
  else
    echo "rdma-peers-check: FAIL $name (server status $src, client status $crc, ${ms} ms; $traffic)"
    for i in server client; do sed "s/^/  $i: /" "$logs/$name.$i" | tail -25; done
    failed+=("$name")
  fi
}

d0=$NDQ_RDMA_DEV0 g0=$NDQ_RDMA_GID_INDEX0 d1=$NDQ_RDMA_DEV1 g1=$NDQ_RDMA_GID_INDEX1 ip1=$NDQ_RDMA_IP1 ip0=$NDQ_RDMA_IP0

peer ibv_rc_pingpong "tcp_listening 18515" 'iters in' \
  -- ibv_rc_pingpong -d "$d1" -g "$g1" -n 100 -p 18515 \
  -- ibv_rc_pingpong -d "$d0" -g "$g0" -n 100 -p 18515 "$ip1"
peer ibv_uc_pingpong "tcp_listening 18516" 'iters in' \
  -- ibv_uc_pingpong -d "$d1" -g "$g1" -n 100 -p 18516 \
  -- ibv_uc_pingpong -d "$d0" -g "$g0" -n 100 -p 18516 "$ip1"
# (the active side binds its own address: see rdma-lab.sh)
peer rping "cm_listening $ip1 7174" 'ping data: rdma-ping-9:' \
  -- rping -s -a "$ip1" -p 7174 -C 10 -v \
  -- rping -c -a "$ip1" -I "$ip0" -p 7174 -C 10 -v
peer ib_send_bw "tcp_listening 18600" '^ *4096 +1000 ' \
  -- ib_send_bw -d "$d1" -x "$g1" -n 1000 -s 4096 -F -p 18600 \
  -- ib_send_bw -d "$d0" -x "$g0" -n 1000 -s 4096 -F -p 18600 "$ip1"
peer ib_write_bw "tcp_listening 18601" '^ *4096 +1000 ' \
  -- ib_write_bw -d "$d1" -x "$g1" -n 1000 -s 4096 -F -p 18601 \
  -- ib_write_bw -d "$d0" -x "$g0" -n 1000 -s 4096 -F -p 18601 "$ip1"

# pyverbs: open the device, query its port (active, the IPv4 GID at the lab's index). And, not
# a requirement but a fact to know: does this kernel's rxe take dma-buf memory regions?
IFS=. read -r -a o <<< "$ip0"
printf -v want_gid '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${o[0]}" "${o[1]}" "${o[2]}" "${o[3]}"
pyverbs_check='
import ctypes, errno, os, sys
import pyverbs.device as d, pyverbs.enums as e
name, gid_index, want_gid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
c = d.Context(name=name)
p = c.query_port(1)
g = str(c.query_gid(1, gid_index))
ok = p.state == e.IBV_PORT_ACTIVE and g == want_gid
print("%s pyverbs (port state %d active_mtu %d max_msg_sz %d gid[%d] %s)"
      % ("PASS" if ok else "FAIL", p.state, p.active_mtu, p.max_msg_sz, gid_index, g))
v = ctypes.CDLL("libibverbs.so.1", use_errno=True)
P = ctypes.c_void_p
v.ibv_get_device_list.restype = ctypes.POINTER(P)
v.ibv_get_device_name.restype, v.ibv_get_device_name.argtypes = ctypes.c_char_p, [P]
v.ibv_open_device.restype, v.ibv_open_device.argtypes = P, [P]
v.ibv_alloc_pd.restype, v.ibv_alloc_pd.argtypes = P, [P]
v.ibv_reg_dmabuf_mr.restype = P
v.ibv_reg_dmabuf_mr.argtypes = [P, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_int, ctypes.c_int]
n = ctypes.c_int()
devs = v.ibv_get_device_list(ctypes.byref(n))
dev = next(devs[i] for i in range(n.value) if v.ibv_get_device_name(devs[i]) == name.encode())
pd = v.ibv_alloc_pd(v.ibv_open_device(dev))
fd = os.memfd_create("not-a-dmabuf")  # a device that took dma-bufs would say EINVAL or EBADF
os.ftruncate(fd, 4096)
mr = v.ibv_reg_dmabuf_mr(pd, 0, 4096, 0, fd, 1)
err = ctypes.get_errno()
print("INFO ibv_reg_dmabuf_mr on %s: %s" % (name, "refused: %s (%s)"
      % (errno.errorcode.get(err, err), os.strerror(err)) if not mr else "accepted a memfd?"))
sys.exit(0 if ok else 1)
'
out=$(timeout -k 5 "$limit" "$py" -c "$pyverbs_check" "$d0" "$g0" "$want_gid" 2>&1)
rc=$?
echo "$out" | sed 's/^/rdma-peers-check: /'
if [ "$rc" != 0 ] || [[ $out != *"PASS pyverbs"* ]]; then
  echo "rdma-peers-check: FAIL pyverbs (status $rc)"
  failed+=(pyverbs)
fi

if [ ${#then_run[@]} -gt 0 ]; then
  export NDQ_RDMA_DEV0 NDQ_RDMA_DEV1 NDQ_RDMA_NETDEV0 NDQ_RDMA_NETDEV1 NDQ_RDMA_IP0 NDQ_RDMA_IP1 \
         NDQ_RDMA_GID_INDEX0 NDQ_RDMA_GID_INDEX1 NDQ_RDMA_GID0 NDQ_RDMA_GID1
  echo "rdma-peers-check: running ${then_run[*]}"
  "${then_run[@]}"
  rc=$?
  [ "$rc" = 0 ] || { echo "rdma-peers-check: FAIL ${then_run[0]##*/} (status $rc)"; failed+=("${then_run[0]##*/}"); }
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "rdma-peers-check: FAILED: ${failed[*]}"
  exit 1
fi
echo "rdma-peers-check: all passed in $(($(now_ms) - t0)) ms"
exit 0
