#!/usr/bin/env bash
# netdaq's transmit path against each engine's anchor, side by side in one run, the two
# senders alternating round by round (netdaq, anchor, netdaq, ...); the table shows medians
# and each ratio with its target (PASS/MISS):
#   dpdk    `netdaq run --no-verify` (one tx queue on --tx-cpu) vs `dpdk-testpmd
#           --forward-mode=txonly --burst=64` on net_null0; figure: the port's TX counter
#           (netdaq: xstat_tx_good_packets, which must equal the queue's packets; testpmd:
#           TX-packets). Target >= 0.9x.
#   afxdp   netdaq's afxdp engine vs testpmd txonly over the af_xdp PMD (--vdev
#           net_af_xdp0,iface=...) on veth B of a veth pair; figure: frames counted at the peer
#           (veth A's rx_packets). Target >= 1.0x.
#   socket  netdaq's socket engine (UDP) vs `iperf3 -u -b 0 -l SIZE` over the same veth pair;
#           figure: frames counted at veth A (iperf3's server listens in A). Ratio reported.
# Frames of 66 B and 1,024 B (UDP payloads of 24 and 982 bytes: netdaq's header is 24 bytes).
# Namespaces ndqtA<pid>/ndqtB<pid> (veths ndqtva/ndqtvb, 10.197.0.0/24) are made here and
# deleted on every exit, with the script's processes and the hugepages it reserved.
#
# What fails the run (exit status 1, after the table and the JSON are written): a figure
# missing (no JSON, no testpmd statistics, no counters); a process that ended other than as
# expected; netdaq's accounting: dpdk: queue packets != the port's TX counter; veth: netdaq's
# sent - (peer rx_packets + peer rx_dropped + sender tx_dropped; socket: A's UDP InDatagrams +
# NoPorts + InErrors) above 0.01% of sent or 1,000 (an anchor's own unexplained loss is a warning). Failed rounds stay out of the medians.
#
# usage: bench/tx_vs_peers.sh [--duration S] [--rounds N] [--cases dpdk,afxdp,socket]
#            [--sizes 24,982] [--json FILE] [--netdaq PATH] [--main-cpu N] [--tx-cpu N]
#            [--hugepages N] [--keep DIR]
#   --duration S   seconds per sender run, whole seconds >= 3 (default 3)
#   --rounds N     rounds per case, size and sender (default 3)
#   --hugepages N  2 MiB hugepages to reserve for the dpdk case (default 300; given back on exit)
# Needs root, dpdk-testpmd, iperf3, a netdaq built with the dpdk, afxdp and socket engines.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

duration=3
rounds=3
cases="dpdk,afxdp,socket"
sizes="24,982"
json_out=""
netdaq=""
main_cpu=0
tx_cpu=1
port=47800
hugepages=300
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --netdaq) netdaq=$2; shift 2 ;;
    --main-cpu) main_cpu=$2; shift 2 ;;
    --tx-cpu) tx_cpu=$2; shift 2 ;;
    --hugepages) hugepages=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) usage ;;
    *) bad_option "$1" ;;
  esac
done

need_root "namespaces, hugepages, XDP"
need_testpmd
need_duration
need_other_cpus --main-cpu "$main_cpu" --tx-cpu "$tx_cpu"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds: a whole number >= 1"
for c in ${cases//,/ }; do
  case "$c" in dpdk|afxdp|socket) find_netdaq "$c" ;; *) die "--cases: dpdk, afxdp, socket" ;; esac
done
[[ ",$cases," != *,socket,* ]] || command -v iperf3 >/dev/null || die "iperf3 not found (apt-get install iperf3)"

lab_init t 197
lab_up
exit_hooks+=(hugepages_give_back)
# B's kernel knows A's MAC without ARP (the afxdp engine's headers take it from there)
in_ns "$ns_b" ip neigh replace "$ip_a" lladdr "$mac_a" dev "$veth_b" nud permanent
[[ ",$cases," != *,dpdk,* ]] || hugepages_reserve "$hugepages" 300 "netdaq's or testpmd's EAL takes 256 MiB, the region 16 MiB"

# peer_counters FILE: veth A's rx and veth B's tx counters (ip -s -j link)
# and A's UDP counters (/proc/net/snmp: a UDP GSO burst crosses the veth as one skb, so the
# socket case counts datagrams where A's kernel delivers them, one by one)
peer_counters() {
  { in_ns "$ns_a" ip -s -j link show dev "$veth_a"; echo; in_ns "$ns_b" ip -s -j link show dev "$veth_b"; echo
    in_ns "$ns_a" grep '^Udp:' /proc/net/snmp | tr '\n' ' '; echo; } >"$1" 2>&1 || true
}

# timed NAME CMD...: CMD (a sender that stops by itself), its start/stop times in NAME.start/.stop
timed() {
  local name=$1 rc=0
  shift
  date +%s.%N >"$tmp/$name.start"
  "$@" >"$tmp/$name.out" 2>&1 || rc=$?
  date +%s.%N >"$tmp/$name.stop"
  [ "$rc" = 0 ] || round_failed "$name" "$1 exited with $rc: $(one_line "$tmp/$name.out")"
}

# testpmd_tx NAME NETNS EAL... -- ARGS...: testpmd txonly for $duration s from "Press enter to
# exit" (its forwarding start) to stdin EOF; output in NAME.out, that time in NAME.start/.stop
testpmd_tx() {
  local name=$1 ns=$2 out=$tmp/$1.out rc=0
  shift 2
  : >"$out"
  { wait_for "$out" "Press enter to exit" 20 || true; date +%s.%N >"$tmp/$name.start"; sleep "$duration"
    date +%s.%N >"$tmp/$name.stop"; } |
    ${ns:+ip netns exec "$ns"} timeout -s INT -k 5 "$bound" stdbuf -oL -eL dpdk-testpmd "$@" >"$out" 2>&1 || rc=$?
  [ "$rc" = 0 ] || round_failed "$name" "testpmd txonly exited with $rc: $(one_line "$out")"
  rm -rf /var/run/dpdk/"${prefix}"_* 2>/dev/null || true
}

# netdaq_yaml CASE PAYLOAD: a tx-only config (one queue on tx_cpu, 64-packet bursts)
netdaq_yaml() {
  local kind=host engine=$1 addr dest="udp://$ip_a:$port" extra=""
  case "$1" in
    dpdk) kind=huge addr=net_null0 dest="udp://10.0.0.2:$port"
          extra=$'    dpdk:\n      dst_mac: "02:00:00:00:00:02"\n      src_ip: 10.0.0.1\neal:\n  hugepages: true' ;;
    afxdp) addr=$veth_b ;;
    socket) addr="" ;;
  esac
  cat <<EOF
# netdaq tx-only: tx_vs_peers.sh's $1 sender
memory_regions:
  - {name: tx_bufs, kind: $kind, buf_size: 2048, num_bufs: 8192}
interfaces:
  - name: tx
    engine: $engine
${addr:+    address: $addr}
    tx:
      destination: $dest
      queues:
        - {id: 0, batch_size: 64, memory_regions: [tx_bufs], cpu_core: $tx_cpu}
$extra
run: {tx_payload_size: $2}
log: {level: warn}
EOF
}

netdaq_tx() {  # NAME CASE PAYLOAD [NETNS]
  local name=$1
  netdaq_yaml "$2" "$3" >"$tmp/$name.yaml"
  timed "$name" ${4:+ip netns exec "$4"} timeout -s INT -k 5 "$bound" taskset -c "$main_cpu,$tx_cpu" \
    "$netdaq" run "$tmp/$name.yaml" -q --no-verify -d "$duration" --json "$tmp/$name.json"
}

round() {  # CASE PAYLOAD R WHO
  local c=$1 size=$2 who=$4 name="$1-$2.r$3.$4" frame=$(($2 + 42))
  peer_counters "$tmp/$name.peer0"
  case "$c.$who" in
    dpdk.netdaq) netdaq_tx "$name" dpdk "$size" ;;
    dpdk.testpmd)
      testpmd_tx "$name" "" -m 256 --in-memory --no-pci --no-telemetry --iova-mode=va --file-prefix "${prefix}_tp" \
        -l "$main_cpu,$tx_cpu" --main-lcore "$main_cpu" --vdev net_null0 -- --forward-mode=txonly --nb-cores=1 \
        --burst=64 --txpkts="$frame" --total-num-mbufs=8192 --mbuf-size=2048 --txd=1024 ;;
    afxdp.netdaq) netdaq_tx "$name" afxdp "$size" "$ns_b" ;;
    afxdp.testpmd)
      # shellcheck disable=SC2046  # dpdk_eal: several words
      testpmd_tx "$name" "$ns_b" $(dpdk_eal "${prefix}_tp" "$main_cpu" "$tx_cpu" "net_af_xdp0,iface=$veth_b") \
        --forward-mode=txonly --burst=64 --txpkts="$frame" --tx-ip="$ip_b,$ip_a" --tx-udp="9000,$port" \
        --eth-peer="0,$mac_a" ;;
    socket.netdaq)
      # A socket that never reads: every datagram is counted where A's kernel delivers it
      # (InDatagrams, or InErrors once its buffer is full); a GSO burst is split there
      in_ns "$ns_a" timeout "$bound" python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
print("ready", flush=True)
time.sleep(float(sys.argv[3]))' "$ip_a" "$port" "$bound" >"$tmp/$name.sink" 2>&1 &
      local sink=$!
      track "$sink"
      wait_for "$tmp/$name.sink" ready 10 "$sink" || round_failed "$name" "the UDP sink did not start"
      netdaq_tx "$name" socket "$size" "$ns_b"
      sleep 0.2
      kill "$sink" 2>/dev/null || true
      wait "$sink" 2>/dev/null || true
      untrack "$sink" ;;
    socket.iperf3)
      # its own port: the sink of the round before may still hold netdaq's
      in_ns "$ns_a" taskset -c "$main_cpu" iperf3 -s -1 -B "$ip_a" -p $((port + 1)) >"$tmp/$name.srv" 2>&1 &
      local srv=$!
      track "$srv"
      sleep 0.3
      timed "$name" ip netns exec "$ns_b" timeout -k 5 "$bound" taskset -c "$tx_cpu" iperf3 -c "$ip_a" -p $((port + 1)) -u \
        -b 0 -l "$size" -t "$duration" -J
      wait "$srv" 2>/dev/null || true
      untrack "$srv" ;;
  esac
  peer_counters "$tmp/$name.peer1"
  [ "$c" != afxdp ] || xdp_check_b "$name"
}
# an af_xdp sender (either) must leave no XDP program on veth B
xdp_check_b() {
  if in_ns "$ns_b" ip -o link show dev "$veth_b" | grep -q "prog/xdp\| xdp"; then
    round_failed "$1" "an XDP program stayed attached to $veth_b (removed now)"
    in_ns "$ns_b" ip link set dev "$veth_b" xdp off 2>/dev/null || true
  fi
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for c in ${cases//,/ }; do
  anchor=testpmd
  [ "$c" != socket ] || anchor=iperf3
  for size in ${sizes//,/ }; do
    for ((r = 1; r <= rounds; r++)); do
      for who in netdaq "$anchor"; do
        echo "== $c $((size + 42)) B frames, round $r: $who" >&2
        round "$c" "$size" "$r" "$who"
      done
    done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
export veth_a veth_b

report "$tmp" "$cases" "$sizes" "$rounds" "$duration" "$json_out" "$netdaq" "$load_before" "$load_after" <<'PY'
tmp, cases, sizes, rounds, duration, json_out, netdaq, load_before, load_after = sys.argv[1:10]
cases, sizes, rounds = cases.split(","), [int(s) for s in sizes.split(",")], int(rounds)
TARGET = {"dpdk": 0.9, "afxdp": 1.0, "socket": None}
ANCHOR = {"dpdk": "testpmd", "afxdp": "testpmd", "socket": "iperf3"}
failed = script_failures(tmp)

def link_stats(path, dev):
    """{dev: ip -s -j link's stats64} from a peer_counters file (two JSON arrays, one a line)."""
    for line in text(path).splitlines():
        try:
            for d in json.loads(line):
                if d.get("ifname") == dev:
                    return d.get("stats64") or d.get("stats")
        except ValueError:
            pass
    return None

def peer_delta(base, at, veth_a, veth_b):
    """Frames veth A received (and dropped) and veth B dropped sending, over the round."""
    out = {}
    for dev, side, keys in ((veth_a, "rx", ("packets", "dropped")), (veth_b, "tx", ("packets", "dropped"))):
        s0, s1 = link_stats(base + ".peer0", dev), link_stats(base + ".peer1", dev)
        for k in keys:
            try:
                out[f"{dev}_{side}_{k}"] = s1[side][k] - s0[side][k]
            except (TypeError, KeyError):
                fail(at, f"figure missing: {dev} {side}_{k} (ip -s -j link)")
                out[f"{dev}_{side}_{k}"] = None
    return out

def udp_delta(base, at):
    """A's UDP datagrams over the round: delivered (InDatagrams), to no socket (NoPorts), dropped
    (InErrors, which includes RcvbufErrors)."""
    def snmp(path):
        for line in text(path).splitlines():
            if line.startswith("Udp:"):
                w = line.split()
                half = len(w) // 2
                try:
                    return dict(zip(w[1:half], map(int, w[half + 1:])))
                except ValueError:
                    return None
        return None
    a, b = snmp(base + ".peer0"), snmp(base + ".peer1")
    if not a or not b:
        fail(at, "figure missing: the receiver's UDP counters (/proc/net/snmp)")
        return None, None
    d = {k: b[k] - a[k] for k in ("InDatagrams", "NoPorts", "InErrors")}
    # a datagram dropped at the socket (full buffer) has arrived: the sender's rate counts it
    return d["InDatagrams"] + d["NoPorts"] + d["InErrors"], d["InErrors"]

def netdaq_tx(base, at):
    j = load_json(base + ".json")
    q = next((q for q in (j or {}).get("queues") or [] if q.get("direction") == "tx"), None)
    if q is None:
        fail(at, f"figures missing: netdaq wrote no tx queue figures: {tail(base + '.out', 300)!r}")
        return {"sent": None, "seconds": None}
    sent, sec = need(q, "packets", at, "netdaq tx packets"), need(q, "seconds", at, "netdaq tx seconds")
    if need(j, "interrupted", at, "netdaq interrupted"):
        fail(at, "netdaq run was interrupted (the script's time bound), not stopped at its duration")
    return {"sent": sent, "seconds": sec, "mode": q.get("mode", ""), "drops": nonzero(q.get("drops")),
            "engine": q.get("engine", {})}

def testpmd_tx(base, at):
    b = port0(text(base + ".out"))
    if not b:
        fail(at, f"figures missing: testpmd printed no forward statistics: {tail(base + '.out', 300)!r}")
        return {"sent": None, "seconds": run_time(base)}
    sent = field(b, "TX-packets:")
    if sent is None:
        fail(at, "figure missing: testpmd TX-packets")
    return {"sent": sent, "tx_dropped": field(b, "TX-dropped:"), "seconds": run_time(base)}

def iperf3_tx(base, at):
    j = load_json(base + ".out")
    try:
        s = j["end"]["sum"]
        return {"sent": s["packets"], "seconds": s["seconds"]}
    except (TypeError, KeyError):
        fail(at, f"figures missing: iperf3 wrote no end.sum: {tail(base + '.out', 300)!r}")
        return {"sent": None, "seconds": None}

def run_time(base):
    """Seconds between BASE.start and BASE.stop (the script's clock around the sender)."""
    try:
        return float(text(base + ".stop")) - float(text(base + ".start"))
    except ValueError:
        return None

veth_a, veth_b = os.environ["veth_a"], os.environ["veth_b"]
results, table = [], []
for c in cases:
    for size in sizes:
        rows = []
        for r in range(1, rounds + 1):
            row = {}
            for who in ("netdaq", ANCHOR[c]):
                name = f"{c}-{size}.r{r}.{who}"
                base, at, start = f"{tmp}/{name}", where(name), len(FAILURES)
                e = netdaq_tx(base, at) if who == "netdaq" else testpmd_tx(base, at) if who == "testpmd" else iperf3_tx(base, at)
                if c == "dpdk":
                    e["counted"] = e["sent"]
                    if who == "netdaq" and e["sent"] is not None:
                        port = e.get("engine", {}).get("xstat_tx_good_packets")
                        if port is None:
                            fail(at, "figure missing: net_null0's xstat_tx_good_packets")
                        elif port != e["sent"]:
                            fail(at, f"accounting: the queue sent {e['sent']:,}, the port counted {port:,}")
                        e["counted"] = port
                    # netdaq's own run time; testpmd's forwarding time
                    e["pps"] = e["counted"] / e["seconds"] if e["counted"] is not None and e["seconds"] else None
                else:
                    p = peer_delta(base, at, veth_a, veth_b)
                    e["peer"] = p
                    got = p.get(f"{veth_a}_rx_packets")
                    if c == "socket":
                        got, udp_err = udp_delta(base, at)
                        p["udp_received"], p["udp_in_errors"] = got, udp_err
                    e["counted"] = got
                    sec = e["seconds"] if who == "netdaq" else run_time(base) if who == "testpmd" else e["seconds"]
                    e["pps"] = got / sec if got is not None and sec else None
                    drops = (p.get(f"{veth_a}_rx_dropped") or 0) + (p.get(f"{veth_b}_tx_dropped") or 0)
                    if e["sent"] is not None and got is not None:
                        lost = e["sent"] - got - drops
                        e["unexplained_loss"] = lost
                        # a few bursts may still be in A's backlog when the counters are read
                        if lost > max(1000, e["sent"] // 10000) and who == "netdaq":
                            fail(at, f"accounting: sent {e['sent']:,}, the peer counted {got:,} + {drops:,} dropped: "
                                     f"{lost:,} lost uncounted")
                        elif lost > 0:
                            warn(at, f"{who}: sent {e['sent']:,}, the peer counted {got:,} + {drops:,} dropped")
                row[who] = round_checked(e, name, failed, start)
            rows.append(row)
        med = {}
        for who in ("netdaq", ANCHOR[c]):
            v = [x[who]["pps"] for x in rows if x[who].get("ok") and x[who].get("pps") is not None]
            med[who] = statistics.median(v) if v else None
            if med[who] is None:
                fail(f"case {c}-{size}", f"figure missing: no {who} round passed")
        ratio = med["netdaq"] / med[ANCHOR[c]] if med["netdaq"] and med[ANCHOR[c]] else None
        tgt = TARGET[c]
        verdict = "-" if ratio is None else ("report" if tgt is None else "PASS" if ratio >= tgt else "MISS")
        results.append({"case": c, "payload": size, "frame": size + 42, "anchor": ANCHOR[c], "rounds": rows,
                        "netdaq_pps": med["netdaq"], "anchor_pps": med[ANCHOR[c]], "ratio": ratio, "target": tgt,
                        "verdict": verdict})
        table.append((c, size + 42, ANCHOR[c], med["netdaq"], med[ANCHOR[c]], ratio, tgt, verdict))

print(f"\ntx_vs_peers: medians of {rounds} rounds of {duration} s, senders alternating (pps as counted: dpdk at the "
      f"port, veth cases at the peer)")
print(f"{'case':7} {'frame':>6} {'anchor':8} {'netdaq Mpps':>12} {'anchor Mpps':>12} {'ratio':>7} {'target':>7}  verdict")
for c, frame, a, n, p, ratio, tgt, v in table:
    f = lambda x: f"{x / 1e6:.2f}" if x else "-"
    print(f"{c:7} {frame:>6} {a:8} {f(n):>12} {f(p):>12} {(f'{ratio:.2f}x' if ratio else '-'):>7} "
          f"{(f'{tgt:.1f}x' if tgt else '-'):>7}  {v}")
settings = {"duration_s": int(duration), "rounds": rounds, "cases": cases, "payloads": sizes,
            "load_before": load_before, "load_after": load_after}
write_json(json_out, settings, netdaq_version(netdaq), results)
finish()
PY
