#!/usr/bin/env bash
# netdaq's rdma engine against perftest, side by side in one run, on the same two Soft-RoCE
# devices (tests/guest/rdma-lab.sh in the QEMU guest of tests/guest/run-in-guest.sh; the dev
# and CI kernels have no RDMA): SEND at 64 B, 4 KiB and 65000 B messages (ib_send_bw vs
# `netdaq bench --protocol rdma`), RDMA WRITE with immediate at the same sizes (ib_write_bw vs
# `netdaq bench --rdma-op write_imm`), and SEND latency at 64 B (ib_send_lat's typical vs
# netdaq's median one-way latency, from the payload's send timestamp; median of 3 rounds).
#
# Under the emulated CPU of the guest (TCG, no KVM) rxe runs ~100x slower than on hardware:
# only the ratio netdaq / perftest means anything, not the absolute figures. Both tools use
# RC, one queue pair, device 0 (10.77.0.1) sending to device 1 (10.77.0.2), the same message
# counts; 512 receives posted and sends in flight (perftest's default rx depth). netdaq runs
# --no-verify: like perftest, the sender does not write a pattern into every byte nor the
# receiver read it (on the emulated CPU that work alone took 10-20% at 4 KiB and up); headers,
# sequence numbers and loss are still checked (every byte is, in the tests). Target: >= 0.9x.
#
# usage: bench/rdma_vs_perftest.sh [--json FILE] [--netdaq PATH] [--cache DIR] [--only send,write,lat]
# The JSON (one object per case: tool figures and the ratio) goes to FILE (default
# bench/results/rdma_vs_perftest.json). About 2 minutes with the guest's boot.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh  # usage, bad_option, die, find_netdaq

json_out=bench/results/rdma_vs_perftest.json
netdaq=""
cache=build/guest
only="send,write,lat"
in_guest=0
while [ $# -gt 0 ]; do
  case "$1" in
    --json) json_out=$2; shift 2 ;;
    --netdaq) netdaq=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --in-guest) in_guest=1; shift ;;
    -h|--help) usage ;;
    *) bad_option "$1" ;;
  esac
done

if [ "$in_guest" = 0 ]; then
  find_netdaq rdma
  for t in ib_send_bw ib_write_bw ib_send_lat; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install perftest)"
  done
  out=$(mktemp)
  trap 'rm -f "$out"' EXIT
  tests/guest/prepare-guest.sh "$cache"
  tests/guest/run-in-guest.sh --cache "$cache" --timeout 900 -- "$0" --in-guest --netdaq "$netdaq" --only "$only" |
    tee "$out" | grep --line-buffered -v '^RESULT_JSON '
  mkdir -p "$(dirname "$json_out")"
  sed -n 's/^RESULT_JSON //p' "$out" > "$json_out"
  [ -s "$json_out" ] || die "no results came back from the guest"
  echo "JSON: $json_out"
  grep -q '"failed": true' "$json_out" && die "FAILED: a case above failed"
  exit 0
fi

# ---- in the guest ----
eval "$(tests/guest/rdma-lab.sh up)"
trap 'tests/guest/rdma-lab.sh down >/dev/null 2>&1 || true' EXIT
port=18800
results=()
failed=0

# perftest_bw TOOL SIZE ITERS: the average bandwidth in Gb/s (server on device 1, client on 0)
perftest_bw() {
  local tool=$1 size=$2 n=$3 line
  port=$((port + 1))
  timeout 120 "$tool" -d "$NDQ_RDMA_DEV1" -x "$NDQ_RDMA_GID_INDEX1" -s "$size" -n "$n" -F --report_gbits -p "$port" \
    >/tmp/perftest-server.log 2>&1 &
  local server=$!
  sleep 1
  line=$(timeout 120 "$tool" -d "$NDQ_RDMA_DEV0" -x "$NDQ_RDMA_GID_INDEX0" -s "$size" -n "$n" -F --report_gbits -p "$port" \
    "$NDQ_RDMA_IP1" 2>&1 | awk -v s="$size" '$1 == s && NF >= 5 {print $4}' | tail -1)
  wait "$server" || true
  echo "${line:-0}"
}

# netdaq_bench OP SIZE COUNT: netdaq's JSON result line
netdaq_bench() {
  port=$((port + 1))
  "$netdaq" bench --protocol rdma --rdma-op "$1" --address "$NDQ_RDMA_IP1:$port" --source "$NDQ_RDMA_IP0" \
    --size "$2" --count "$3" --rdma-depth 512 --no-verify --json --quiet --no-pin 2>/tmp/netdaq-bench.log || { cat /tmp/netdaq-bench.log >&2; echo "{}"; }
}

json_num() { python3 -c 'import json,sys; d=json.loads(sys.argv[1] or "{}"); v=d
for k in sys.argv[2].split("."): v=v.get(k, {}) if isinstance(v, dict) else {}
print(v if isinstance(v, (int, float)) else 0)' "$1" "$2"; }

report() {  # CASE PERFTEST_FIGURE NETDAQ_FIGURE UNIT HIGHER_IS_BETTER NETDAQ_JSON
  local ratio ok
  ratio=$(python3 -c "p=$2; n=$3; print(round((n/p if $5 else p/n) if p > 0 and n > 0 else 0, 3))")
  ok=$(python3 -c "print('true' if $ratio >= 0.9 else 'false')")
  printf '%-16s perftest %10s %-5s netdaq %10s %-5s ratio %6sx %s\n' "$1" "$2" "$4" "$3" "$4" "$ratio" \
    "$([ "$ok" = true ] && echo "(>= 0.9x)" || echo "(below the 0.9x target)")"
  local loss
  loss=$(json_num "$6" loss)
  [ "$(json_num "$6" packets)" != 0 ] && [ "$loss" = 0 ] || failed=1
  results+=("{\"case\": \"$1\", \"unit\": \"$4\", \"perftest\": $2, \"netdaq\": $3, \"ratio\": $ratio, \"meets_0.9\": $ok, \"netdaq_loss\": $loss}")
}

echo "rdma_vs_perftest: $(uname -r), $(rdma link show | tr '\n' ' '); netdaq $("$netdaq" --version | head -1)"
declare -A iters=([64]=20000 [4096]=5000 [65000]=500)
for size in 64 4096 65000; do  # 65000: the largest netdaq payload is 65507 (netdaq run's limit)
  n=${iters[$size]}
  if [[ ",$only," == *,send,* ]]; then
    p=$(perftest_bw ib_send_bw "$size" "$n")
    j=$(netdaq_bench send "$size" "$n")
    report "send ${size}B" "$p" "$(json_num "$j" gbps)" Gb/s 1 "$j"
  fi
  if [[ ",$only," == *,write,* ]]; then
    p=$(perftest_bw ib_write_bw "$size" "$n")
    j=$(netdaq_bench write_imm "$size" "$n")
    report "write_imm ${size}B" "$p" "$(json_num "$j" gbps)" Gb/s 1 "$j"
  fi
done
if [[ ",$only," == *,lat,* ]]; then
  # Three rounds, the two tools alternating, and the median of each: one round's figure moves
  # with whatever else the emulated CPUs run.
  lats=() ndq_lats=() j="{}"
  for round in 1 2 3; do
    port=$((port + 1))
    timeout 120 ib_send_lat -d "$NDQ_RDMA_DEV1" -x "$NDQ_RDMA_GID_INDEX1" -s 64 -n 2000 -F -p "$port" >/tmp/lat-server.log 2>&1 &
    server=$!
    sleep 1
    # ib_send_lat's t_typical (column 5 of the result line): a round trip halved
    lats+=("$(timeout 120 ib_send_lat -d "$NDQ_RDMA_DEV0" -x "$NDQ_RDMA_GID_INDEX0" -s 64 -n 2000 -F -p "$port" "$NDQ_RDMA_IP1" 2>&1 |
      awk '$1 == 64 && NF >= 5 {print $5}' | tail -1)")
    wait "$server" || true
    # netdaq: one message at a time (rate-limited, bursts of 1), both threads busy-polling as
    # ib_send_lat does; its median one-way latency
    port=$((port + 1))
    j=$("$netdaq" bench --protocol rdma --address "$NDQ_RDMA_IP1:$port" --source "$NDQ_RDMA_IP0" --size 64 \
          --count 2000 --rate-pps 2000 --batch 1 --busy-poll --json --quiet --no-pin 2>/dev/null || echo "{}")
    ndq_lats+=("$(json_num "$j" latency_us.p50)")
    echo "  latency round $round: ib_send_lat ${lats[-1]:-?} us, netdaq p50 ${ndq_lats[-1]} us"
  done
  median() { printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | awk '{v[NR]=$1} END {print NR ? v[int((NR+1)/2)] : 0}'; }
  report "send latency 64B" "$(median "${lats[@]}")" "$(median "${ndq_lats[@]}")" us 0 "$j"
fi
printf 'RESULT_JSON {"bench": "rdma_vs_perftest", "kernel": "%s", "emulated_cpu": true, "note": "TCG guest: only the ratios mean anything", "failed": %s, "cases": [%s]}\n' \
  "$(uname -r)" "$([ $failed = 1 ] && echo true || echo false)" "$(IFS=,; echo "${results[*]}")"
