#!/usr/bin/env bash
# RDMA SEND round-trip latency: netdaq's ping-pong against ib_send_lat, both as two processes
# on two CPUs, in the QEMU guest of tests/guest/run-in-guest.sh on the two Soft-RoCE devices of
# tests/guest/rdma-lab.sh (the dev and CI kernels have no RDMA). Both measure round trip / 2,
# one message in flight, busy polling, 64 B, RC:
#   ib_send_lat: server `ib_send_lat -d DEV1 -s 64 -n N -F` on CPU 1, client on CPU 0 (device 0
#                to 10.77.0.2); t_typical (the median), 99%, 99.9% and t_max of its result line;
#   netdaq:      `netdaq bench --protocol rdma --ping-pong --role server` on device 1 / CPU 1 and
#                `--role client --source 10.77.0.1` on CPU 0, N messages, --no-verify (headers
#                only, as perftest); p50, p99, p99.9, max of its JSON.
# Rounds alternate the tools (odd rounds ib_send_lat first); the medians and the ratio netdaq
# p50 / t_typical (target <= 1.2) are printed and written as JSON. Under TCG rxe is ~100x
# slower than hardware: only the ratio means anything.
#
# usage: bench/rdma_pingpong_guest.sh [--rounds N] [--iters N] [--json FILE] [--netdaq PATH] [--cache DIR]
# Defaults: 5 rounds of 2000 messages; JSON bench/results/rdma-pingpong-guest.json. Fails (exit
# 1) on a missing figure, a process exiting non-zero, or a netdaq message lost / not echoed.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh  # usage, bad_option, die, find_netdaq

json_out=bench/results/rdma-pingpong-guest.json
netdaq=""
cache=build/guest
rounds=5
iters=2000
in_guest=0
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json_out=$2; shift 2 ;;
    --netdaq) netdaq=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --in-guest) in_guest=1; shift ;;
    -h|--help) usage ;;
    *) bad_option "$1" ;;
  esac
done
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] || die "--rounds: >= 1"
[[ "$iters" =~ ^[0-9]+$ ]] && [ "$iters" -ge 10 ] || die "--iters: >= 10"

if [ "$in_guest" = 0 ]; then
  find_netdaq rdma
  command -v ib_send_lat >/dev/null || die "ib_send_lat not found (apt-get install perftest)"
  out=$(mktemp)
  trap 'rm -f "$out"' EXIT
  tests/guest/prepare-guest.sh "$cache"
  guest_rc=0
  tests/guest/run-in-guest.sh --cache "$cache" --timeout 1200 -- "$0" --in-guest --netdaq "$netdaq" \
    --rounds "$rounds" --iters "$iters" | tee "$out" | grep --line-buffered -v '^RESULT_JSON ' || guest_rc=$?
  mkdir -p "$(dirname "$json_out")"
  sed -n 's/^RESULT_JSON //p' "$out" >"$json_out"
  [ -s "$json_out" ] || die "no results came back from the guest (exit status $guest_rc)"
  echo "JSON: $json_out"
  [ "$guest_rc" = 0 ] || die "FAILED: the guest run exited with $guest_rc (see above)"
  exit 0
fi

# ---- in the guest ----
eval "$(tests/guest/rdma-lab.sh up)"
dir=$(mktemp -d)
server=""
trap '[ -z "$server" ] || kill "$server" 2>/dev/null || true; tests/guest/rdma-lab.sh down >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
port=19800

perftest_round() {  # R: ib_send_lat, server on device 1 / CPU 1, client on device 0 / CPU 0
  port=$((port + 1))
  taskset -c 1 timeout 300 ib_send_lat -d "$NDQ_RDMA_DEV1" -x "$NDQ_RDMA_GID_INDEX1" -s 64 -n "$iters" -F -p "$port" \
    >"$dir/perftest.$1.server" 2>&1 &
  server=$!
  sleep 1
  local rc=0
  taskset -c 0 timeout 300 ib_send_lat -d "$NDQ_RDMA_DEV0" -x "$NDQ_RDMA_GID_INDEX0" -s 64 -n "$iters" -F -p "$port" \
    "$NDQ_RDMA_IP1" >"$dir/perftest.$1.client" 2>&1 || rc=$?
  local src=0
  wait "$server" || src=$?
  server=""
  echo "$rc $src" >"$dir/perftest.$1.rc"
}

netdaq_round() {  # R: netdaq's server on device 1 / CPU 1, its client on device 0 / CPU 0
  port=$((port + 2))
  taskset -c 1 timeout 300 "$netdaq" bench --protocol rdma --ping-pong --role server --size 64 --no-verify \
    --address "$NDQ_RDMA_IP1:$port" --echo-destination "$NDQ_RDMA_IP0:$((port + 1))" --idle-timeout 5 \
    --no-pin --quiet --json >"$dir/netdaq.$1.server" 2>"$dir/netdaq.$1.server.err" &
  server=$!
  sleep 1
  local rc=0
  taskset -c 0 timeout 300 "$netdaq" bench --protocol rdma --ping-pong --role client --size 64 --no-verify \
    --count "$iters" --address "$NDQ_RDMA_IP1:$port" --source "$NDQ_RDMA_IP0" \
    --echo-address "$NDQ_RDMA_IP0:$((port + 1))" --no-pin --quiet --json \
    >"$dir/netdaq.$1.client" 2>"$dir/netdaq.$1.client.err" || rc=$?
  kill -INT "$server" 2>/dev/null || true
  local src=0
  wait "$server" || src=$?
  server=""
  echo "$rc $src" >"$dir/netdaq.$1.rc"
  [ "$rc" = 0 ] || tail -3 "$dir/netdaq.$1.client.err" >&2
  [ "$src" = 0 ] || tail -3 "$dir/netdaq.$1.server.err" >&2
}

echo "rdma_pingpong_guest: $(uname -r), $(rdma link show | tr '\n' ' ')" >&2
for ((r = 1; r <= rounds; r++)); do
  if ((r % 2)); then perftest_round "$r"; netdaq_round "$r"; else netdaq_round "$r"; perftest_round "$r"; fi
  echo "round $r of $rounds done" >&2
done

python3 - "$dir" "$rounds" "$iters" <<'PY'
import json, statistics, sys
d, rounds, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
failures, per = [], {"ib_send_lat": [], "netdaq": []}
FIG = ["p50", "p99", "p99.9", "max"]

def text(p):
    try:
        return open(p).read()
    except OSError:
        return ""

for r in range(1, rounds + 1):
    at = f"round {r}, ib_send_lat"
    rc = text(f"{d}/perftest.{r}.rc").split()
    f = {"round": r}
    if rc != ["0", "0"]:
        failures.append(f"{at}: exited {rc} (client, server)")
    # #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
    rows = [l.split() for l in text(f"{d}/perftest.{r}.client").splitlines() if l.split()[:1] == ["64"]]
    if rows and len(rows[-1]) >= 9:
        v = rows[-1]
        f.update({"p50": float(v[4]), "p99": float(v[7]), "p99.9": float(v[8]), "max": float(v[3]), "min": float(v[2])})
    else:
        failures.append(f"{at}: figure missing: ib_send_lat printed no result line")
    per["ib_send_lat"].append(f)
    at = f"round {r}, netdaq"
    rc = text(f"{d}/netdaq.{r}.rc").split()
    g = {"round": r}
    if rc != ["0", "0"]:
        failures.append(f"{at}: exited {rc} (client, server)")
    try:
        c = json.loads(text(f"{d}/netdaq.{r}.client"))
        s = json.loads(text(f"{d}/netdaq.{r}.server"))
    except ValueError:
        c, s = {}, {}
        failures.append(f"{at}: figure missing: netdaq JSON")
    lat = c.get("latency_us") or {}
    for k in FIG + ["min"]:
        g[k] = lat.get(k)
        if g[k] is None:
            failures.append(f"{at}: figure missing: {k}")
    if c.get("quantity") not in (None, "round trip / 2"):
        failures.append(f"{at}: netdaq measured {c.get('quantity')!r}")
    g["messages"], g["returned"], g["loss"] = c.get("messages"), c.get("returned"), c.get("loss")
    g["server_echoed"], g["server_malformed"], g["server_unsent"] = s.get("echoed"), s.get("malformed"), s.get("unsent")
    if g["loss"] != 0 or g["messages"] != g["returned"]:
        failures.append(f"{at}: lost {g['loss']} of {g['messages']}")
    if g["messages"] is not None and g["server_echoed"] != g["messages"] + 1:
        failures.append(f"{at}: server echoed {g['server_echoed']} of {g['messages']} + 1 warm-up")
    per["netdaq"].append(g)

def med(tool, k):
    v = [x[k] for x in per[tool] if x.get(k) is not None]
    return statistics.median(v) if v else None

doc = {"benchmark": "rdma_pingpong_guest", "quantity": "round trip / 2, us", "size": 64, "iters": iters,
       "rounds": rounds, "target_p50_ratio": 1.2, "per_round": per,
       "median": {t: {k: med(t, k) for k in FIG + ["min"]} for t in per}}
n, p = doc["median"]["netdaq"]["p50"], doc["median"]["ib_send_lat"]["p50"]
doc["ratio_p50"] = n / p if n and p else None
doc["verdict"] = None if doc["ratio_p50"] is None else ("PASS" if doc["ratio_p50"] <= 1.2 else "MISS")
doc["failures"], doc["ok"] = failures, not failures
print(f"\nrdma SEND 64 B, round trip / 2 (us), median of {rounds} rounds of {iters} messages (TCG guest)")
print(f"{'tool':<12} {'p50':>9} {'p99':>9} {'p99.9':>9} {'max':>9} {'min':>9}")
for t in ("netdaq", "ib_send_lat"):
    m = doc["median"][t]
    print(f"{t:<12} " + " ".join(f"{m[k]:>9.2f}" if m[k] is not None else f"{'-':>9}" for k in FIG + ["min"]))
print(f"netdaq / ib_send_lat p50: {doc['ratio_p50']:.3f} {doc['verdict']}" if doc["ratio_p50"] else "ratio: -")
for f in failures:
    print(f"  FAILED: {f}")
print("RESULT_JSON " + json.dumps(doc))
sys.exit(1 if failures else 0)
PY
