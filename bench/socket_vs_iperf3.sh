#!/usr/bin/env bash
# netdaq's socket engine against iperf3 on loopback, side by side in one run:
# UDP 64 B, 1472 B and 8972 B payloads (iperf3 -u -b 0 -l SIZE) and TCP (iperf3 defaults).
#
# For each UDP size: iperf3 unpaced, netdaq unpaced (the same test), then netdaq paced at
# the target multiple of what iperf3 delivered, to check the loss at that rate. For TCP:
# iperf3 and netdaq (--tcp-size byte messages). Rates are the RECEIVER's for both tools:
# iperf3's sum_received (packets = packets - lost_packets), netdaq's unique packets over
# first-to-last packet; Gb/s are payload bits (goodput). Both tools get the same CPU
# placement: sender on the first CPU, receiver on the last (iperf3 -A, netdaq bench's pins).
#
# usage: bench/socket_vs_iperf3.sh [--duration S] [--repeat N] [--json FILE] [--netdaq PATH]
#            [--tcp-size BYTES] [--no-pin] [--rt] [--only udp64,udp1472,udp8972,tcp] [--port N]
# --rt runs both tools under SCHED_FIFO (chrt -f 10, needs root) so that other load on a
# shared machine does not preempt either of them (the kernel's RT throttling still leaves
# 5% of each CPU to everything else).
# Targets: udp64 pps >= 1.5x iperf3; udp8972 goodput >= 1.2x iperf3 with loss < 0.1% at
# that rate; tcp >= 1.0x iperf3. Each case runs --repeat times (default 3, alternating the
# tools) and the table shows medians. About 100 s with the defaults (2 s per run).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh  # usage, bad_option, die

duration=2
repeat=3
json_out=""
netdaq=""
tcp_size=8972
pin=1
rt=()
only="udp64,udp1472,udp8972,tcp"
port=47600
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --netdaq) netdaq=$2; shift 2 ;;
    --tcp-size) tcp_size=$2; shift 2 ;;
    --no-pin) pin=0; shift ;;
    --rt) rt=(chrt -f 10); shift ;;
    --only) only=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    -h|--help) usage ;;
    *) bad_option "$1" ;;
  esac
done

if [ -z "$netdaq" ]; then
  for c in "${NETDAQ_BUILD_DIR:-build}/tools/netdaq/netdaq" build/tools/netdaq/netdaq build-cli/tools/netdaq/netdaq; do
    if [ -x "$c" ]; then netdaq=$c; break; fi
  done
fi
[ -n "$netdaq" ] && [ -x "$netdaq" ] || die "netdaq binary not found: build first (scripts/build.sh) or pass --netdaq PATH"
command -v iperf3 >/dev/null || die "iperf3 not found (apt-get install iperf3)"

tmp=$(mktemp -d)
server_pid=""
cleanup() { if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi; rm -rf "$tmp"; }
trap cleanup EXIT

ncpu=$(nproc)
iperf_srv_pin=(); iperf_cli_pin=(); netdaq_pin=(--no-pin)
if [ "$pin" = 1 ] && [ "$ncpu" -ge 2 ]; then
  iperf_srv_pin=(-A "$((ncpu - 1))"); iperf_cli_pin=(-A 0); netdaq_pin=(--tx-cpu 0 --rx-cpu "$((ncpu - 1))")
fi

# run_iperf NAME PROTO SIZE: server (receiver) and client (sender); client JSON in $tmp/NAME.iperf.json
run_iperf() {
  local name=$1 proto=$2 size=$3
  port=$((port + 1))
  "${rt[@]}" iperf3 -s -p "$port" -1 "${iperf_srv_pin[@]}" >/dev/null 2>&1 &
  server_pid=$!
  local args=(-c 127.0.0.1 -p "$port" -t "$duration" -J "${iperf_cli_pin[@]}")
  if [ "$proto" = udp ]; then args+=(-u -b 0 -l "$size"); fi
  local ok=0
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    sleep 0.2
    if "${rt[@]}" iperf3 "${args[@]}" >"$tmp/$name.iperf.json" 2>/dev/null; then ok=1; break; fi
  done
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  [ "$ok" = 1 ] || echo "iperf3 $name failed: $(head -c 300 "$tmp/$name.iperf.json")" >&2
}

# run_netdaq FILE PROTO SIZE [extra bench options]: sender and receiver threads in one process
run_netdaq() {
  local file=$1 proto=$2 size=$3
  shift 3
  port=$((port + 1))
  "${rt[@]}" "$netdaq" bench --json --quiet --protocol "$proto" --size "$size" --duration "$duration" \
    --address "127.0.0.1:$port" "${netdaq_pin[@]}" "$@" >"$tmp/$file.json" 2>"$tmp/$file.err" ||
    echo "netdaq $file failed: $(tail -c 300 "$tmp/$file.err")" >&2
}

# iperf3's receiver rate of NAME: pps or Mb/s, times FACTOR
iperf_rate() {
  python3 - "$tmp/$1.iperf.json" "$2" "$3" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))["end"]["sum_received"]
except Exception:
    print(0); sys.exit()
f = float(sys.argv[3])
if sys.argv[2] == "pps":
    print(f"{(s['packets'] - s['lost_packets']) / s['seconds'] * f:.0f}")
else:
    print(f"{s['bits_per_second'] / 1e6 * f:.1f}")
PY
}

udp_case() {  # NAME SIZE METRIC FACTOR
  local name=$1 size=$2 metric=$3 factor=$4
  run_iperf "$name" udp "$size"
  run_netdaq "$name.netdaq" udp "$size"
  local rate
  rate=$(iperf_rate "$name" "$metric" "$factor")
  if [ "${rate%.*}" -gt 0 ]; then
    if [ "$metric" = pps ]; then run_netdaq "$name.paced" udp "$size" --rate-pps "$rate"
    else run_netdaq "$name.paced" udp "$size" --rate-mbps "$rate"; fi
  fi
}

IFS=, read -r -a cases <<<"$only"
for ((r = 1; r <= repeat; r++)); do
  for c in "${cases[@]}"; do
    case "$c" in
      udp64) udp_case "udp64.$r" 64 pps 1.5 ;;
      udp1472) udp_case "udp1472.$r" 1472 mbps 1.2 ;;
      udp8972) udp_case "udp8972.$r" 8972 mbps 1.2 ;;
      tcp) run_iperf "tcp.$r" tcp 0; run_netdaq "tcp.$r.netdaq" tcp "$tcp_size" ;;
      *) die "unknown case $c" ;;
    esac
  done
  echo "round $r of $repeat done" >&2
done

python3 - "$tmp" "$json_out" "$duration" "$tcp_size" "$pin" "$netdaq" "$repeat" "${#rt[@]}" "${cases[@]}" <<'PY'
import json, os, platform, statistics, subprocess, sys
tmp, out, duration, tcp_size, pin, netdaq, repeat, rt, cases = (
    sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1", sys.argv[6], int(sys.argv[7]),
    sys.argv[8] != "0", sys.argv[9:])

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception:
        return None

def nd_fields(d):
    if not d:
        return None
    keep = ("packets", "bytes", "seconds", "pps", "gbps", "sent", "loss", "loss_ratio", "duplicates", "reordered",
            "malformed", "drops", "size", "batch")
    r = {k: d.get(k) for k in keep}
    r["drops"] = {k: v for k, v in (d.get("drops") or {}).items() if v}
    return r

targets = {"udp64": ("pps", 1.5), "udp1472": ("gbps", 1.2), "udp8972": ("gbps", 1.2), "tcp": ("gbps", 1.0)}

def one_round(c, r):
    metric, factor = targets[c]
    x = {"round": r}
    ip = load(f"{tmp}/{c}.{r}.iperf.json")
    if ip and "sum_received" in ip.get("end", {}):
        s = ip["end"]["sum_received"]
        x["iperf3"] = {"seconds": s["seconds"], "bytes": s["bytes"], "gbps": s["bits_per_second"] / 1e9}
        if c != "tcp":
            rx = s["packets"] - s["lost_packets"]
            x["iperf3"].update(packets=rx, pps=rx / s["seconds"], sent=s["packets"], loss=s["lost_packets"],
                               loss_ratio=s["lost_packets"] / s["packets"] if s["packets"] else 0)
    x["netdaq"] = nd_fields(load(f"{tmp}/{c}.{r}.netdaq.json"))
    x["netdaq_paced"] = nd_fields(load(f"{tmp}/{c}.{r}.paced.json"))
    return x

def median_of(rounds, key):
    """Median of each numeric field of rounds[i][key] over the rounds that have it."""
    vals = [r[key] for r in rounds if r.get(key)]
    if not vals:
        return None
    m = {}
    for f, v in vals[0].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            m[f] = statistics.median([x[f] for x in vals if isinstance(x.get(f), (int, float))])
    return m

results = []
for c in cases:
    metric, factor = targets[c]
    rounds = [one_round(c, r) for r in range(1, repeat + 1)]
    res = {"case": c, "metric": metric, "target_ratio": factor, "rounds": rounds}
    for key in ("iperf3", "netdaq", "netdaq_paced"):
        res[key] = median_of(rounds, key)
    a = (res["iperf3"] or {}).get(metric)
    for key in ("netdaq", "netdaq_paced"):
        b = (res[key] or {}).get(metric)
        res[key + "_ratio"] = b / a if a and b is not None else None
    # Verdicts against the brief's targets (on the medians).
    if c == "udp64" and res["netdaq_ratio"] is not None:
        res["meets_target"] = res["netdaq_ratio"] >= factor
    elif c == "udp8972" and res["netdaq_paced_ratio"] is not None:
        # Goodput >= 1.2x iperf3 with < 0.1% loss: either the unpaced run shows it directly,
        # or the run paced at 1.2x (1% allowed for the pacer and first-to-last timing).
        unpaced_ok = (res["netdaq_ratio"] is not None and res["netdaq_ratio"] >= factor and
                      (res["netdaq"].get("loss_ratio") or 0) < 0.001)
        paced_ok = (res["netdaq_paced_ratio"] >= factor * 0.99 and
                    (res["netdaq_paced"].get("loss_ratio") or 0) < 0.001)
        res["meets_target"] = unpaced_ok or paced_ok
    elif c == "tcp" and res["netdaq_ratio"] is not None:
        res["meets_target"] = res["netdaq_ratio"] >= factor
    results.append(res)

def rate(x, m):
    if not x or x.get(m) is None:
        return "-"
    return f"{x[m]/1e6:.3f} Mpps" if m == "pps" else f"{x[m]:.2f} Gb/s"

def loss(x):
    if not x or x.get("loss_ratio") is None:
        return "-"
    return f"{100*x['loss_ratio']:.3f}%"

def ratio(v):
    return f"{v:.2f}x" if v is not None else "-"

hdr = (f"{'case':<10} {'iperf3 rx':>12} {'loss':>8} | {'netdaq rx':>12} {'loss':>8} {'ratio':>7} | "
       f"{'netdaq paced':>12} {'loss':>8} {'ratio':>7} | {'target':<26} {'':>6}")
print(hdr)
print("-" * len(hdr))
for r in results:
    m = r["metric"]
    goal = {"udp64": ">=1.5x pps", "udp1472": "(none; paced at 1.2x)", "udp8972": ">=1.2x, loss<0.1% (paced)",
            "tcp": ">=1.0x"}[r["case"]]
    verdict = "" if "meets_target" not in r else ("ok" if r["meets_target"] else "MISSED")
    name = r["case"] if r["case"] != "tcp" else f"tcp/{tcp_size}"
    print(f"{name:<10} {rate(r.get('iperf3'), m):>12} {loss(r.get('iperf3')):>8} | {rate(r['netdaq'], m):>12} "
          f"{loss(r['netdaq']):>8} {ratio(r['netdaq_ratio']):>7} | {rate(r['netdaq_paced'], m):>12} "
          f"{loss(r['netdaq_paced']):>8} {ratio(r['netdaq_paced_ratio']):>7} | {goal:<26} {verdict:>6}")
try:
    ver = subprocess.run([netdaq, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
except Exception:
    ver = "netdaq"
print(f"\n{ver}, iperf3 {subprocess.run(['iperf3', '--version'], capture_output=True, text=True).stdout.split()[1]}; "
      f"medians of {repeat} rounds of {duration:g} s; receiver-side figures; pinning: {'sender cpu 0, receiver last cpu' if pin else 'none'}; "
      f"{'SCHED_FIFO; ' if rt else ''}"
      f"{os.cpu_count()} CPUs, kernel {platform.release()}, load average {os.getloadavg()[0]:.2f}")
print("netdaq rx = unpaced (like iperf3 -b 0); netdaq paced = --rate-pps/--rate-mbps at the target x iperf3's rx rate")
if out:
    with open(out, "w") as f:
        json.dump({"duration_s": duration, "repeat": repeat, "rt": rt, "tcp_size": tcp_size, "pinned": pin, "cpus": os.cpu_count(),
                   "kernel": platform.release(), "netdaq": ver, "results": results}, f, indent=2)
    print(f"wrote {out}")
PY
