#!/usr/bin/env bash
# netdaq's socket engine against iperf3 on loopback, side by side in one run:
# UDP 64 B, 1472 B and 8972 B payloads (iperf3 -u -b 0 -l SIZE) and TCP (iperf3 defaults).
# Both tools get the same CPU placement: sender on the first CPU, receiver on the last
# (iperf3 -A, netdaq bench's default pinning). Rates are the RECEIVER's for both tools:
# iperf3's sum_received (packets = packets - lost_packets), netdaq's unique packets.
#
# usage: bench/socket_vs_iperf3.sh [--duration S] [--json FILE] [--netdaq PATH]
#                                  [--tcp-size BYTES] [--no-pin] [--only CASE[,CASE]]
# Cases: udp64 udp1472 udp8972 tcp. Prints a table; --json writes every figure.
# Targets (from the project brief): udp64 pps >= 1.5x iperf3; udp8972 goodput >= 1.2x
# iperf3 with netdaq loss < 0.1%; tcp >= 1.0x iperf3.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=3
json_out=""
netdaq=""
tcp_size=65536
pin=1
only="udp64,udp1472,udp8972,tcp"
port=47600
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --netdaq) netdaq=$2; shift 2 ;;
    --tcp-size) tcp_size=$2; shift 2 ;;
    --no-pin) pin=0; shift ;;
    --only) only=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
done

if [ -z "$netdaq" ]; then
  for c in "${NETDAQ_BUILD_DIR:-build}/tools/netdaq/netdaq" build-cli/tools/netdaq/netdaq; do
    if [ -x "$c" ]; then netdaq=$c; break; fi
  done
fi
[ -n "$netdaq" ] && [ -x "$netdaq" ] || { echo "netdaq binary not found: build first (scripts/build.sh) or pass --netdaq PATH" >&2; exit 1; }
command -v iperf3 >/dev/null || { echo "iperf3 not found (apt-get install iperf3)" >&2; exit 1; }

tmp=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

ncpu=$(nproc)
tx_cpu=0
rx_cpu=$((ncpu - 1))
iperf_srv_pin=(); iperf_cli_pin=(); netdaq_pin=(--no-pin)
if [ "$pin" = 1 ] && [ "$ncpu" -ge 2 ]; then
  iperf_srv_pin=(-A "$rx_cpu"); iperf_cli_pin=(-A "$tx_cpu"); netdaq_pin=(--tx-cpu "$tx_cpu" --rx-cpu "$rx_cpu")
fi

# iperf3 NAME PROTO SIZE: server (receiver) and client (sender), client JSON to $tmp/NAME.iperf.json
run_iperf() {
  local name=$1 proto=$2 size=$3
  port=$((port + 1))
  iperf3 -s -p "$port" -1 "${iperf_srv_pin[@]}" >/dev/null 2>&1 &
  server_pid=$!
  local args=(-c 127.0.0.1 -p "$port" -t "$duration" -J "${iperf_cli_pin[@]}")
  [ "$proto" = udp ] && args+=(-u -b 0 -l "$size")
  local ok=0
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    sleep 0.2
    if iperf3 "${args[@]}" >"$tmp/$name.iperf.json" 2>/dev/null; then ok=1; break; fi
  done
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  [ "$ok" = 1 ] || echo "iperf3 $name failed: $(head -c 300 "$tmp/$name.iperf.json")" >&2
}

# netdaq NAME PROTO SIZE: bench in one process (sender + receiver threads), JSON to $tmp/NAME.netdaq.json
run_netdaq() {
  local name=$1 proto=$2 size=$3
  port=$((port + 1))
  "$netdaq" bench --json --quiet --protocol "$proto" --size "$size" --duration "$duration" \
    --address "127.0.0.1:$port" "${netdaq_pin[@]}" >"$tmp/$name.netdaq.json" 2>"$tmp/$name.netdaq.err" ||
    echo "netdaq $name failed: $(tail -c 300 "$tmp/$name.netdaq.err")" >&2
}

IFS=, read -r -a cases <<<"$only"
for c in "${cases[@]}"; do
  case "$c" in
    udp64) run_iperf udp64 udp 64; run_netdaq udp64 udp 64 ;;
    udp1472) run_iperf udp1472 udp 1472; run_netdaq udp1472 udp 1472 ;;
    udp8972) run_iperf udp8972 udp 8972; run_netdaq udp8972 udp 8972 ;;
    tcp) run_iperf tcp tcp 0; run_netdaq tcp tcp "$tcp_size" ;;
    *) echo "unknown case $c" >&2; exit 1 ;;
  esac
  echo "done: $c" >&2
done

python3 - "$tmp" "$json_out" "$duration" "$tcp_size" "$pin" "${cases[@]}" <<'PY'
import json, os, sys, platform
tmp, out, duration, tcp_size, pin, cases = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6:]

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception:
        return None

sizes = {"udp64": 64, "udp1472": 1472, "udp8972": 8972, "tcp": None}
rows, results = [], []
for c in cases:
    ip, nd = load(f"{tmp}/{c}.iperf.json"), load(f"{tmp}/{c}.netdaq.json")
    r = {"case": c}
    # iperf3: the receiver's numbers (sum_received); UDP packets = packets - lost_packets.
    if ip and "end" in ip and "sum_received" in ip["end"]:
        s = ip["end"]["sum_received"]
        r["iperf3"] = {"seconds": s["seconds"], "bytes": s["bytes"], "gbps": s["bits_per_second"] / 1e9}
        if c != "tcp":
            rx = s["packets"] - s["lost_packets"]
            r["iperf3"].update(packets=rx, pps=rx / s["seconds"], sent=s["packets"], loss=s["lost_packets"],
                               loss_ratio=s["lost_packets"] / s["packets"] if s["packets"] else 0)
    if nd:
        r["netdaq"] = {k: nd.get(k) for k in ("packets", "bytes", "seconds", "pps", "gbps", "sent", "loss",
                                                "loss_ratio", "duplicates", "reordered", "malformed", "drops", "size")}
    metric = "pps" if c == "udp64" else "gbps"
    a = r.get("iperf3", {}).get(metric)
    b = r.get("netdaq", {}).get(metric)
    r["metric"] = metric
    r["ratio"] = (b / a) if a and b is not None else None
    target = {"udp64": 1.5, "udp8972": 1.2, "tcp": 1.0}.get(c)
    r["target_ratio"] = target
    if target is not None and r["ratio"] is not None:
        ok = r["ratio"] >= target
        if c == "udp8972":
            ok = ok and (r["netdaq"].get("loss_ratio") or 0) < 0.001
        r["meets_target"] = ok
    results.append(r)

def fmt(v, metric):
    if v is None:
        return "-"
    return f"{v/1e6:.3f} Mpps" if metric == "pps" else f"{v:.2f} Gb/s"

def loss(x):
    if not x or x.get("loss_ratio") is None:
        return "-"
    return f"{100*x['loss_ratio']:.3f}%"

hdr = f"{'case':<9} {'iperf3 (anchor)':>16} {'netdaq':>16} {'ratio':>7} {'target':>7} {'iperf3 loss':>12} {'netdaq loss':>12}  {'netdaq Mpps/Gb/s':>18}"
print(hdr)
print("-" * len(hdr))
for r in results:
    m = r["metric"]
    ip, nd = r.get("iperf3", {}), r.get("netdaq", {})
    ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "-"
    tgt = f">={r['target_ratio']}x" if r["target_ratio"] else ""
    mark = "" if "meets_target" not in r else ("  ok" if r["meets_target"] else "  MISSED")
    both = f"{(nd.get('pps') or 0)/1e6:.3f} / {(nd.get('gbps') or 0):.2f}" if nd else "-"
    name = r["case"] if r["case"] != "tcp" else f"tcp({tcp_size})"
    print(f"{name:<9} {fmt(ip.get(m), m):>16} {fmt(nd.get(m), m):>16} {ratio:>7} {tgt:>7} {loss(ip):>12} {loss(nd):>12}  {both:>18}{mark}")
print(f"\n{duration:g} s per run; receiver-side figures; pinning: {'sender cpu 0, receiver last cpu' if pin == '1' else 'none'}; "
      f"{os.cpu_count()} CPUs, kernel {platform.release()}")
if out:
    with open(out, "w") as f:
        json.dump({"duration_s": duration, "tcp_size": tcp_size, "pinned": pin == "1", "cpus": os.cpu_count(),
                   "kernel": platform.release(), "results": results}, f, indent=2)
    print(f"wrote {out}")
PY
