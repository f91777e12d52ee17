#!/usr/bin/env bash
# Anchor (c) of bench/roce_sw.md (issue 32 item 4): the rdma engine on the kernel's Soft-RoCE
# (rdma_rxe) receiving the stream netdaq's RoCEv2 sensor emulator sends, against (s) netdaq's
# software RoCE receive of the same stream on the same veth, in the QEMU guest
# (tests/guest/run-in-guest.sh: Debian's stock kernel has rdma_rxe). bench/roce_sw_rxe.md has the
# method, the figures and what they mean.
#
#   bench/roce_sw_guest.sh --host [--cache DIR] [--timeout S] [--json PATH] [-- GUEST_OPTIONS]
#       on the dev VM: builds netdaq, boots the guest once, runs the guest part there and
#       writes its JSON to PATH (default bench/results/roce-sw-rxe-<date>.json)
#   bench/roce_sw_guest.sh OUTDIR [--cli PATH] [--payloads 1024,2048,4096] [--packets N]
#       [--frame-packets P] [--max-seconds S] [--rounds R]
#       in the guest, as root: writes OUTDIR/roce-sw-rxe.json and prints it between
#       ROCE_SW_RXE_JSON_BEGIN / _END lines (the guest's /tmp is not the host's)
#
# One run, per payload size: the lab of tests/guest/roce-sw-lab.sh (sourced: rxe_roce on
# ndq-roce-a in the initial namespace, ndq-roce-b in namespace ndq-roce); `netdaq roce-send`
# (afxdp tx raw frames, UC WRITE ONLY, the frame's last packet with immediate) from ndq-roce-b
# on CPU 0 sends N packets to
#   (c) `netdaq run` of the rdma engine (UC, write_imm, connect manual) on rxe_roce, CPU 1;
#       the veth's receive path (IP, UDP, rxe) steered to CPU 1 by RPS;
#   (s) `netdaq roce-recv` (afxdp on ndq-roce-a, reorder mode roce, check_icrc, frames: host,
#       every byte checked against the sensor pattern), CPU 1.
# R rounds (default 3), (c) then (s) in each; medians. Counted per case, over the window from
# the first packet on the veth to the receiver's last one (marked with bash builtins only): packets/s at the receiver, and the
# receiver's CPU = CPU 1's busy time (user + nice + system + irq + softirq + steal from
# /proc/stat: the receiving process and the kernel's receive work that RPS put there) + CPU 0's
# softirq time (receive work that ran on the sender's CPU: veth's XDP for (s)); the receiving
# process's own utime+stime (/proc/PID/stat) and the softirq shown apart. Every loop and wait
# is bounded.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

if [ "${1:-}" = --host ]; then
  shift
  cache=$root/build/guest limit=900 json=$root/bench/results/roce-sw-rxe-$(date +%F).json
  while [ $# -gt 0 ]; do
    case $1 in
      --cache) cache=$2; shift 2 ;;
      --timeout) limit=$2; shift 2 ;;
      --json) json=$2; shift 2 ;;
      --) shift; break ;;
      *) echo "roce_sw_guest: unknown option $1" >&2; exit 2 ;;
    esac
  done
  cd "$root" || exit 1
  flock /tmp/ndq-build.lock cmake --build build --target netdaq_cli || exit 1
  log=$(mktemp /tmp/roce-sw-rxe.XXXXXX.log)
  tests/guest/run-in-guest.sh --cache "$cache" --timeout "$limit" -- \
    "$root/bench/roce_sw_guest.sh" /tmp/roce-sw-rxe --cli "$root/build/tools/netdaq/netdaq" "$@" | tee "$log"
  rc=${PIPESTATUS[0]}
  sed -n '/^ROCE_SW_RXE_JSON_BEGIN$/,/^ROCE_SW_RXE_JSON_END$/p' "$log" | sed '1d;$d' > "$json.tmp"
  if [ -s "$json.tmp" ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$json.tmp"; then
    mv "$json.tmp" "$json"
    echo "roce_sw_guest: wrote $json (console log $log)"
  else
    rm -f "$json.tmp"
    echo "roce_sw_guest: no JSON came out of the guest (console log $log)" >&2
    [ "$rc" = 0 ] && rc=1
  fi
  exit "$rc"
fi

# ---- in the guest ----
out=${1:?usage: roce_sw_guest.sh OUTDIR [options] | --host [...]}
shift
cli=$root/build/tools/netdaq/netdaq
payloads=1024,2048,4096
packets=32768       # per case: sent once to (c), once to (s)
frame_packets=64    # packets per frame (HSB-style: WRITE ONLY each, the last with immediate)
max_seconds=90      # per case: the sender's and the receiver's time limit
rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    --cli) cli=$2; shift 2 ;;
    --payloads) payloads=$2; shift 2 ;;
    --packets) packets=$2; shift 2 ;;
    --frame-packets) frame_packets=$2; shift 2 ;;
    --max-seconds) max_seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "roce_sw_guest: unknown option $1" >&2; exit 2 ;;
  esac
done
py=/usr/bin/python3
lab=$root/tests/guest/roce-sw-lab.sh
mkdir -p "$out" || exit 1
work=$(mktemp -d /tmp/roce-sw-rxe.XXXXXX)
pids=()
say() { echo "roce_sw_guest: $*" >&2; }

# The lab's functions (up, down, drop, dropped, show) and variables, by sourcing it: `up` runs
# as it does from roce-sw-check.sh and prints NDQ_ROCE_* (kept in a file, read back below).
# Its own globals are ns, a, b, ip_a, ip_b, dev, gi: none of this script's names.
# shellcheck source=../tests/guest/roce-sw-lab.sh
. "$lab" up > "$work/lab.env" || { say "roce-sw-lab.sh up failed"; exit 1; }
. "$work/lab.env"
cat "$work/lab.env" >&2

cleanup() {
  local p
  for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null; done
  for p in ${pids[@]+"${pids[@]}"}; do wait "$p" 2>/dev/null; done
  down || say "FAIL teardown (roce-sw-lab.sh down)"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || { say "needs 2 CPUs in the guest, has $ncpu"; exit 1; }
sender_cpu=0 recv_cpu=1
# This script (its snapshots spawn processes) stays off the receiver's CPU.
taskset -p -c $sender_cpu $$ > /dev/null || say "cannot pin this script to CPU $sender_cpu"

# /proc/stat's line of CPU c: user nice system idle iowait irq softirq steal (USER_HZ ticks).
cpu_line() { local l; while read -r l; do [[ $l == "cpu$1 "* ]] && { echo "${l#cpu$1 }"; return; }; done < /proc/stat; }
# utime stime of a process (ticks).
proc_times() { local s; s=$(< "/proc/$1/stat") || return 1; s=${s##*) }; set -- $s; echo "${12} ${13}"; }
# rxe's rcvd_pkts from sysfs, into rcvd (no process: the wait for the last packet polls it).
rxe_rcvd() { read -r rcvd < "/sys/class/infiniband/$NDQ_ROCE_DEV/ports/1/hw_counters/rcvd_pkts"; }
rxe_counter() { local o; o=$(rdma statistic show link "$NDQ_ROCE_DEV/1"); [[ $o =~ \ $1\ ([0-9]+) ]] && echo "${BASH_REMATCH[1]}" || echo 0; }
netdev_stat() { local n; read -r n < "/sys/class/net/$NDQ_ROCE_NETDEV_A/statistics/$1"; echo "$n"; }
# Packets the kernel's backlog queues dropped (softnet_stat's 2nd column, hex, all CPUs).
softnet_drops() { local t=0 l; local -a f; while read -r -a f; do t=$((t + 16#${f[1]})); done < /proc/net/softnet_stat; echo $t; }
udp_errors() { awk '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) k[i] = $i; h = 1 } else for (i = 1; i <= NF; i++) if (k[i] == "InErrors" || k[i] == "RcvbufErrors" || k[i] == "NoPorts") s += $i } END { print s + 0 }' /proc/net/snmp; }
# Every veth drop counter ethtool shows (XDP drops, redirect errors, ...), summed.
veth_xdp_drops() { ethtool -S "$NDQ_ROCE_NETDEV_A" 2>/dev/null | awk -F: '$1 ~ /drop|err/ { s += $2 } END { print s + 0 }'; }

# The counters, as key=value lines (spawns processes: taken outside the timed window).
snapshot() {  # FILE
  {
    echo "rxe_rcvd=$(rxe_counter rcvd_pkts)"
    echo "rxe_seq_err=$(rxe_counter rcvd_seq_err)"
    echo "rxe_dup=$(rxe_counter duplicate_request)"
    echo "rxe_oos=$(rxe_counter out_of_seq_request)"
    echo "veth_rx=$(netdev_stat rx_packets)"
    echo "veth_rx_dropped=$(netdev_stat rx_dropped)"
    echo "veth_xdp_drops=$(veth_xdp_drops)"
    echo "softnet_drops=$(softnet_drops)"
    echo "udp_errors=$(udp_errors)"
  } > "$1"
}

# The clock, both CPUs' /proc/stat lines and the receiver's utime+stime, with bash builtins
# only (no process: it marks the window's ends).
mark() {  # FILE RECV_PID
  local l st out
  out="t_ns=${EPOCHREALTIME/./}000"$'\n'
  while read -r l; do
    [[ $l == "cpu$recv_cpu "* ]] && out+="cpu_recv=${l#cpu$recv_cpu }"$'\n'
    [[ $l == "cpu$sender_cpu "* ]] && out+="cpu_send=${l#cpu$sender_cpu }"$'\n'
  done < /proc/stat
  if read -r st 2>/dev/null < "/proc/$2/stat"; then
    st=${st##*) }
    read -r -a l <<< "$st"
    out+="proc=${l[11]} ${l[12]}"$'\n'
  else
    out+="proc=gone"$'\n'
  fi
  printf '%s' "$out" > "$1"
}

# 2 ms of sleep without a process (a read from a FIFO nobody writes): the waits in the timed
# window must not take the sender's CPU.
mkfifo "$work/never" && exec {never_fd}<>"$work/never" || exit 1
nap() { read -r -t 0.002 -u "$never_fd" _; }

# Starts the sender (background, sets send_pid) and marks the window's start at its first
# packet on the veth (a builtin spin, bounded by max_seconds).
start_sender() {  # DIR PEER_FILE PAYLOAD RECV_PID
  local base now deadline=$((${EPOCHREALTIME%.*} + max_seconds))
  read -r base < "/sys/class/net/$NDQ_ROCE_NETDEV_A/statistics/rx_packets"
  send "$1" "$2" "$3" &
  send_pid=$!
  while :; do
    read -r now < "/sys/class/net/$NDQ_ROCE_NETDEV_A/statistics/rx_packets"
    [ "$now" != "$base" ] && break
    [ "${EPOCHREALTIME%.*}" -ge "$deadline" ] && break
    kill -0 "$send_pid" 2>/dev/null || break
    nap
  done
  mark "$1/start" "$4"
}

tx_config() {  # FILE CHUNK
  cat > "$1" <<EOF
memory_regions:
  - {name: umem, kind: host, buf_size: $2, num_bufs: 8192}
interfaces:
  - name: sensor
    engine: afxdp
    address: $NDQ_ROCE_NETDEV_B
    tx:
      queues:
        - {id: 0, batch_size: 64, memory_regions: [umem]}
    afxdp: {tx_raw_frames: true}
EOF
}

# The sender, on CPU 0, in the namespace: N packets to the peer file's rx[0], bounded in time.
send() {  # DIR PEER_FILE PAYLOAD
  local d=$1 frames=$((packets / frame_packets))
  timeout "$max_seconds" taskset -c $sender_cpu ip netns exec "$NDQ_ROCE_NS" "$cli" roce-send "$d/tx.yaml" --peer "$2" \
    --frames "$frames" --frame-bytes $(($3 * frame_packets)) --op only --mtu "$3" \
    --dst-mac "$NDQ_ROCE_MAC_A" --src-ip "$NDQ_ROCE_IP_B" --json > "$d/send.json" 2> "$d/send.log"
}

wait_file() {  # FILE PATTERN PID: until FILE holds PATTERN (10 s at most) while PID runs
  local n
  for ((n = 0; n < 100; n++)); do
    [ -s "$1" ] && [[ $(< "$1") == *$2* ]] && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# Ends a receiver (SIGINT: it prints its summary), bounded.
stop_receiver() {  # PID
  local n
  kill -INT "$1" 2>/dev/null
  for ((n = 0; n < 100; n++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$1" 2>/dev/null && { say "receiver $1 ignored SIGINT: killed"; kill -KILL "$1"; }
  wait "$1"
}

# (c): the rdma engine on rxe_roce, a UC queue pair with a ring of 64 frame slots.
case_c() {  # PAYLOAD ROUND
  local p=$1 d=$work/c-$1-$2 rc
  mkdir -p "$d"
  local fb=$((p * frame_packets))
  tx_config "$d/tx.yaml" 4096
  # The sensor's side for the engine: its GID and its sending PSN (a UC sender's QPN is not on the wire).
  echo "{\"gid\": \"::ffff:$NDQ_ROCE_IP_B\", \"tx\": [{\"qpn\": 512, \"psn\": 0}]}" > "$d/sensor-qp.json"
  cat > "$d/rx.yaml" <<EOF
memory_regions:
  - {name: ring, kind: host, buf_size: $fb, num_bufs: 128}
interfaces:
  - name: sensor
    engine: rdma
    address: rdma://$NDQ_ROCE_IP_A
    rdma:
      transport: uc
      connect: manual
      op: write_imm
      recv_depth: 64
      gid_index: $NDQ_ROCE_GID_INDEX
      mtu: $p
      local_file: $d/engine-qp.json
      peer_file: $d/sensor-qp.json
    rx:
      queues:
        - {id: 0, batch_size: 16, ring_depth: 4, memory_regions: [ring]}
EOF
  taskset -c $recv_cpu "$cli" run "$d/rx.yaml" -d $((max_seconds + 30)) -q --json "$d/recv.json" > "$d/recv.log" 2>&1 &
  local rpid=$!
  pids+=("$rpid")
  wait_file "$d/engine-qp.json" '"rx"' "$rpid" || { say "(c) $p: the rdma engine wrote no rx queue pair"; cat "$d/recv.log" >&2; return 1; }
  sleep 0.5
  mark "$d/idle" "$rpid"  # the receiver at rest for 2 s: its polling's cost alone
  sleep 2
  snapshot "$d/before"
  local rcvd want n deadline
  rxe_rcvd
  want=$((rcvd + packets))
  start_sender "$d" "$d/engine-qp.json" "$p" "$rpid"
  # Until rxe took them all (a builtin spin: the window ends at its last packet), bounded.
  deadline=$((${EPOCHREALTIME%.*} + max_seconds + 20))
  while :; do
    rxe_rcvd
    [ "$rcvd" -ge "$want" ] && break
    [ "${EPOCHREALTIME%.*}" -ge "$deadline" ] && break
    nap
  done
  mark "$d/end" "$rpid"
  wait "$send_pid"
  rc=$?
  snapshot "$d/after"
  stop_receiver "$rpid"
  echo "send_rc=$rc" > "$d/status"
  return 0
}

# (s): netdaq's software RoCE receive, afxdp on the same veth end, ICRC checked, bytes checked.
case_s() {  # PAYLOAD ROUND
  local p=$1 d=$work/s-$1-$2 rc
  mkdir -p "$d"
  local fb=$((p * frame_packets))
  tx_config "$d/tx.yaml" 4096
  cat > "$d/rx.yaml" <<EOF
memory_regions:
  - {name: umem, kind: host, buf_size: 4096, num_bufs: 16384}
interfaces:
  - name: sensor
    engine: afxdp
    address: $NDQ_ROCE_NETDEV_A
    rx:
      queues:
        - {id: 0, mode: direct, batch_size: 64, ring_depth: 16, memory_regions: [umem]}
      flows:
        - {id: 0, queue: 0, match: {udp_dst: 4791}}
      reorder:
        - queue: 0
          mode: roce
          frames: host
          roce:
            queue_pairs:
              - {qpn: 0x100, rkey: 0x1234, base_va: 0x10000000, slots: 64, stride: $fb, slot_size: $fb, psn: 0}
            mtu: $p
            check_icrc: true
          max_open_frames: 4
          frame_buffers: 16
          frame_timeout_us: 2000000
    afxdp: {attach: auto, mode: auto, fill_ring: 8192, rx_ring: 8192}
EOF
  # It ends by itself once it has every frame (or nothing came for 3 s); the shell around it
  # prints its CPU time (`times`: the whole process's life, less the part before the window).
  bash -c '"$@"; rc=$?; times > "$0"; exit $rc' "$d/times" taskset -c $recv_cpu "$cli" roce-recv "$d/rx.yaml" \
    --local-file "$d/qp.json" --gid "::ffff:$NDQ_ROCE_IP_A" --frames $((packets / frame_packets)) --idle-ms 3000 \
    --duration $((max_seconds + 30)) --check-pattern --json > "$d/recv.json" 2> "$d/recv.log" &
  local wpid=$! rpid= n
  pids+=("$wpid")
  for ((n = 0; n < 100; n++)); do
    read -r rpid < "/proc/$wpid/task/$wpid/children" 2>/dev/null && [ -n "$rpid" ] && break
    sleep 0.05
  done
  [ -n "$rpid" ] || { say "(s) $p: no receiver process"; return 1; }
  wait_file "$d/qp.json" '"rx"' "$rpid" || { say "(s) $p: roce-recv wrote no queue pair"; cat "$d/recv.log" >&2; return 1; }
  sleep 0.5
  mark "$d/idle" "$rpid"
  sleep 2
  snapshot "$d/before"
  start_sender "$d" "$d/qp.json" "$p" "$rpid"
  # Until the receiver has every frame and ends (bounded by its --idle-ms and --duration).
  local deadline=$((${EPOCHREALTIME%.*} + max_seconds + 40))
  while kill -0 "$rpid" 2>/dev/null && [ "${EPOCHREALTIME%.*}" -lt "$deadline" ]; do nap; done
  mark "$d/end" "$rpid"
  wait "$send_pid"
  rc=$?
  snapshot "$d/after"
  wait "$wpid"
  echo "send_rc=$rc" > "$d/status"
  return 0
}

# Why a size cannot run here, or nothing.
skip_reason() {  # PAYLOAD
  local p=$1 frame=$(($1 + 14 + 20 + 8 + 12 + 16 + 4 + 4))  # Ethernet, IP, UDP, BTH, RETH, ImmDt, ICRC
  if [ "$frame" -gt 4096 ]; then
    echo "a WRITE ONLY with immediate of $p B is a $frame-byte frame: the emulator's AF_XDP tx chunk is at most one 4096-byte page on this 6.1 kernel (no multi-buffer AF_XDP, no chunks above PAGE_SIZE before 6.6), and (s)'s afxdp receive has 3840 B of it after XDP's headroom (bench/roce_sw.md)"
  elif [ "$frame" -gt $((3500 + 14)) ]; then
    echo "a $frame-byte frame needs a veth MTU above 3500, where veth refuses a non-frags XDP program"
  fi
}

# The veth's receive path (backlog, IP, UDP, rxe; generic XDP if that is the mode) on the
# receiver's CPU, for both cases.
echo $((1 << recv_cpu)) > "/sys/class/net/$NDQ_ROCE_NETDEV_A/queues/rx-0/rps_cpus" || say "no RPS on $NDQ_ROCE_NETDEV_A"
IFS=, read -r -a sizes <<< "$payloads"
ran=()
for p in "${sizes[@]}"; do
  why=$(skip_reason "$p")
  if [ -n "$why" ]; then
    say "$p B: skipped: $why"
    echo "$why" > "$work/skip-$p"
    continue
  fi
  # rxe's path MTU follows the netdev's; (s)'s afxdp needs <= 3500 on veth: the same MTU for both.
  mtu=$((p + 100 > 1500 ? 3500 : 1500))
  ip link set "$NDQ_ROCE_NETDEV_A" mtu $mtu && ip -n "$NDQ_ROCE_NS" link set "$NDQ_ROCE_NETDEV_B" mtu $mtu || { say "cannot set MTU $mtu"; exit 1; }
  sleep 0.5
  for ((r = 0; r < rounds; r++)); do
    say "$p B payloads, veth MTU $mtu, $packets packets ($frame_packets per frame), round $((r + 1))/$rounds: (c) rxe + rdma engine"
    case_c "$p" "$r" || { say "(c) $p B failed"; exit 1; }
    say "$p B, round $((r + 1))/$rounds: (s) netdaq roce-recv, afxdp"
    case_s "$p" "$r" || { say "(s) $p B failed"; exit 1; }
  done
  echo "$mtu" > "$work/mtu-$p"
  ran+=("$p")
done

# The table and the JSON, from the files above.
"$py" - "$work" "$out/roce-sw-rxe.json" "$payloads" "$packets" "$frame_packets" "$sender_cpu" "$recv_cpu" \
  "$(uname -r)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" "$(getconf CLK_TCK)" "$rounds" <<'EOF'
import json, os, statistics, sys
work, out_path, payloads, packets, frame_packets, scpu, rcpu, kernel, cpu_model, hz, rounds = sys.argv[1:12]
packets, frame_packets, hz, rounds = int(packets), int(frame_packets), int(hz), int(rounds)
def kv(path):
    d = {}
    for line in open(path):
        k, _, v = line.rstrip("\n").partition("=")
        d[k] = v
    return d
def ticks(before, after):  # user nice system idle iowait irq softirq steal
    b = [int(x) for x in before.split()[:8]]; a = [int(x) for x in after.split()[:8]]
    d = [y - x for x, y in zip(b, a)]
    return {"busy": d[0] + d[1] + d[2] + d[5] + d[6] + d[7], "user": d[0] + d[1], "system": d[2],
            "irq": d[5], "softirq": d[6], "idle": d[3] + d[4]}
def sec(t): m, _, s = t.rstrip("s").partition("m"); return float(m) * 60 + float(s)
result = {"bench": "roce_sw_rxe", "doc": "bench/roce_sw_rxe.md", "kernel": kernel, "cpu": cpu_model,
          "guest": "QEMU (tests/guest/run-in-guest.sh)", "accel": os.environ.get("NETDAQ_GUEST_ACCEL", "tcg"),
          "packets_per_case": packets, "packets_per_frame": frame_packets, "rounds": rounds,
          "sender_cpu": int(scpu), "receiver_cpu": int(rcpu), "clk_tck": hz,
          "cost_definition": "receiver CPU = CPU 1 busy ticks (user+nice+system+irq+softirq+steal, /proc/stat) + CPU 0 softirq ticks, over the window from the sender's start to the receiver's last packet",
          "rounds_data": [], "medians": [], "ratios": {}, "skipped": {}, "checks": []}
ok = True
def one(case, p, rnd, mtu):
    global ok
    d = f"{work}/{case}-{p}-{rnd}"
    b, a = {**kv(f"{d}/before"), **kv(f"{d}/start")}, {**kv(f"{d}/after"), **kv(f"{d}/end")}
    send = json.load(open(f"{d}/send.json"))
    status = kv(f"{d}/status")
    recv = json.load(open(f"{d}/recv.json"))
    secs = (int(a["t_ns"]) - int(b["t_ns"])) / 1e9
    cr, cs = ticks(b["cpu_recv"], a["cpu_recv"]), ticks(b["cpu_send"], a["cpu_send"])
    pb = [int(x) for x in b["proc"].split()]
    if os.path.exists(f"{d}/times"):  # bash's `times`: children's user and system, 2nd line
        u, sy = open(f"{d}/times").read().split("\n")[1].split()
        proc = round((sec(u) + sec(sy)) * hz) - pb[0] - pb[1]
    else:
        pa = [int(x) for x in a["proc"].split()]
        proc = (pa[0] - pb[0]) + (pa[1] - pb[1])
    delta = lambda k: int(a[k]) - int(b[k])
    sent = send["packets"]
    # veth's rx_dropped includes its XDP drops (an XSK ring or fill ring full: ethtool's
    # drop/err counters, shown apart, not added twice).
    drops = {"veth_rx_dropped": delta("veth_rx_dropped"), "softnet_backlog": delta("softnet_drops"),
             "udp_errors": delta("udp_errors")}
    r = {"case": case, "payload": p, "round": rnd, "veth_mtu": mtu, "sent": sent, "sender_seconds": send["seconds"],
         "sender_pps": send["pps"], "sender_rc": int(status["send_rc"]), "window_seconds": secs, "drops": drops,
         "veth_rx": delta("veth_rx"), "veth_xdp_drop_counters": delta("veth_xdp_drops"), "cpu_recv_ticks": cr, "cpu_send_ticks": cs, "proc_ticks": proc}
    checks = []
    if case == "c":
        rcvd = delta("rxe_rcvd")
        completions = recv.get("totals", {}).get("rx_packets")
        r.update({"receiver": "rdma engine (netdaq run, UC write_imm, connect manual) on rxe", "received": rcvd,
                  "completions": completions, "rxe_rcvd_seq_err": delta("rxe_seq_err"),
                  "rxe_duplicate_request": delta("rxe_dup"), "rxe_out_of_seq_request": delta("rxe_oos")})
        checks.append(("completions == frames sent", completions == send["frames"], f"{completions} vs {send['frames']}"))
        unexplained = sent - rcvd - sum(drops.values())
        checks.append(("sent == rxe rcvd_pkts (after its ICRC check) + counted drops", unexplained == 0,
                       f"sent {sent}, rxe {rcvd}, drops {sum(drops.values())}, veth rx {r['veth_rx']}"))
        checks.append(("no PSN errors at rxe", r["rxe_rcvd_seq_err"] == 0 and r["rxe_out_of_seq_request"] == 0, ""))
    else:
        cnt = recv["counters"]
        rcvd = cnt["packets"]
        r.update({"receiver": "netdaq roce-recv (afxdp, reorder roce, check_icrc, frames: host)", "received": rcvd,
                  "placed": cnt["placed"], "bad_icrc": cnt["bad_icrc"], "psn_lost": cnt["psn_lost"],
                  "frames": recv["frames"], "complete": recv["complete"], "incomplete": recv["incomplete"],
                  "pattern_errors": recv["pattern_errors"], "bytes_missing": recv["bytes_missing"]})
        unexplained = sent - rcvd - sum(drops.values())
        checks.append(("sent == received + counted drops", unexplained == 0,
                       f"sent {sent}, received {rcvd}, drops {sum(drops.values())}, veth rx {r['veth_rx']}"))
        # Every byte that came is checked; bytes of dropped packets are missing (counted), never wrong.
        checks.append(("every byte checked: pattern errors 0, bad ICRC 0, placed == received, PSN losses == counted drops",
                       recv["pattern_errors"] == 0 and cnt["bad_icrc"] == 0 and cnt["placed"] == rcvd
                       and cnt["psn_lost"] == sum(drops.values()),
                       f"pattern {recv['pattern_errors']}, bad_icrc {cnt['bad_icrc']}, placed {cnt['placed']}, psn_lost {cnt['psn_lost']}, missing {recv['bytes_missing']} B"))
        r["frames_complete_of_sent"] = [recv["complete"], send["frames"]]
    checks.append(("sender sent all", status["send_rc"] == "0" and sent == (packets // frame_packets) * frame_packets,
                   f"rc {status['send_rc']}, {sent} packets"))
    r["unexplained"] = unexplained
    n = max(rcvd, 1)
    ns = lambda t: t / hz * 1e9 / n
    r["recv_pps"] = rcvd / secs if secs > 0 else 0
    r["cost_ns_per_packet"] = ns(cr["busy"] + cs["softirq"])
    r["cpu1_ns_per_packet"] = ns(cr["busy"])
    r["proc_ns_per_packet"] = ns(proc)
    r["softirq_ns_per_packet"] = ns(cr["softirq"] + cs["softirq"])
    r["cpu1_utilisation"] = cr["busy"] / max(cr["busy"] + cr["idle"], 1)
    r["cpu0_utilisation"] = cs["busy"] / max(cs["busy"] + cs["idle"], 1)
    r["checks"] = [{"check": c, "ok": bool(v), "detail": dd} for c, v, dd in checks]
    for c, v, dd in checks:
        if not v or rnd == 0:
            result["checks"].append(f"{'ok  ' if v else 'FAIL'} {case} {p} round {rnd}: {c} ({dd})")
        ok = ok and bool(v)
    return r
keys = ["recv_pps", "sender_pps", "cpu1_utilisation", "cpu0_utilisation", "proc_ns_per_packet", "softirq_ns_per_packet",
        "cpu1_ns_per_packet", "cost_ns_per_packet"]
for p in payloads.split(","):
    p = int(p)
    if os.path.exists(f"{work}/skip-{p}"):
        result["skipped"][str(p)] = open(f"{work}/skip-{p}").read().strip(); continue
    mtu = int(open(f"{work}/mtu-{p}").read())
    med = {}
    for case in ("c", "s"):
        rs = [one(case, p, i, mtu) for i in range(rounds)]
        result["rounds_data"] += rs
        m = {"case": case, "payload": p, "veth_mtu": mtu, "receiver": rs[0]["receiver"],
             "sent": sum(x["sent"] for x in rs), "received": sum(x["received"] for x in rs),
             "dropped": sum(sum(x["drops"].values()) for x in rs)}
        for k in keys:
            m[k] = statistics.median(x[k] for x in rs)
            m[k + "_range"] = [min(x[k] for x in rs), max(x[k] for x in rs)]
        m["capacity_pps"] = 1e9 / m["cost_ns_per_packet"] if m["cost_ns_per_packet"] else 0
        med[case] = m
        result["medians"].append(m)
    c, s = med["c"], med["s"]
    result["ratios"][str(p)] = {
        "s_over_c_cpu_capacity": c["cost_ns_per_packet"] / s["cost_ns_per_packet"] if s["cost_ns_per_packet"] else None,
        "s_over_c_recv_pps": s["recv_pps"] / c["recv_pps"] if c["recv_pps"] else None}
result["ok"] = ok
json.dump(result, open(out_path, "w"), indent=1)
print(f"medians of {rounds} rounds of {packets} packets; ns/pkt = (CPU 1 busy + CPU 0 softirq) / packets")
print(f"{'payload':>7}  {'receiver':<28} {'sent':>7} {'dropped':>7} {'Kpps rx':>7} {'send Kpps':>9} {'CPU1 %':>6} {'proc ns':>7} {'softirq':>7} {'ns/pkt':>7} {'range':>15} {'Kpps cap':>8}")
for m in result["medians"]:
    name = "(c) rxe + rdma engine" if m["case"] == "c" else "(s) netdaq roce afxdp, ICRC"
    lo, hi = m["cost_ns_per_packet_range"]
    print(f"{m['payload']:>7}  {name:<28} {m['sent']:>7} {m['dropped']:>7} {m['recv_pps']/1e3:>7.1f} {m['sender_pps']/1e3:>9.1f} {100*m['cpu1_utilisation']:>6.0f} "
          f"{m['proc_ns_per_packet']:>7.0f} {m['softirq_ns_per_packet']:>7.0f} {m['cost_ns_per_packet']:>7.0f} {lo:>7.0f}-{hi:<7.0f} {m['capacity_pps']/1e3:>8.1f}")
for p, q in result["ratios"].items():
    print(f"{p:>7}  ratio (s)/(c): by CPU capacity (1/ns per packet) {q['s_over_c_cpu_capacity']:.2f}, by received packets/s {q['s_over_c_recv_pps']:.2f}")
for p, why in result["skipped"].items():
    print(f"{p:>7}  skipped: {why}")
for c in result["checks"]:
    print("check:", c)
print("checks (all rounds):", "ok" if ok else "FAILED")
sys.exit(0 if ok else 3)
EOF
rc=$?
if [ "$rc" != 0 ] || [ -n "${NDQ_BENCH_DUMP:-}" ]; then  # what the figures came from
  for f in "$work"/*/*; do echo "== $f"; cat "$f"; done
fi
echo ROCE_SW_RXE_JSON_BEGIN
cat "$out/roce-sw-rxe.json"
echo
echo ROCE_SW_RXE_JSON_END
exit $rc
