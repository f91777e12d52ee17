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
# Payload verification: testpmd's txonly payloads carry no netdaq header, so the timed netdaq
# rounds run --no-verify (they count the frames). After the timed rounds of each size a
# "verify" round (not timed, not in the medians): netdaq's socket engine in ndqbB<pid> sends
# 100 kpps of numbered, patterned payloads (the size's, at least 64 B) for --duration s, and the
# netdaq receiver, the same config without --no-verify, checks every byte and sequence number:
# every packet sent must arrive once and intact (no malformed or duplicate packet), and sent -
# received = netdaq's counted drops.
#
# What fails the run (exit status 1, after the table, the rounds and the JSON are written,
# with a "FAILED:" list naming size, round, receiver and figure): a figure missing (netdaq wrote
# no JSON or the JSON lacks a key, testpmd printed no statistics); a process that did not start
# or ended other than as expected (netdaq: exit 0 at its duration, not interrupted; testpmd:
# exit 0 at stdin EOF); netdaq's lost other than its counted drops (the drops, e.g. pool_empty,
# are allowed and shown per reason); a verify round's check; an XDP program left attached.
# The PMD's own unexplained loss is a warning (the reference is measured, not checked). Failed
# rounds stay out of the medians.
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

# netdaq_round NAME SIZE [verify]: a timed round (testpmd's frames, --no-verify), or with
# "verify" netdaq's own sender (lib.sh netdaq_sender) and every payload byte checked
netdaq_round() {
  local name=$1 size=$2 out=$tmp/$1 check=--no-verify
  [ "${3:-}" != verify ] || check=""
  config_yaml >"$tmp/netdaq.yaml"
  veth_stats "$out.veth0" both
  hog_start
  ip netns exec "$ns_a" timeout -s INT -k 5 "$bound" taskset -c "$rx_cpu" "$netdaq" run "$tmp/netdaq.yaml" -q $check \
    -d $((duration + 3)) --json "$out.json" >"$out.rx" 2>&1 &
  local pid=$!
  track "$pid"
  rx_started netdaq "$name" "$pid" "netdaq run:" 15
  if [ "${3:-}" = verify ]; then
    netdaq_sender "$name" "$(verify_payload "$size")"
  else
    sender "$name" $((42 + size)) "$rx_cpu" "$tx_cpu" stat "$perf_cpus"
  fi
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
  if [[ ",$receivers," == *,netdaq,* ]]; then
    netdaq_round "s$size.verify.netdaq" "$size" verify
    echo "size $size verify round done" >&2
  fi
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

settings=$(printf '{"duration_s": %s, "rounds": %s, "rx_cpu": %s, "tx_cpu": %s, "receivers": "%s", "fill_ring": "%s", "rx_ring": "%s", "pmd_devargs": "%s", "rx_hog": "%s", "load_before": "%s", "load_after": "%s", "verify_pps": %s, "verify_packets": %s}' \
  "$duration" "$rounds" "$rx_cpu" "$tx_cpu" "$receivers" "$fill_ring" "$rx_ring" "$pmd_devargs" "$rx_hog" "$load_before" "$load_after" \
  "$verify_pps" $((verify_pps * duration)))
report "$tmp" "$json_out" "$netdaq" "$settings" "${size_list[@]}" <<'PY'
tmp, out, netdaq, settings = sys.argv[1:5]
sizes = [int(s) for s in sys.argv[5:]]
settings = json.loads(settings)
duration, rounds, rx_cpu, tx_cpu = settings["duration_s"], settings["rounds"], settings["rx_cpu"], settings["tx_cpu"]
receivers = [w for w in settings["receivers"].split(",") if w]
failed = script_failures(tmp)
settings["payload_verification"] = (
    "the 'verify' round of each size (not timed): netdaq's socket sender in the sender namespace at verify_pps, "
    "payloads of the size (at least 64 B), into the netdaq receiver without --no-verify (every payload byte and "
    "sequence number checked). The timed rounds run --no-verify: testpmd's payloads carry no netdaq header"
    if "netdaq" in receivers else "none (no netdaq receiver)")

def veth_delta(name):
    """Counters of the veth pair that changed over the round (ethtool -S, and `ip -s -s link` as
    link_rx_* / link_tx_*; A = receiver)."""
    def parse(t):
        d, side = {}, "A"
        lines = t.splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"\s+([A-Za-z0-9_]+):\s+([0-9]+)$", line)
            if line.startswith("NIC statistics") and d:
                side = "B"
            if m:
                d[f"{side}.{m.group(1)}"] = int(m.group(2))
            h = re.match(r"\s+(RX|TX)( errors)?:\s+(.*)$", line)
            if h and i + 1 < len(lines):
                names, values = h.group(3).split(), lines[i + 1].split()
                if len(names) == len(values) and all(v.isdigit() for v in values):
                    for k, v in zip(names, values):
                        d[f"{side}.link_{h.group(1).lower()}{'_err' if h.group(2) else ''}_{k}"] = int(v)
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

def sender(name, at):
    return dict(sender_stats(f"{tmp}/{name}", at), cpu=cpu_usage(name))

def netdaq_rx(name, at, tx):
    r, j, q = netdaq_counts(f"{tmp}/{name}", at)
    if not j:
        return r
    r.update(errors=need(q, "errors", at, "netdaq errors"), engine_counters=q.get("engine", {}), flows=j.get("flows", []))
    if r["run_seconds"] is not None and abs(r["run_seconds"] - (duration + 3)) >= 0.5:
        warn(at, f"netdaq run took {r['run_seconds']:.2f} s, not its duration {duration + 3} s")
    return over_sender(r, tx, at, hint=path_hint(veth_delta(name)))

def pmd_rx(name, at, tx):  # the reference: its unexplained loss is a warning
    return over_sender(testpmd_counts(f"{tmp}/{name}", at), tx, at, strict=False, who="the PMD",
                       hint=path_hint(veth_delta(name)))

def verify_round(size):
    name = f"s{size}.verify.netdaq"
    at, start = where(name), len(FAILURES)
    base = f"{tmp}/{name}"
    r, j, q = netdaq_counts(base, at)
    tx = netdaq_sender_stats(base, at)
    veth = veth_delta(name)
    entry = {"round": "verify", "receiver": r, "sender": tx, "veth": veth,
             "check": verify_check(at, j, tx["sent"], hint=path_hint(veth))}
    return round_checked(entry, name, failed, start)

results = []
for size in sizes:
    rows = []
    for r in range(1, rounds + 1):
        row = {"round": r}
        for who in receivers:
            name = f"s{size}.r{r}.{who}"
            at, start = where(name), len(FAILURES)
            tx = sender(name, at)
            rx = (netdaq_rx if who == "netdaq" else pmd_rx)(name, at, tx)
            row[who] = round_checked({"sender": tx, "receiver": rx, "veth": veth_delta(name)}, name, failed, start)
        rows.append(row)
    def med(who, part, key):
        return median(rows, who, part, key)
    res = {"udp_payload": size, "frame": size + 42}
    for who in ("netdaq", "pmd"):
        res[who] = {"rx_pps": med(who, "receiver", "pps"), "received": med(who, "receiver", "received"),
                    "drops": med(who, "receiver", "drops"), "lost": med(who, "receiver", "lost"),
                    "sender_pps": med(who, "sender", "pps"), "sent": med(who, "sender", "sent"),
                    "failed_rounds": sum(1 for x in rows if not x[who]["ok"])} if who in receivers else None
    a, b = (res["netdaq"] or {}).get("rx_pps"), (res["pmd"] or {}).get("rx_pps")
    res["ratio"] = a / b if a and b else None
    res["rounds"] = rows
    if "netdaq" in receivers:
        res["verify"] = verify_round(size)
    results.append(res)

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
print("(medians of the rounds that passed every check)")
print("\nrounds (cpu: busy % of the receiver's / sender's CPU over the middle of the run, softirq in brackets):")
for r in results:
    for x in r["rounds"]:
        for who in receivers:
            e = x[who]
            t, v = e["sender"], e["receiver"]
            c = t.get("cpu", {})
            rc, tc = c.get(f"cpu{rx_cpu}", {}), c.get(f"cpu{tx_cpu}", {})
            if who == "netdaq":
                eng = ", ".join(f"{k}={v_}" for k, v_ in (v.get("engine_counters") or {}).items() if v_) or "-"
                detail = f"drops {reasons_text(v.get('drop_reasons'))}; engine {eng}"
            else:
                detail = f"drops {reasons_text(v.get('drop_reasons'))}"
            print(f"  {r['frame']:>4}B r{x['round']} {who:<6} {'' if e['ok'] else 'FAILED '}sent {num(t.get('sent')):>10} "
                  f"({mpps(t.get('pps'))} Mpps, {t.get('seconds') or 0:.2f} s) rx {num(v.get('received')):>10} "
                  f"lost {num(v.get('lost')):>7}; {detail}; "
                  f"cpu rx {rc.get('busy', '?')}% tx {tc.get('busy', '?')}% ({tc.get('softirq', '?')}%)")
if "netdaq" in receivers:
    print("\nverify rounds (netdaq's socket sender, the receiver checks every payload byte and sequence number; not timed):")
    for r in results:
        e = r["verify"]
        k = e["check"]
        print(f"  {r['frame']:>4}B verify netdaq {'ok' if e['ok'] else 'FAILED':<6} payload "
              f"{max(r['udp_payload'], 64)} B: sent {num(k.get('sent'))}, received {num(k.get('unique'))} intact, "
              f"lost {num(k.get('lost'))}, malformed {num(k.get('malformed'))}, duplicates {num(k.get('duplicates'))}; "
              f"drops {reasons_text(k.get('drop_reasons'))}")
ver = netdaq_version(netdaq)
opts = ", ".join(f"{k}={settings[k]}" for k in ("fill_ring", "rx_ring", "pmd_devargs") if settings[k])
print(f"\n{ver} ({netdaq}); medians of {rounds} rounds of {duration:g} s per receiver; receiver on CPU {rx_cpu}, sender "
      f"(testpmd forwarding lcore) on CPU {tx_cpu}{'; busy loop (' + settings['rx_hog'] + ') on the receiver CPU' if settings['rx_hog'] else ''}"
      f"{'; ' + opts if opts else ''}; {machine(settings)}")
print("rates = packets / sender duration; lost = sent - received (anywhere between sender and receiver)")
print(f"payload verification: {settings['payload_verification']}")
write_json(out, settings, ver, results)
finish()
PY
