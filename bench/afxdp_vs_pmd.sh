#!/usr/bin/env bash
# netdaq's afxdp engine against DPDK's own AF_XDP PMD (net_af_xdp, dpdk-testpmd rxonly) as
# receivers on the same veth pair, with the same sender: dpdk-testpmd txonly over the
# af_packet PMD, unpaced, for a fixed time. Frames of 64 B and 1,514 B (UDP payloads of 22
# and 1,472 bytes); the receivers alternate (netdaq, PMD, netdaq, PMD, ...) and the table
# shows medians.
#
# Namespaces ndqbA<pid> (receivers, veth ndqbva) and ndqbB<pid> (sender, veth ndqbvb) are
# made here and deleted on exit (trap); the script checks that no XDP program stays
# attached after each receiver. Receiver and sender forwarding threads are pinned to
# different CPUs (taskset / testpmd --lcores).
#
# Each round: start the receiver, wait until it is ready, run the sender for --duration
# seconds (testpmd txonly: from "Press enter to exit" to stdin EOF), then stop the receiver
# --duration + 3 s after it became ready (netdaq: `netdaq run -d`, the duration of the run
# itself; PMD: stdin EOF). Rates are packets / sender duration:
#   sent      testpmd txonly TX-packets (frames handed to the kernel; TX-dropped: refused by
#             the af_packet PMD, never sent)
#   netdaq    `netdaq run CONFIG --json` queue packets; drops = its QueueStats drops (pool_empty
#             = XSK rx_dropped, ring_full = XSK rx_ring_full, ...) and engine counters
#   PMD       testpmd rxonly RX-packets; drops = RX-dropped (imissed: XSK rx_dropped +
#             rx_ring_full ...) + RX-nombufs + RX-error
#   lost      sent - received: every frame the receiver did not get, wherever it was dropped
#             (veth's XDP ring between the namespaces, XSK rings, ...); also shown: veth
#             counters of the receiving side (ethtool -S) over the round.
#
# usage: bench/afxdp_vs_pmd.sh [--duration S] [--rounds N] [--sizes 22,1472] [--json FILE]
#            [--netdaq PATH] [--rx-cpu N] [--tx-cpu N] [--port N] [--keep DIR]
#            [--receivers netdaq,pmd] [--fill-ring N] [--rx-ring N] [--pmd-devargs ARGS]
#            [--rx-hog normal|idle] [--perf]
#   --duration S       sender time per round, whole seconds >= 3 (default 5)
#   --rounds N         rounds per size and receiver (default 2; the table shows medians)
#   --sizes LIST       UDP payload bytes (default 22,1472: 64 B and 1,514 B frames)
#   --receivers LIST   which receivers, in this order per round (default netdaq,pmd)
#   --fill-ring N, --rx-ring N   netdaq's afxdp.fill_ring / rx_ring (default: the engine's)
#   --pmd-devargs ARGS extra net_af_xdp devargs, e.g. busy_budget=0
#   --rx-hog POLICY    a busy loop on the receiver's CPU during each round: normal (SCHED_OTHER:
#                      how each receiver copes with sharing its CPU) or idle (SCHED_IDLE: it
#                      only keeps the CPU from halting; any receiver wake-up preempts it)
#   --perf             cpu-clock profiles of both CPUs (perf record) in --keep DIR
#   --keep DIR         keep every output file (testpmd logs, netdaq JSON, /proc/stat, perf)
# Needs root, dpdk-testpmd, a netdaq built with the afxdp engine (`netdaq --version`).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

duration=5
rounds=2
sizes="22,1472"
json_out=""
netdaq=""
rx_cpu=0
tx_cpu=1
port=47700
keep=""
perf=0
receivers="netdaq,pmd"
fill_ring=""
rx_ring=""
pmd_devargs=""
rx_hog=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --netdaq) netdaq=$2; shift 2 ;;
    --rx-cpu) rx_cpu=$2; shift 2 ;;
    --tx-cpu) tx_cpu=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --perf) perf=1; shift ;;
    --receivers) receivers=$2; shift 2 ;;
    --fill-ring) fill_ring=$2; shift 2 ;;
    --rx-ring) rx_ring=$2; shift 2 ;;
    --pmd-devargs) pmd_devargs=$2; shift 2 ;;
    --rx-hog) rx_hog=$2; shift 2 ;;
    -h|--help) usage ;;
    *) bad_option "$1" ;;
  esac
done

find_netdaq afxdp
need_testpmd
need_root "namespaces, XDP"
case "$rx_hog" in ""|normal|idle) ;; *) die "--rx-hog: normal or idle" ;; esac
need_duration
need_other_cpus --rx-cpu "$rx_cpu" --tx-cpu "$tx_cpu"
perf_cpus=""  # --perf: the sender's sample of the middle of each round profiles both CPUs
[ "$perf" = 0 ] || perf_cpus="$rx_cpu,$tx_cpu"

lab_init b 196  # namespaces ndqbA<pid> / ndqbB<pid>, veths ndqbva / ndqbvb, 10.196.0.0/24
lab_up

config_yaml() {
  local fill=${fill_ring:-2048}
  # The UMEM holds the fill ring, the queue's bursts (16 x 64) and room to spare.
  local bufs=$((fill + 4096 > 8192 ? fill + 4096 : 8192))
  cat <<EOF
# netdaq afxdp rx-only: the benchmark's receiver ($0)
memory_regions:
  - {name: umem, kind: host, buf_size: 2048, num_bufs: $bufs}
interfaces:
  - name: rx
    engine: afxdp
    address: $veth_a
    rx:
      queues:
        - {id: 0, mode: direct, batch_size: 64, ring_depth: 16, memory_regions: [umem]}
      flows:
        - {id: 1, queue: 0, match: {udp_dst: $port}}
EOF
  if [ -n "$fill_ring$rx_ring" ]; then
    echo "    afxdp:"
    [ -z "$fill_ring" ] || echo "      fill_ring: $fill_ring"
    [ -z "$rx_ring" ] || echo "      rx_ring: $rx_ring"
  fi
  printf 'log:\n  level: warn\n'
}

hog_pid=""
hog_start() {  # a busy loop on the receiver's CPU
  case "$rx_hog" in
    "") return 0 ;;
    normal) taskset -c "$rx_cpu" sh -c 'while :; do :; done' & ;;
    idle) chrt -i 0 taskset -c "$rx_cpu" sh -c 'while :; do :; done' & ;;
  esac
  hog_pid=$!
  track "$hog_pid"
}
hog_stop() {
  [ -n "$hog_pid" ] || return 0
  kill "$hog_pid" 2>/dev/null || true
  wait "$hog_pid" 2>/dev/null || true
  untrack "$hog_pid"
  hog_pid=""
}

# netdaq_round NAME SIZE
netdaq_round() {
  local name=$1 size=$2 out=$tmp/$1
  config_yaml >"$tmp/netdaq.yaml"
  veth_stats "$out.veth0" both
  hog_start
  ip netns exec "$ns_a" timeout -s INT -k 5 "$bound" taskset -c "$rx_cpu" "$netdaq" run "$tmp/netdaq.yaml" -q --no-verify \
    -d $((duration + 3)) --json "$out.json" >"$out.rx" 2>&1 &
  local pid=$!
  track "$pid"
  rx_started netdaq "$name" "$pid" "netdaq run:" 15
  sender "$name" $((42 + size)) "$rx_cpu" "$tx_cpu" stat "$perf_cpus"
  rx_wait netdaq "$name" "$pid"
  round_end netdaq "$name"
}

# pmd_round NAME SIZE
pmd_round() {
  local name=$1 size=$2 out=$tmp/$1
  veth_stats "$out.veth0" both
  hog_start
  mkfifo "$out.fifo"
  # shellcheck disable=SC2046  # dpdk_eal: several words
  ip netns exec "$ns_a" timeout -s INT -k 5 "$bound" stdbuf -oL -eL dpdk-testpmd $(dpdk_eal "${prefix}_rx" "$tx_cpu" "$rx_cpu" \
      "net_af_xdp0,iface=$veth_a,start_queue=0,queue_count=1${pmd_devargs:+,$pmd_devargs}") --forward-mode=rxonly <"$out.fifo" >"$out.rx" 2>&1 &
  local pid=$!
  track "$pid"
  exec 3>"$out.fifo"
  rx_started PMD "$name" "$pid" "Press enter to exit" 20
  sender "$name" $((42 + size)) "$rx_cpu" "$tx_cpu" stat "$perf_cpus"
  sleep_past "$out.rx.start" $((duration + 3))  # stop as long after readiness as netdaq's run
  exec 3>&-  # stdin EOF stops testpmd
  rx_wait PMD "$name" "$pid"
  round_end PMD "$name"
}

round_end() {  # LABEL NAME
  hog_stop
  veth_stats "$tmp/$2.veth1" both
  xdp_check "$1" "$2"
}

IFS=, read -r -a size_list <<<"$sizes"
IFS=, read -r -a receiver_list <<<"$receivers"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for size in "${size_list[@]}"; do
  for ((r = 1; r <= rounds; r++)); do
    for who in "${receiver_list[@]}"; do
      case "$who" in
        netdaq) netdaq_round "s$size.r$r.netdaq" "$size" ;;
        pmd) pmd_round "s$size.r$r.pmd" "$size" ;;
        *) die "unknown receiver $who (netdaq, pmd)" ;;
      esac
    done
    echo "size $size round $r of $rounds done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

settings=$(printf '{"duration_s": %s, "rounds": %s, "rx_cpu": %s, "tx_cpu": %s, "receivers": "%s", "fill_ring": "%s", "rx_ring": "%s", "pmd_devargs": "%s", "rx_hog": "%s", "load_before": "%s", "load_after": "%s"}' \
  "$duration" "$rounds" "$rx_cpu" "$tx_cpu" "$receivers" "$fill_ring" "$rx_ring" "$pmd_devargs" "$rx_hog" "$load_before" "$load_after")
report "$tmp" "$json_out" "$netdaq" "$settings" "${size_list[@]}" <<'PY'
tmp, out, netdaq, settings = sys.argv[1:5]
sizes = [int(s) for s in sys.argv[5:]]
settings = json.loads(settings)
duration, rounds, rx_cpu, tx_cpu = settings["duration_s"], settings["rounds"], settings["rx_cpu"], settings["tx_cpu"]
receivers = [w for w in settings["receivers"].split(",") if w]

def veth_delta(name):
    """Counters of the veth pair that changed over the round (ethtool -S; A = receiver)."""
    def parse(t):
        d, side = {}, "A"
        for line in t.splitlines():
            m = re.match(r"\s+([A-Za-z0-9_]+):\s+([0-9]+)$", line)
            if line.startswith("NIC statistics") and d:
                side = "B"
            if m:
                d[f"{side}.{m.group(1)}"] = int(m.group(2))
        return d
    a, b = parse(text(f"{tmp}/{name}.veth0")), parse(text(f"{tmp}/{name}.veth1"))
    return {k: b[k] - a.get(k, 0) for k in b if b[k] - a.get(k, 0)}

def cpu_usage(name):
    """Per CPU over the middle of the sender's run (/proc/stat): % busy, and of it % user,
    system, softirq (the kernel's veth/XDP work runs in the sender's softirqs)."""
    def parse(t):
        return {l.split()[0]: [int(x) for x in l.split()[1:]] for l in t.splitlines() if l.strip()}
    a, b = parse(text(f"{tmp}/{name}.tx.stat0")), parse(text(f"{tmp}/{name}.tx.stat1"))
    res = {}
    for cpu in b:
        if cpu not in a:
            continue
        d = [y - x for x, y in zip(a[cpu], b[cpu])]
        total = sum(d[:8]) or 1  # user nice system idle iowait irq softirq steal
        pct = lambda v: round(100.0 * v / total, 1)
        res[cpu] = {"busy": pct(total - d[3] - d[4]), "user": pct(d[0] + d[1]), "system": pct(d[2]),
                    "softirq": pct(d[6]), "steal": pct(d[7])}
    return res

def sender(name):
    return dict(sender_stats(f"{tmp}/{name}", duration), cpu=cpu_usage(name))

def netdaq_rx(name, tx):
    r, j, q = netdaq_counts(f"{tmp}/{name}")
    if not j:
        return r
    r.update(errors=q.get("errors", 0), engine_counters=q.get("engine", {}),
             # `netdaq run -d` with rx queues only must stop by itself at the duration
             stopped_at_duration=not j.get("interrupted") and abs(j.get("seconds", 0) - (duration + 3)) < 0.5,
             flows=j.get("flows", []))
    return over_sender(r, tx)

def pmd_rx(name, tx):
    r = testpmd_counts(f"{tmp}/{name}")
    return over_sender(r, tx) if r["ok"] else r

results = []
for size in sizes:
    rows = []
    for r in range(1, rounds + 1):
        row = {"round": r}
        for who in receivers:
            name = f"s{size}.r{r}.{who}"
            tx = sender(name)
            rx = (netdaq_rx if who == "netdaq" else pmd_rx)(name, tx)
            row[who] = {"sender": tx, "receiver": rx, "veth": veth_delta(name)}
        rows.append(row)
    def med(who, part, key):
        return median(rows, who, part, key)
    res = {"udp_payload": size, "frame": size + 42}
    for who in ("netdaq", "pmd"):
        res[who] = {"rx_pps": med(who, "receiver", "pps"), "received": med(who, "receiver", "received"),
                    "drops": med(who, "receiver", "drops"), "lost": med(who, "receiver", "lost"),
                    "sender_pps": med(who, "sender", "pps"), "sent": med(who, "sender", "sent")} if who in receivers else None
    a, b = (res["netdaq"] or {}).get("rx_pps"), (res["pmd"] or {}).get("rx_pps")
    res["ratio"] = a / b if a and b else None
    res["rounds"] = rows
    results.append(res)

for r in results:
    for x in r["rounds"]:
        v = x.get("netdaq", {}).get("receiver", {})
        if v.get("ok") and not v.get("stopped_at_duration"):
            print(f"WARNING: netdaq run ({r['frame']} B round {x['round']}) did not stop at its duration: "
                  f"{v.get('run_seconds')} s, interrupted={v.get('interrupted')}")

def mpps(v):
    return f"{v/1e6:.3f}" if v is not None else "-"

hdr = (f"{'frame':>6} | {'sent Mpps':>9} {'netdaq rx':>9} {'drops':>9} {'lost':>9} | {'sent Mpps':>9} {'PMD rx':>9} "
       f"{'drops':>9} {'lost':>9} | {'netdaq/PMD':>10}")
print(hdr)
print("-" * len(hdr))
for r in results:
    n, p = r["netdaq"] or {}, r["pmd"] or {}
    ratio = f"{r['ratio']:.2f}x" if r["ratio"] else "-"
    print(f"{r['frame']:>5}B | {mpps(n.get('sender_pps')):>9} {mpps(n.get('rx_pps')):>9} {num(n.get('drops')):>9} "
          f"{num(n.get('lost')):>9} | {mpps(p.get('sender_pps')):>9} {mpps(p.get('rx_pps')):>9} {num(p.get('drops')):>9} "
          f"{num(p.get('lost')):>9} | {ratio:>10}")
print("\nrounds (cpu: busy % of the receiver's / sender's CPU over the middle of the run, softirq in brackets):")
for r in results:
    for x in r["rounds"]:
        for who in receivers:
            t, v = x[who]["sender"], x[who]["receiver"]
            c = t.get("cpu", {})
            rc, tc = c.get(f"cpu{rx_cpu}", {}), c.get(f"cpu{tx_cpu}", {})
            if who == "netdaq":
                why = ", ".join(f"{k}={v_}" for k, v_ in v.get("drop_reasons", {}).items()) or "-"
                eng = ", ".join(f"{k}={v_}" for k, v_ in v.get("engine_counters", {}).items() if v_) or "-"
                detail = f"drops {why}; engine {eng}"
            else:
                detail = f"RX-dropped {v.get('rx_dropped')}, RX-nombufs {v.get('rx_nombufs')}, RX-error {v.get('rx_error')}"
            print(f"  {r['frame']:>4}B r{x['round']} {who:<6} sent {t['sent']:>10,} ({t['pps']/1e6:.3f} Mpps, "
                  f"{t['seconds']:.2f} s) rx {v.get('received', 0):>10,} lost {v.get('lost', 0):>7,}; {detail}; "
                  f"cpu rx {rc.get('busy', '?')}% tx {tc.get('busy', '?')}% ({tc.get('softirq', '?')}%)")
ver = netdaq_version(netdaq)
opts = ", ".join(f"{k}={settings[k]}" for k in ("fill_ring", "rx_ring", "pmd_devargs") if settings[k])
print(f"\n{ver} ({netdaq}); medians of {rounds} rounds of {duration:g} s per receiver; receiver on CPU {rx_cpu}, sender "
      f"(testpmd forwarding lcore) on CPU {tx_cpu}{'; busy loop (' + settings['rx_hog'] + ') on the receiver CPU' if settings['rx_hog'] else ''}"
      f"{'; ' + opts if opts else ''}; {machine(settings)}")
print("rates = packets / sender duration; lost = sent - received (anywhere between sender and receiver)")
write_json(out, settings, ver, results)
PY
