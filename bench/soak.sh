#!/usr/bin/env bash
# A soak: one engine's acquisition at a fraction of its measured maximum rate for a long time,
# counting every drop per reason over time, the receiver's memory (RSS) and open file
# descriptors at the start and the end, and at the end the invariant
#     sent == received + sum(drops)        (every lost packet counted under one reason)
#
#   bench/soak.sh --engine socket|afxdp|dpdk [--fraction F] [--duration S] [--size B]
#                 [--max-pps N] [--max-seconds S] [--json FILE] [--netdaq PATH] [--keep DIR]
#                 [--no-kernel-count]
#
#   --engine      socket: netdaq's socket engine sends and receives over loopback in one process
#                 (UDP, GSO/GRO on). afxdp: netdaq's afxdp engine receives on a veth in namespace
#                 ndqsA<pid>; netdaq's socket engine sends from ndqsB<pid>. dpdk: the dpdk engine
#                 sends and receives through a net_ring vdev in one process (no hugepages).
#   --fraction    of the measured maximum (default 0.9)
#   --duration    seconds of the soak (default 3600; CI runs 120)
#   --size        UDP payload bytes (default 1472)
#   --max-pps     skip the measurement and use this maximum (packets/s)
#   --max-seconds the unpaced measurement's length (default 10)
#   --json        write the result there (default: stdout gets the text only)
#
# First an unpaced run measures the maximum (the receiver's packets/s), then the paced soak
# runs with `netdaq run --stats` (a JSON line per second: drops per reason). The script samples
# the receiving process's VmRSS and fd count every 5 s. It fails (exit status 1, after writing
# everything) when: a process did not end with status 0; sent != received + drops; the stream's
# lost sequence numbers differ from the counted drops; or the receiver's fds grew, or its RSS
# grew by more than 8 MiB + 5% between the sample 5 s in and the last one (pools and rings
# are allocated at open; a growing RSS is a leak). Drops themselves do not fail the soak: at
# 90% of a 2-core machine's maximum some are expected; they must be counted.
#
# Two counts netdaq's queue counters do not make are checked too, for every engine:
# - the payload sequence: the receiver's unique sequence numbers (from the payloads; the
#   sender's count in another process for afxdp): sent - unique == drops, no duplicate, no
#   malformed packet;
# - the packets the layer under netdaq counted: afxdp the veths' counters (ip -s link: the
#   sender's veth passed tx_packets + tx_dropped == sent; the receiver's veth rx_packets ==
#   received + drops); socket (as root) loopback's counters in a network namespace of the
#   soak's own (datagrams = (tx_bytes - 28 x tx_packets) / size: GSO puts many datagrams in one
#   packet, and lo counts each packet's 28-byte IPv4 + UDP header, not Ethernet's): == sent, and rx
#   the same; dpdk the net_ring PMD's port counters (opackets == sent, ipackets == received +
#   drops). Unprivileged (socket), no private namespace can be made: the JSON's kernel_count
#   says so and the soak fails, unless --no-kernel-count says that is meant.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

engine="" fraction=0.9 duration=3600 size=1472 max_pps="" max_seconds=10 json="" netdaq="" keep="" kernel_count=1
while [ $# -gt 0 ]; do
  case $1 in
    --engine) engine=$2; shift 2 ;;
    --fraction) fraction=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --max-pps) max_pps=$2; shift 2 ;;
    --max-seconds) max_seconds=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    --netdaq) netdaq=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --no-kernel-count) kernel_count=0; shift ;;
    -h | --help) usage ;;
    *) bad_option "$1" ;;
  esac
done
case $engine in socket | afxdp | dpdk) ;; *) die "--engine: socket, afxdp or dpdk" ;; esac
[[ "$duration" =~ ^[0-9]+$ ]] && [ "$duration" -ge 20 ] || die "--duration: whole seconds, at least 20"
[[ "$max_seconds" =~ ^[0-9]+$ ]] && [ "$max_seconds" -ge 3 ] || die "--max-seconds: whole seconds, at least 3"
python3 -c "import sys; f=float(sys.argv[1]); sys.exit(0 if 0 < f <= 1 else 1)" "$fraction" 2>/dev/null ||
  die "--fraction: a number in (0, 1]"
[ "$engine" = socket ] || need_root "the $engine engine"
find_netdaq "$engine"
port=47400
lab_init s 211  # $tmp, names, cleanup on exit (namespaces: afxdp's veth lab, socket's own loopback)
[ "$engine" != afxdp ] || lab_up
# socket: sender and receiver in a namespace of their own, whose loopback carries nothing else
socket_ns=0
if [ "$engine" = socket ] && [ "$kernel_count" = 1 ] && [ "$(id -u)" = 0 ]; then
  ip netns add "$ns_a"
  in_ns "$ns_a" ip link set lo up
  socket_ns=1
fi

# link_stats NS DEV FILE: the device's counters (ip -s -j link: stats64) into FILE as JSON
link_stats() { in_ns "$1" ip -s -j link show dev "$2" >"$3" 2>&1 || true; }
# kernel_stats NAME WHEN: the counters of the layer under netdaq (afxdp: both veths; socket in
# its namespace: lo) into $tmp/NAME.WHEN.<dev>.json
kernel_stats() {
  if [ "$engine" = afxdp ]; then
    link_stats "$ns_b" "$veth_b" "$tmp/$1.$2.tx.json"
    link_stats "$ns_a" "$veth_a" "$tmp/$1.$2.rx.json"
  elif [ "$socket_ns" = 1 ]; then
    link_stats "$ns_a" lo "$tmp/$1.$2.lo.json"
  fi
}

# config ROLE RATE: the YAML of the receiver (ROLE rx; socket and dpdk: sender too) or, for
# afxdp, of the sender in the other namespace (ROLE tx), at RATE packets/s (0: unpaced)
config() {
  local role=$1 rate=$2
  case $engine/$role in
    socket/rx)
      echo "memory_regions:"
      echo "  - {name: rx_bufs, kind: host, buf_size: 2048, num_bufs: 8192}"
      echo "  - {name: tx_bufs, kind: host, buf_size: 2048, num_bufs: 4096}"
      echo "interfaces:"
      receiver_interface socket "udp://127.0.0.1:$port" "socket: {rcvbuf: 33554432}"
      sender_interface "udp://127.0.0.1:$port" "$rate" ;;
    dpdk/rx) cat <<EOF
memory_regions:
  - {name: rx_bufs, kind: host, buf_size: 2048, num_bufs: 8192}
  - {name: tx_bufs, kind: host, buf_size: 2048, num_bufs: 8192}
interfaces:
  - name: ring
    engine: dpdk
    address: net_ring0
    rx:
      queues:
        - {id: 0, mode: direct, batch_size: 64, memory_regions: [rx_bufs]}
    tx:
      destination: udp://10.0.0.2:$port
      rate_pps: $rate
      queues:
        - {id: 0, batch_size: 64, memory_regions: [tx_bufs]}
    dpdk: {dst_mac: "02:00:00:00:00:02", src_ip: 10.0.0.1}
eal: {hugepages: false, file_prefix: ${prefix}_soak}
EOF
      ;;
    afxdp/rx)
      echo "memory_regions:"
      echo "  - {name: rx_bufs, kind: host, buf_size: 2048, num_bufs: 8192}"
      echo "interfaces:"
      receiver_interface afxdp "$veth_a" "afxdp: {fill_ring: 4096, rx_ring: 4096}" \
        "      flows: [{id: 0, queue: 0, match: {udp_dst: $port}}]" ;;
    afxdp/tx) socket_sender_yaml "udp://$ip_a:$port" "$rate" 4096 ;;
  esac
  echo "run: {tx_payload_size: $size}"
  echo "log: {level: warn}"
}

# receiver_interface ENGINE ADDRESS OPTIONS [RX_EXTRA]: interface "receiver" with one direct
# rx queue in region rx_bufs, the engine's options block, and RX_EXTRA lines under rx:
receiver_interface() {
  cat <<EOF
  - name: receiver
    engine: $1
    address: $2
    rx:
      queues:
        - {id: 0, mode: direct, batch_size: 64, ring_depth: 64, memory_regions: [rx_bufs]}
EOF
  [ -z "${4:-}" ] || echo "$4"
  echo "    $3"
}

# sample PID FILE: "<seconds since start> <VmRSS kB> <fds>" of PID every 5 s while it runs
# (checked every second, so that the sampler ends with the process)
sample() {
  local t0=$SECONDS next=0 rss fds
  while kill -0 "$1" 2>/dev/null; do
    if [ $((SECONDS - t0)) -ge "$next" ]; then
      rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || true)
      fds=$(find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l || true)
      [ -z "$rss" ] || echo "$((SECONDS - t0)) $rss $fds" >>"$2"
      next=$((next + 5))
    fi
    sleep 1
  done
}

# phase NAME RATE SECONDS: one run (receiver, and for afxdp the sender in the other namespace);
# the receiver's summary in $tmp/NAME.json, its stats lines in $tmp/NAME.stats, samples in
# $tmp/NAME.samples, the sender's summary (afxdp) in $tmp/NAME.tx.json; exit statuses in .rc
phase() {
  local name=$1 rate=$2 secs=$3 rx_pid tx_pid="" sampler
  config rx "$rate" >"$tmp/$name.yaml"
  kernel_stats "$name" before
  if [ "$engine" = afxdp ]; then
    config tx "$rate" >"$tmp/$name.tx.yaml"
    in_ns "$ns_b" ip neigh replace "$ip_a" lladdr "$mac_a" dev "$veth_b" nud permanent
    nsenter --net=/run/netns/"$ns_a" -- "$netdaq" run "$tmp/$name.yaml" -q -d "$((secs + 4))" --json "$tmp/$name.json" \
      --stats "$tmp/$name.stats" >"$tmp/$name.out" 2>&1 &
    rx_pid=$!
    track "$rx_pid"
    sleep 2  # the XDP program and sockets are up
    nsenter --net=/run/netns/"$ns_b" -- "$netdaq" run "$tmp/$name.tx.yaml" -q -d "$secs" --json "$tmp/$name.tx.json" \
      >"$tmp/$name.tx.out" 2>&1 &
    tx_pid=$!
    track "$tx_pid"
  elif [ "$socket_ns" = 1 ]; then
    nsenter --net=/run/netns/"$ns_a" -- "$netdaq" run "$tmp/$name.yaml" -q -d "$secs" --json "$tmp/$name.json" \
      --stats "$tmp/$name.stats" >"$tmp/$name.out" 2>&1 &
    rx_pid=$!
    track "$rx_pid"
  else
    "$netdaq" run "$tmp/$name.yaml" -q -d "$secs" --json "$tmp/$name.json" --stats "$tmp/$name.stats" \
      >"$tmp/$name.out" 2>&1 &
    rx_pid=$!
    track "$rx_pid"
  fi
  sample "$rx_pid" "$tmp/$name.samples" &
  sampler=$!
  # A bound on every process: the run's own duration plus a margin, then SIGKILL.
  # (Its output goes nowhere: a pipe held open by its sleep would keep the caller waiting.)
  ( sleep $((secs + 60)); kill -9 "$rx_pid" ${tx_pid:+"$tx_pid"} ) >/dev/null 2>&1 &
  local watchdog=$! rc=0
  if [ -n "$tx_pid" ]; then
    wait "$tx_pid" || rc=$?
    untrack "$tx_pid"
    echo "$rc" >"$tmp/$name.tx.rc"
    rc=0
  fi
  wait "$rx_pid" || rc=$?
  untrack "$rx_pid"
  echo "$rc" >"$tmp/$name.rc"
  pkill -P "$watchdog" 2>/dev/null || true
  kill "$watchdog" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  kernel_stats "$name" after
}

echo "soak: engine $engine, $size B payloads, $netdaq" >&2
if [ -z "$max_pps" ]; then
  echo "soak: measuring the maximum (unpaced, ${max_seconds} s)" >&2
  phase max 0 "$max_seconds"
  max_pps=$(python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
rx = [q for q in d['queues'] if q['direction'] == 'rx']
print(int(sum(q['pps'] for q in rx)))" "$tmp/max.json") || die "the unpaced run wrote no result: $(one_line "$tmp/max.out" 5)"
fi
rate=$(python3 -c "import sys; print(int(float(sys.argv[1]) * float(sys.argv[2])))" "$max_pps" "$fraction")
echo "soak: maximum $max_pps pps; soaking at $rate pps ($fraction) for $duration s" >&2
phase soak "$rate" "$duration"

python3 - "$tmp" "$engine" "$size" "$fraction" "$max_pps" "$rate" "$duration" "$json" "$socket_ns" "$kernel_count" <<'PY'
import json, sys
tmp, engine, size, fraction, max_pps, rate, duration, out, socket_ns, kernel_count = sys.argv[1:]
failures = []

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def lines(path):
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip()]
    except (OSError, ValueError):
        return []

def rc(path):
    try:
        return int(open(path).read())
    except (OSError, ValueError):
        return None

rx = load(f"{tmp}/soak.json")
tx = load(f"{tmp}/soak.tx.json") if engine == "afxdp" else rx
for who, path in [("receiver", "soak.rc")] + ([("sender", "soak.tx.rc")] if engine == "afxdp" else []):
    if rc(f"{tmp}/{path}") != 0:
        failures.append(f"the {who} exited with {rc(f'{tmp}/{path}')}: see its output")
if not rx or not tx:
    failures.append("a summary is missing (the run did not finish)")
    print(open(f"{tmp}/soak.out").read()[-2000:], file=sys.stderr)

def queues(d, direction):
    return [q for q in (d or {}).get("queues", []) if q["direction"] == direction]

sent = sum(q["packets"] for q in queues(tx, "tx"))
received = sum(q["packets"] for q in queues(rx, "rx"))
drops = {}
for q in queues(rx, "rx"):
    for k, v in q["drops"].items():
        drops[k] = drops.get(k, 0) + v
tx_drops = {}
for q in queues(tx, "tx"):
    for k, v in q["drops"].items():
        if v:
            tx_drops[k] = tx_drops.get(k, 0) + v
counted = sum(drops.values())
lost = sum(s.get("lost", 0) for s in (rx or {}).get("streams", []))
if rx and tx:
    if sent != received + counted:
        failures.append(f"sent {sent} != received {received} + drops {counted} (uncounted: {sent - received - counted})")

# The payload sequence, for every engine: the unique sequence numbers the receiver read from the
# payloads against what the sender sent (its stream's count in one process; afxdp's sender is
# another process, so its tx packets), with no duplicate and no malformed packet.
streams = (rx or {}).get("streams", [])
seq = {"unique": sum(s.get("unique", 0) for s in streams), "duplicates": sum(s.get("duplicates", 0) for s in streams),
       "malformed": ((rx or {}).get("totals") or {}).get("malformed")}
seq["sent"] = sent if engine == "afxdp" else sum(s.get("sent", 0) for s in streams)
seq["lost"] = seq["sent"] - seq["unique"]
if rx and tx:
    if not streams:
        failures.append("payload sequence: the receiver saw no netdaq stream")
    if engine != "afxdp" and seq["sent"] != sent:
        failures.append(f"payload sequence: the stream's sent {seq['sent']} != the tx queue's packets {sent}")
    if seq["lost"] != counted:
        failures.append(f"payload sequence: sent {seq['sent']} - unique sequence numbers received {seq['unique']} = "
                        f"{seq['lost']} != counted drops {counted}")
    if seq["duplicates"] or seq["malformed"] is None or seq["malformed"]:
        failures.append(f"payload sequence: duplicates {seq['duplicates']}, malformed {seq['malformed']}")

# The layer under netdaq: what it counted over the soak (deltas of its counters)
def link(path):
    d = load(path)
    try:
        return d[0]["stats64"]
    except (TypeError, LookupError, KeyError):
        return None

def delta(dev, direction, key):
    a, b = link(f"{tmp}/soak.before.{dev}.json"), link(f"{tmp}/soak.after.{dev}.json")
    if a is None or b is None:
        failures.append(f"kernel count: no counters of the {dev} device ({tmp}/soak.*.{dev}.json)")
        return 0
    return b[direction][key] - a[direction][key]

def engine_counter(q, name):
    return (q.get("engine") or {}).get(name)  # the run JSON's queue: "engine": {its engine_counters}

kernel = {"source": None}
if rx and tx:
    if engine == "afxdp":
        kernel = {"source": "veth counters (ip -s link)", "sender_veth_tx_packets": delta("tx", "tx", "packets"),
                  "sender_veth_tx_dropped": delta("tx", "tx", "dropped"),
                  "receiver_veth_rx_packets": delta("rx", "rx", "packets")}
        passed = kernel["sender_veth_tx_packets"] + kernel["sender_veth_tx_dropped"]
        if passed != sent:
            failures.append(f"veth counters: the sender's veth passed {passed} (tx_packets {kernel['sender_veth_tx_packets']}"
                            f" + tx_dropped {kernel['sender_veth_tx_dropped']}) != netdaq sent {sent}")
        if kernel["receiver_veth_rx_packets"] != received + counted:
            failures.append(f"veth counters: the receiver's veth rx_packets {kernel['receiver_veth_rx_packets']} != "
                            f"netdaq received {received} + drops {counted}")
    elif engine == "socket" and socket_ns == "1":
        hdr = 20 + 8  # IPv4 + UDP, once per (GSO) packet on lo (its counters start after the Ethernet header)
        def datagrams(direction):
            nbytes, pk = delta("lo", direction, "bytes"), delta("lo", direction, "packets")
            n, rest = divmod(nbytes - hdr * pk, int(size))
            if rest:
                failures.append(f"loopback counters: {direction} {nbytes} bytes in {pk} packets is no whole number of "
                                f"{size}-byte datagrams (other traffic on the soak's loopback?)")
            return n
        kernel = {"source": "loopback counters in the soak's network namespace (ip -s link)",
                  "tx_datagrams": datagrams("tx"), "rx_datagrams": datagrams("rx")}
        for k in ("tx_datagrams", "rx_datagrams"):
            if kernel[k] != sent:
                failures.append(f"loopback counters: {k} {kernel[k]} != netdaq sent {sent}")
    elif engine == "dpdk":
        rq, tq = (queues(rx, "rx") or [{}])[0], (queues(tx, "tx") or [{}])[0]
        kernel = {"source": "net_ring PMD port counters", "port_opackets": engine_counter(tq, "port_opackets"),
                  "port_ipackets": engine_counter(rq, "port_ipackets")}
        if kernel["port_opackets"] is None or kernel["port_ipackets"] is None:
            failures.append("PMD counters: port_opackets / port_ipackets missing from the queues' engine_counters")
        else:
            if kernel["port_opackets"] != sent:
                failures.append(f"PMD counters: port_opackets {kernel['port_opackets']} != netdaq sent {sent}")
            if kernel["port_ipackets"] != received + counted:
                failures.append(f"PMD counters: port_ipackets {kernel['port_ipackets']} != received {received} + "
                                f"drops {counted}")
    elif kernel_count == "1":
        failures.append("kernel count: the socket soak's own loopback needs a network namespace (root); "
                        "--no-kernel-count runs without that check")
    else:
        kernel = {"source": None, "why": "--no-kernel-count"}

samples = []
try:
    for l in open(f"{tmp}/soak.samples"):
        t, rss, fds = map(int, l.split())
        samples.append({"t": t, "rss_kb": rss, "fds": fds})
except OSError:
    pass
start = next((s for s in samples if s["t"] >= 5), samples[0] if samples else None)  # pools are touched by then
end = samples[-1] if samples else None
if not start or not end or start is end:
    failures.append("too few RSS/fd samples")
else:
    if end["fds"] > start["fds"]:
        failures.append(f"open fds grew from {start['fds']} to {end['fds']}")
    if end["rss_kb"] > start["rss_kb"] * 1.05 + 8192:
        failures.append(f"RSS grew from {start['rss_kb']} kB to {end['rss_kb']} kB")

stats = lines(f"{tmp}/soak.stats")
over_time = []  # a point per minute (and the last): cumulative drops per reason
for i, s in enumerate(stats):
    if i % 60 == 59 or i == len(stats) - 1:
        over_time.append({"t": round(s["t"], 1), "rx_packets": s["rx_packets"], "rx_pps": round(s["rx_pps"]),
                          "drops": {k: v for k, v in s["drops"].items() if v}})
result = {
    "engine": engine, "payload": int(size), "fraction": float(fraction), "max_pps": int(max_pps),
    "rate_pps": int(rate), "duration_s": int(duration),
    "sent": sent, "received": received, "drops": drops, "tx_drops": tx_drops, "lost": lost,
    "payload_sequence": seq, "kernel_count": kernel,
    "invariant": f"{sent} == {received} + {counted}", "invariant_ok": bool(rx and tx and sent == received + counted),
    "start": start, "end": end, "samples": samples, "over_time": over_time,
    "mode": [q.get("mode", "") for q in queues(rx, "rx")],
    "ok": not failures, "failures": failures,
}
if out:
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
nz = ", ".join(f"{k} {v:,}" for k, v in drops.items() if v) or "none"
print(f"soak {engine}: {duration} s at {int(rate):,} pps ({float(fraction):.0%} of {int(max_pps):,}), {size} B")
print(f"  sent {sent:,}  received {received:,}  drops {counted:,} ({nz})  lost {lost:,}")
print(f"  invariant sent == received + drops: {'holds' if result['invariant_ok'] else 'BROKEN'}")
print(f"  payload sequence: sent {seq['sent']:,}, unique {seq['unique']:,}, lost {seq['lost']:,}, "
      f"duplicates {seq['duplicates']:,}, malformed {seq['malformed']}")
print(f"  independent count: {kernel.get('source') or kernel.get('why') or 'none'}: "
      + ", ".join(f"{k} {v:,}" for k, v in kernel.items() if isinstance(v, int)))
if start and end:
    print(f"  receiver RSS {start['rss_kb']:,} kB at {start['t']} s -> {end['rss_kb']:,} kB at {end['t']} s; "
          f"fds {start['fds']} -> {end['fds']}")
for f in failures:
    print(f"FAILED: {f}")
sys.exit(1 if failures else 0)
PY
