#!/usr/bin/env bash
# netdaq's rdma engine against perftest, side by side in one run, on the same two Soft-RoCE
# devices (tests/guest/rdma-lab.sh in the QEMU guest of tests/guest/run-in-guest.sh; the dev
# and CI kernels have no RDMA): SEND at 64 B, 4 KiB and 65000 B messages (ib_send_bw vs
# `netdaq bench --protocol rdma`), RDMA WRITE with immediate at the same sizes (ib_write_bw vs
# `netdaq bench --rdma-op write_imm`), and SEND latency at 64 B (ib_send_lat's t_typical vs
# `netdaq bench --ping-pong`'s p50: both the median of round trip / 2).
#
# Under the emulated CPU of the guest (TCG, no KVM) rxe runs ~100x slower than on hardware:
# only the ratio netdaq / perftest means anything, not the absolute figures. Both tools use
# RC, one queue pair, device 0 (10.77.0.1) sending to device 1 (10.77.0.2), the same message
# counts; 512 receives posted and sends in flight (perftest's default rx depth). netdaq runs
# --no-verify: like perftest, the sender does not write a pattern into every byte nor the
# receiver read it (on the emulated CPU that work alone took 10-20% at 4 KiB and up); headers,
# sequence numbers and loss are still checked (every byte is, in the tests). Target: >= 0.9x.
#
# Every case runs --rounds times (default 3, at least 3), the two tools alternating, and compares
# the medians. Latency is the same quantity on both sides, round trip / 2: ib_send_lat's
# t_typical is the median of half the time from one of the client's sends to its next (the
# server sends each message back); `netdaq bench --ping-pong` does the same with one thread,
# busy polling, one message in flight: device 0 sends to device 1, which sends it back over a
# second rdma_cm connection (listening on device 0 at the port + 1), and half of each round
# trip is a sample (its p50 the exact median). The JSON names the quantity of both sides, the
# netdaq side as netdaq's own JSON names it; any other name fails. A second line compares the
# smallest round trip / 2 of the same runs (ib_send_lat's t_min, netdaq's min): under TCG
# ib_send_lat's median flipped between ~20 us and 2-4 ms from one run to the next while its two
# busy-polling processes were left to the scheduler (now each has a CPU of its own), and a
# case whose rounds differ by more than 2x is marked NOISY (the JSON's "noisy").
#
# What fails (exit status 1, after the table and the JSON): a figure missing (perftest printed
# no result line, netdaq bench wrote no JSON or its JSON lacks packets, sent, loss or the
# figure; ping-pong: messages, returned, loss, quantity), netdaq bench exiting non-zero (3: loss
# its drops do not explain; 2: a ping-pong message did not come back), a netdaq round that lost
# packets or received none. A missing figure is never read as 0.
#
# usage: bench/rdma_vs_perftest.sh [--json FILE] [--netdaq PATH] [--cache DIR] [--only send,write,lat]
#            [--rounds N]
#        bench/rdma_vs_perftest.sh --aggregate DIR   (the report of rounds already in DIR: rounds.tsv)
# The JSON (one object per case: each round, the medians and the ratio) goes to FILE (default
# bench/results/rdma_vs_perftest.json). About 5 minutes with the guest's boot.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh  # usage, bad_option, die, find_netdaq

json_out=bench/results/rdma_vs_perftest.json
netdaq=""
cache=build/guest
only="send,write,lat"
rounds=3
in_guest=0
aggregate=""
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json_out=$2; shift 2 ;;
    --netdaq) netdaq=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --in-guest) in_guest=1; shift ;;
    --aggregate) aggregate=$2; shift 2 ;;
    -h|--help) usage ;;
    *) bad_option "$1" ;;
  esac
done

if ! [[ "$rounds" =~ ^[0-9]+$ ]] || [ "$rounds" -lt 3 ]; then die "--rounds: at least 3"; fi

# report_rounds DIR: the report of the rounds in DIR/rounds.tsv (one line per tool and round:
# case, unit, higher_is_better, round, tool, figure or a netdaq JSON file, exit status); prints
# the table and the RESULT_JSON line; exit status 1 when a check failed
report_rounds() {
  python3 - "$1" <<'PY'
import json, os, statistics, sys
d = sys.argv[1]
failures = []
cases = {}  # case -> {"unit", "higher", "rounds": {n: {tool: figure}}}
for line in open(os.path.join(d, "rounds.tsv")):
    case, unit, higher, rnd, tool, value, rc = (line.rstrip("\n").split("\t") + [""] * 7)[:7]
    c = cases.setdefault(case, {"unit": unit, "higher": higher == "1", "rounds": {}})
    at = f"{case}, round {rnd}, {tool}"
    fig = None
    if tool == "perftest":
        try:
            fig = float(value)
        except ValueError:
            failures.append(f"{at}: figure missing: perftest printed no result line ({value or 'nothing'})")
    else:
        if rc != "0":
            failures.append(f"{at}: netdaq bench exited with {rc or '?'}")
        try:
            j = json.load(open(os.path.join(d, value)))
        except (OSError, ValueError):
            j = None
        if not isinstance(j, dict):
            failures.append(f"{at}: figure missing: netdaq bench wrote no JSON ({value})")
        else:
            lat = unit == "us"  # the ping-pong: messages sent, returned, and the quantity named
            # "... min": the smallest round trip / 2 (ib_send_lat's t_min), else the median
            key = ("latency_us.min" if case.endswith(" min") else "latency_us.p50") if lat else "gbps"
            sent, got = ("messages", "returned") if lat else ("sent", "packets")
            v = j
            for k in key.split("."):
                v = v.get(k) if isinstance(v, dict) else None
            for k in (got, sent, "loss"):
                if not isinstance(j.get(k), (int, float)):
                    failures.append(f"{at}: figure missing: {k} (a result without it is no result)")
            if lat:
                c.setdefault("netdaq_quantity", set()).add(j.get("quantity"))
                if j.get("quantity") != "round trip / 2":
                    failures.append(f"{at}: netdaq measured {j.get('quantity')!r}, not 'round trip / 2'")
            if not isinstance(v, (int, float)):
                failures.append(f"{at}: figure missing: {key}")
            else:
                fig = float(v)
            if isinstance(j.get("loss"), (int, float)) and j["loss"] != 0:
                failures.append(f"{at}: lost {j['loss']} of {j.get(sent)}")
            if j.get(got) == 0:
                failures.append(f"{at}: netdaq received nothing")
            if fig is not None and fig <= 0:
                failures.append(f"{at}: {key} is {fig}")
    c["rounds"].setdefault(int(rnd), {})[tool] = fig

out = []
for case, c in cases.items():
    rs = c["rounds"]
    for n, r in sorted(rs.items()):
        for tool in ("perftest", "netdaq"):
            if tool not in r:
                failures.append(f"{case}, round {n}: no {tool} round")
    if len(rs) < 3:
        failures.append(f"{case}: {len(rs)} rounds, at least 3 needed")
    med = {}
    for tool in ("perftest", "netdaq"):
        vals = [r[tool] for r in rs.values() if r.get(tool) is not None]
        med[tool] = statistics.median(vals) if vals and len(vals) == len(rs) else None
    p, n = med["perftest"], med["netdaq"]
    ratio = round((n / p if c["higher"] else p / n), 3) if p and n else None
    meets = ratio is not None and ratio >= 0.9
    # a tool whose rounds differ by more than 2x: its median is one of two regimes, not a figure
    spread = {}
    for tool in ("perftest", "netdaq"):
        vals = [r[tool] for r in rs.values() if r.get(tool)]
        if vals and max(vals) > 2 * min(vals):
            spread[tool] = [min(vals), max(vals)]
    print(f"{case:<16} perftest {p if p is not None else '-':>10} {c['unit']:<5} netdaq {n if n is not None else '-':>10} "
          f"{c['unit']:<5} ratio {ratio if ratio is not None else '-':>6}x "
          f"{'(>= 0.9x)' if meets else '(below the 0.9x target)' if ratio is not None else '(no ratio: a figure is missing)'}"
          + "".join(f"; NOISY: {t} rounds {lo:g} to {hi:g} {c['unit']}" for t, (lo, hi) in spread.items()))
    entry = {"case": case, "unit": c["unit"], "rounds": [{"round": k, **v} for k, v in sorted(rs.items())],
             "perftest": p, "netdaq": n, "ratio": ratio, "meets_0.9": meets, "medians_of": len(rs),
             "noisy": {t: {"min": lo, "max": hi} for t, (lo, hi) in spread.items()}}
    if c["unit"] == "us":
        named = sorted(q for q in c.get("netdaq_quantity", set()) if isinstance(q, str))
        entry["quantity"] = {"perftest": "round trip / 2", "netdaq": named[0] if len(named) == 1 else named}
        entry["figures"] = {"perftest": "ib_send_lat t_min (smallest round trip / 2)",
                            "netdaq": "netdaq bench --ping-pong latency_us.min (smallest round trip / 2)"} \
            if case.endswith(" min") else \
            {"perftest": "ib_send_lat t_typical (median of round trip / 2)",
             "netdaq": "netdaq bench --ping-pong latency_us.p50 (median of round trip / 2)"}
    out.append(entry)
for f in failures:
    print(f"FAILED: {f}")
doc = {"bench": "rdma_vs_perftest", "kernel": os.uname().release, "emulated_cpu": True,
       "note": "TCG guest: only the ratios mean anything", "failed": bool(failures), "failures": failures, "cases": out}
print("RESULT_JSON " + json.dumps(doc))
sys.exit(1 if failures else 0)
PY
}

if [ -n "$aggregate" ]; then
  report_rounds "$aggregate"
  exit
fi

if [ "$in_guest" = 0 ]; then
  find_netdaq rdma
  for t in ib_send_bw ib_write_bw ib_send_lat; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install perftest)"
  done
  out=$(mktemp)
  trap 'rm -f "$out"' EXIT
  tests/guest/prepare-guest.sh "$cache"
  guest_rc=0
  tests/guest/run-in-guest.sh --cache "$cache" --timeout 1500 -- "$0" --in-guest --netdaq "$netdaq" --only "$only" \
    --rounds "$rounds" |
    tee "$out" | grep --line-buffered -v '^RESULT_JSON ' || guest_rc=$?
  mkdir -p "$(dirname "$json_out")"
  sed -n 's/^RESULT_JSON //p' "$out" > "$json_out"
  [ -s "$json_out" ] || die "no results came back from the guest (exit status $guest_rc)"
  echo "JSON: $json_out"
  if grep -q '"failed": true' "$json_out"; then die "FAILED: a check above failed"; fi
  [ "$guest_rc" = 0 ] || die "FAILED: the guest run exited with $guest_rc"
  exit 0
fi

# ---- in the guest ----
eval "$(tests/guest/rdma-lab.sh up)"
dir=$(mktemp -d)
trap 'tests/guest/rdma-lab.sh down >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
port=18800

# round CASE UNIT HIGHER ROUND TOOL VALUE RC: one line of rounds.tsv
round() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$dir/rounds.tsv"; }

# perftest TOOL SIZE ITERS COLUMN: server on device 1, client on device 0; prints the result
# line's COLUMN (ib_*_bw: 4, BW average in Gb/s; ib_send_lat: 5, t_typical), nothing without one
# ib_send_lat's server and client each on a CPU of their own: two busy-polling processes that
# the scheduler put on one CPU take turns a tick at a time (t_typical 2-4 ms instead of ~20 us
# in 3 of 5 unpinned rounds; netdaq --ping-pong is one thread and never meets that)
perftest() {
  local tool=$1 size=$2 n=$3 col=$4 server extra=() pin_server=() pin_client=()
  [ "$tool" = ib_send_lat ] || extra=(--report_gbits)
  if [ "$tool" = ib_send_lat ] && [ "$(nproc)" -ge 2 ]; then pin_server=(taskset -c 1) pin_client=(taskset -c 0); fi
  port=$((port + 1))
  "${pin_server[@]}" timeout 120 "$tool" -d "$NDQ_RDMA_DEV1" -x "$NDQ_RDMA_GID_INDEX1" -s "$size" -n "$n" -F "${extra[@]}" -p "$port" \
    >"$dir/perftest-server.log" 2>&1 &
  server=$!
  sleep 1
  "${pin_client[@]}" timeout 120 "$tool" -d "$NDQ_RDMA_DEV0" -x "$NDQ_RDMA_GID_INDEX0" -s "$size" -n "$n" -F "${extra[@]}" -p "$port" \
    "$NDQ_RDMA_IP1" 2>&1 | tee "$dir/perftest-client.log" | awk -v s="$size" -v c="$col" '$1 == s && NF >= c {print $c}' | tail -1
  wait "$server" || true
}

# netdaq_round CASE UNIT HIGHER ROUND ARGS...: netdaq bench --json into $dir, one rounds.tsv line
# (a port of its own, and the next for --ping-pong's way back)
netdaq_round() {
  local name="${1// /_}.r$4" rc=0
  port=$((port + 2))
  "$netdaq" bench --protocol rdma --address "$NDQ_RDMA_IP1:$port" --source "$NDQ_RDMA_IP0" --json --quiet --no-pin \
    "${@:5}" >"$dir/$name.json" 2>"$dir/$name.err" || rc=$?
  [ "$rc" = 0 ] || { echo "netdaq bench ($1, round $4) exited with $rc:" >&2; tail -5 "$dir/$name.err" >&2; }
  round "$1" "$2" "$3" "$4" netdaq "$name.json" "$rc"
  last_json=$name.json last_rc=$rc  # another figure of the same run (the latency's min)
}

echo "rdma_vs_perftest: $(uname -r), $(rdma link show | tr '\n' ' '); netdaq $("$netdaq" --version | head -1)"
declare -A iters=([64]=20000 [4096]=5000 [65000]=500)
for ((r = 1; r <= rounds; r++)); do
  for size in 64 4096 65000; do  # 65000: the largest netdaq payload is 65507 (netdaq run's limit)
    n=${iters[$size]}
    if [[ ",$only," == *,send,* ]]; then
      round "send ${size}B" Gb/s 1 "$r" perftest "$(perftest ib_send_bw "$size" "$n" 4)" 0
      netdaq_round "send ${size}B" Gb/s 1 "$r" --rdma-op send --size "$size" --count "$n" --rdma-depth 512 --no-verify
    fi
    if [[ ",$only," == *,write,* ]]; then
      round "write_imm ${size}B" Gb/s 1 "$r" perftest "$(perftest ib_write_bw "$size" "$n" 4)" 0
      netdaq_round "write_imm ${size}B" Gb/s 1 "$r" --rdma-op write_imm --size "$size" --count "$n" --rdma-depth 512 \
        --no-verify
    fi
  done
  if [[ ",$only," == *,lat,* ]]; then
    # both the median of round trip / 2, 2000 messages one at a time, busy polling: ib_send_lat's
    # t_typical and netdaq's ping-pong p50 (headers only written and checked, as perftest)
    round "send latency 64B" us 0 "$r" perftest "$(perftest ib_send_lat 64 2000 5)" 0
    round "send latency 64B min" us 0 "$r" perftest \
      "$(awk '$1 == 64 && NF >= 5 {print $3}' "$dir/perftest-client.log" | tail -1)" 0  # t_min, same run
    netdaq_round "send latency 64B" us 0 "$r" --ping-pong --size 64 --count 2000 --no-verify
    round "send latency 64B min" us 0 "$r" netdaq "$last_json" "$last_rc"
  fi
  echo "round $r of $rounds done" >&2
done
report_rounds "$dir"
