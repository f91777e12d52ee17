#!/usr/bin/env bash
# Frames over UCX (issue 36, item 6): netdaq's FrameSink -> EventBuilder against ucx_perftest
# (Debian's ucx-utils) on the same transport and message size, side by side in one run.
#
# Two processes per side, each pinned to one of the machine's first two CPUs the same way for
# both tools (receiver on --rx-cpu, sender on --tx-cpu): netdaq_bench_fleet builder (EventBuilder,
# nodes 1: each frame popped, checked (sampled) and released) in namespace A and
# netdaq_bench_fleet sink (FrameSink, route frame, credits, frames from memory holding the sensor
# pattern) in namespace B; ucx_perftest's server in A and its client in B, -t ucp_am_bw (active
# messages: what the sink sends; tag_bw with --tag too). The namespaces are joined by a veth pair
# this script creates and always removes. Transports: tcp (UCX_TLS=tcp over the veth) and shm
# (UCX_TLS=shm,self,tcp, what src/fleet sets for Transport::shm, read from its tls_for(): the data
# over shared memory, tcp for the sockaddr connection over the veth).
# Processes start in their namespace with its own /sys (UCX's tcp transport finds the veth in
# /sys/class/net): nsenter, then a mount namespace of their own where /sys alone is made
# private and sysfs mounted again (`ip netns exec` does the same but also remounts /, which a
# chroot refuses: the fresh-root check).
#
# Per transport and size: a verify round first (every byte of every frame checked against the
# pattern; untimed, not in the medians), then --rounds rounds, netdaq and ucx_perftest alternating,
# each moving --mib MiB (frames = that / size, the first 1/20 of them warm-up, not timed:
# ucx_perftest -w and -n the same counts). Figures: netdaq's builder clock (from its warm-up's
# last frame to its last: frames/s and GB/s, 1 GB = 1e9 B), the sink's (to every credit back) in
# the JSON; ucx_perftest's client "Final:" overall bandwidth (its MB/s are MiB/s, converted).
# Medians over the rounds, ratio netdaq / ucx_perftest am_bw. Target: >= 0.8x at 1 MiB.
#
# usage: bench/fleet_vs_ucx_perftest.sh [--transports tcp,shm] [--sizes 1048576,65536,4194304]
#          [--rounds N] [--mib M] [--credits C] [--tag] [--enforce] [--json FILE] [--bench PATH]
#          [--rx-cpu C] [--tx-cpu C] [--sink-buffers B] [--builder-buffers B] [--ucx-env "VAR=V ..."]
#          [--perf DIR] [--keep DIR]
# --json: default bench/results/fleet_vs_ucx_perftest-DATE.json. --sink-buffers: frames the sink
# sends from (default 2 x credits), --builder-buffers: the builder's ReceiverConfig::buffers
# (default its own, 32). --ucx-env: UCX variables for BOTH tools' processes (UCX reads them; the
# fleet code overrides only UCX_TLS and the keepalive), e.g. a setting the fleet code may adopt.
# Every process runs at nice -20 (both tools alike): builds beside the run must not take turns
# on the two pinned CPUs. --perf DIR: one more netdaq
# round per case under `perf record -g` (both processes), reports in DIR. --keep DIR: every
# process's output. Exit status 1: a figure missing, a process failed, a check failed (bytes,
# counts); with --enforce also a 1 MiB am_bw ratio under 0.8x.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh  # usage, die, lab_init/lab_up/lab_cleanup, in_ns, track/untrack, round_failed

transports=tcp,shm
sizes=1048576,65536,4194304
rounds=3
mib=4096
credits=8
tag=0
enforce=0
json_out=bench/results/fleet_vs_ucx_perftest-$(date -u +%F).json
bench=""
rx_cpu=1
tx_cpu=0
perf_dir=""
keep=""
sink_buffers=0
builder_buffers=0
ucx_env=""
while [ $# -gt 0 ]; do
  case "$1" in
    --transports) transports=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    --credits) credits=$2; shift 2 ;;
    --tag) tag=1; shift ;;
    --enforce) enforce=1; shift ;;
    --json) json_out=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    --rx-cpu) rx_cpu=$2; shift 2 ;;
    --tx-cpu) tx_cpu=$2; shift 2 ;;
    --sink-buffers) sink_buffers=$2; shift 2 ;;
    --builder-buffers) builder_buffers=$2; shift 2 ;;
    --ucx-env) ucx_env=$2; shift 2 ;;
    --perf) perf_dir=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) usage ;;
    *) bad_option "$1" ;;
  esac
done

[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 3 ] || die "--rounds: at least 3"
[[ "$mib" =~ ^[0-9]+$ ]] && [ "$mib" -ge 1 ] || die "--mib: a whole number of MiB, at least 1"
[[ "$credits" =~ ^[0-9]+$ ]] && [ "$credits" -ge 1 ] || die "--credits: at least 1"
for t in ${transports//,/ }; do [[ "$t" == tcp || "$t" == shm ]] || die "--transports: tcp and/or shm, not $t"; done
for s in ${sizes//,/ }; do [[ "$s" =~ ^[0-9]+$ ]] && [ "$s" -ge 4096 ] || die "--sizes: bytes, at least 4096, not $s"; done
[[ "$sink_buffers" =~ ^[0-9]+$ ]] && [ "$sink_buffers" -le 256 ] || die "--sink-buffers: 1 to 256 (0: 2 x credits)"
[[ "$builder_buffers" =~ ^[0-9]+$ ]] || die "--builder-buffers: a whole number (0: the receiver's default)"
for v in $ucx_env; do [[ "$v" =~ ^UCX_[A-Z0-9_]+=[^\ ]*$ ]] || die "--ucx-env: UCX_NAME=VALUE words, not $v"; done
need_other_cpus --rx-cpu "$rx_cpu" --tx-cpu "$tx_cpu"
need_root "network namespaces and a veth pair"
command -v ucx_perftest >/dev/null || die "ucx_perftest not found (apt-get install ucx-utils)"
if [ -z "$bench" ]; then
  for c in "${NETDAQ_BUILD_DIR:-build}/bench/netdaq_bench_fleet" build*/bench/netdaq_bench_fleet; do
    [ -x "$c" ] && { bench=$c; break; }
  done
fi
[ -n "$bench" ] && [ -x "$bench" ] || die "no netdaq_bench_fleet found: build it (cmake --build build --target netdaq_bench_fleet) or pass --bench PATH"
bench=$(realpath "$bench")
[ -z "$perf_dir" ] || command -v perf >/dev/null || die "--perf: perf not found"

duration=120  # lab_init's bound: seconds any one process may run
lab_init fl 77
lab_up
# UCX's tcp transport leaves out an interface whose carrier is not up yet (then only lo is
# left and every peer is "unreachable"): wait for both veth ends
for side in a b; do
  ns_var=ns_$side veth_var=veth_$side
  for ((i = 0; i < 500; i++)); do
    in_ns "${!ns_var}" ip -o link show dev "${!veth_var}" | grep -q "state UP" && break
    sleep 0.01
  done
  in_ns "${!ns_var}" ip -o link show dev "${!veth_var}" | grep -q "state UP" || die "${!veth_var} did not come up"
done
port=17000

# UCX_TLS of a transport: what src/fleet sets (ucx_context.cpp's tls_for), read from there so
# that both tools stay on the same transports
tls_of() {
  sed -n "s/.*case Transport::$1: return \"\([^\"]*\)\";.*/\1/p" src/fleet/ucx_context.cpp
}
for t in ${transports//,/ }; do
  [ -n "$(tls_of "$t")" ] || die "no UCX_TLS for Transport::$t found in src/fleet/ucx_context.cpp (tls_for)"
done
# ns_run NS CPU CMD...: CMD in namespace NS (with /sys of that namespace), pinned, at
# nice -20, with --ucx-env's variables
ns_run() {
  local ns=$1 cpu=$2
  shift 2
  # shellcheck disable=SC2086  # --ucx-env: words
  nsenter --net=/run/netns/"$ns" -- unshare --mount --propagation unchanged -- \
    sh -c 'mount --make-private /sys && mount -t sysfs sysfs /sys && exec "$@"' sh \
    env $ucx_env timeout -s INT -k 5 "$bound" nice -n -20 taskset -c "$cpu" "$@"
}
# listening NS PORT SECONDS [PID]: until a TCP socket listens on PORT in NS
listening() {
  local i
  for ((i = 0; i < $3 * 50; i++)); do
    [ -n "$(in_ns "$1" ss -Hltn "sport = :$2" 2>/dev/null)" ] && return 0
    [ -z "${4:-}" ] || kill -0 "$4" 2>/dev/null || return 1
    sleep 0.02
  done
  return 1
}

# one line of rounds.tsv per measurement: case, round, tool, file
record() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$tmp/rounds.tsv"; }

# netdaq_round CASE ROUND TRANSPORT SIZE FRAMES WARMUP CHECK [perf]: builder in A, sink in B;
# their JSON in $tmp/CASE.ROUND.{builder,sink}.json
netdaq_round() {
  local c=$1 r=$2 tr=$3 size=$4 frames=$5 warm=$6 check=$7 name="$1.$2" bpid rc=0 pre_b=() pre_s=() sbufs=$sink_buffers
  port=$((port + 1))
  # The verify round sends from 256 buffers: no two of its frames within 256 share their bytes
  # past the frame number, so a builder buffer left holding an older frame (bytes not moved) fails
  # the full check; with fewer sink buffers (period P) a frame P, 2P... earlier differs in its
  # first 8 bytes only, which only the first 8 bytes' check would catch.
  [ "$check" != full ] || sbufs=256
  if [ "${8:-}" = perf ]; then
    pre_b=(perf record -g -q -o "$tmp/$name.builder.perf") pre_s=(perf record -g -q -o "$tmp/$name.sink.perf")
  fi
  ns_run "$ns_a" "$rx_cpu" "${pre_b[@]}" "$bench" builder --listen "$ip_a:$port" --transport "$tr" --size "$size" \
    --frames "$frames" --warmup "$warm" --check "$check" --max-seconds "$((bound - 10))" --buffers "$builder_buffers" \
    --json "$tmp/$name.builder.json" >"$tmp/$name.builder.out" 2>&1 &
  bpid=$!
  track "$bpid"
  if ! wait_for "$tmp/$name.builder.out" "^listening" 20 "$bpid" || ! listening "$ns_a" "$port" 10 "$bpid"; then
    round_failed "$name.netdaq" "the builder did not start: $(one_line "$tmp/$name.builder.out")"
  else
    ns_run "$ns_b" "$tx_cpu" "${pre_s[@]}" "$bench" sink --to "$ip_a:$port" --transport "$tr" --size "$size" \
      --frames "$frames" --warmup "$warm" --credits "$credits" --buffers "$sbufs" --max-seconds "$((bound - 10))" \
      --json "$tmp/$name.sink.json" >"$tmp/$name.sink.out" 2>&1 ||
      round_failed "$name.netdaq" "the sink exited with $?: $(one_line "$tmp/$name.sink.out")"
  fi
  wait "$bpid" || rc=$?
  untrack "$bpid"
  [ "$rc" = 0 ] || round_failed "$name.netdaq" "the builder exited with $rc: $(one_line "$tmp/$name.builder.out")"
  record "$c" "$r" netdaq "$name"
  if [ "${8:-}" = perf ]; then
    mkdir -p "$perf_dir"
    local w
    for w in builder sink; do
      perf report -i "$tmp/$name.$w.perf" --stdio --no-children --sort dso,sym --percent-limit 0.5 \
        >"$perf_dir/$c.$w.txt" 2>/dev/null || true
      perf report -i "$tmp/$name.$w.perf" --stdio --children --sort sym --percent-limit 2 -g none \
        >"$perf_dir/$c.$w.children.txt" 2>/dev/null || true
    done
  fi
}

# perftest_round CASE ROUND TRANSPORT SIZE FRAMES WARMUP TEST: server in A, client in B;
# the client's output in $tmp/CASE.ROUND.TEST.client
perftest_round() {
  local c=$1 r=$2 tls name="$1.$2.$7" spid rc=0
  tls=$(tls_of "$3")
  port=$((port + 1))
  UCX_TLS=$tls ns_run "$ns_a" "$rx_cpu" ucx_perftest -p "$port" >"$tmp/$name.server" 2>&1 &
  spid=$!
  track "$spid"
  if ! listening "$ns_a" "$port" 10 "$spid"; then
    round_failed "$name" "ucx_perftest server did not start: $(one_line "$tmp/$name.server")"
  else
    UCX_TLS=$tls ns_run "$ns_b" "$tx_cpu" ucx_perftest "$ip_a" -p "$port" -t "$7" -s "$4" -n "$(($5 - $6))" -w "$6" \
      >"$tmp/$name.client" 2>&1 || round_failed "$name" "ucx_perftest client exited with $?: $(one_line "$tmp/$name.client")"
  fi
  wait "$spid" || rc=$?
  untrack "$spid"
  [ "$rc" = 0 ] || round_failed "$name" "ucx_perftest server exited with $rc: $(one_line "$tmp/$name.server")"
  record "$c" "$r" "$7" "$name"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "fleet_vs_ucx_perftest: $(uname -r), $(nproc) CPUs, UCX $(ucx_info -v | sed -n 's/# Version //p'), receiver CPU $rx_cpu, sender CPU $tx_cpu"
for tr in ${transports//,/ }; do
  for size in ${sizes//,/ }; do
    frames=$((mib * 1048576 / size))
    warm=$((frames / 20 > 10 ? frames / 20 : 10))
    [ "$frames" -gt "$warm" ] || die "--mib $mib: too few frames of $size B (at least $((warm + 1)))"
    c="$tr-$size"
    echo "case $c: $frames frames ($warm warm-up), UCX_TLS=$(tls_of "$tr")" >&2
    vframes=$((warm + 300 > frames ? frames : warm + 300))  # > 256: every residue, builder buffers reused
    netdaq_round "$c" verify "$tr" "$size" "$vframes" "$warm" full
    for ((r = 1; r <= rounds; r++)); do
      netdaq_round "$c" "r$r" "$tr" "$size" "$frames" "$warm" sampled
      perftest_round "$c" "r$r" "$tr" "$size" "$frames" "$warm" ucp_am_bw
      [ "$tag" = 0 ] || perftest_round "$c" "r$r" "$tr" "$size" "$frames" "$warm" tag_bw
      echo "  round $r of $rounds done" >&2
    done
    [ -z "$perf_dir" ] || netdaq_round "$c" perf "$tr" "$size" "$frames" "$warm" sampled perf
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

report "$tmp" "$json_out" "$enforce" "$load_before" "$load_after" "$credits" "$rx_cpu" "$tx_cpu" "$mib" "$bench" \
  "$rounds" "$(tls_of tcp)" "$(tls_of shm)" "$sink_buffers" "$builder_buffers" "$ucx_env" <<'PY'
(tmp, out, enforce, load_before, load_after, credits, rx_cpu, tx_cpu, mib, bench, nrounds, tls_tcp, tls_shm, sink_buffers,
 builder_buffers, ucx_env) = sys.argv[1:17]
tls = {"tcp": tls_tcp, "shm": tls_shm}
TARGET = 0.8
failed = script_failures(tmp)
MIB = 1048576

def perftest_figures(name, at):
    """ucx_perftest's client 'Final:' line: iterations, overall MiB/s (total average), overall msg/s."""
    lines = [l.split() for l in text(f"{tmp}/{name}.client").splitlines() if l.startswith("Final:")]
    if not lines or len(lines[-1]) < 9:
        fail(at, f"figure missing: ucx_perftest printed no Final: line: {tail(f'{tmp}/{name}.client', 300)!r}")
        return {"ok": False}
    f = lines[-1]
    return {"ok": not failed.get(name), "iterations": int(f[1]), "mib_per_s": float(f[6]),
            "gbytes_per_s": float(f[6]) * MIB / 1e9, "msgs_per_s": float(f[8])}

def netdaq_figures(name, at, timed=True):
    b, s = load_json(f"{tmp}/{name}.builder.json"), load_json(f"{tmp}/{name}.sink.json")
    start = len(FAILURES)
    if not isinstance(b, dict):
        fail(at, f"figures missing: the builder wrote no JSON: {tail(f'{tmp}/{name}.builder.out', 300)!r}")
        b = {}
    if not isinstance(s, dict):
        fail(at, f"figures missing: the sink wrote no JSON: {tail(f'{tmp}/{name}.sink.out', 300)!r}")
        s = {}
    if b and s:
        for k in ("frames", "bad", "incomplete"):
            need(b, k, at, f"builder {k}")
        for k in ("sent", "acked", "no_credit", "refused", "peer_down", "in_flight_lost"):
            need(s, k, at, f"sink {k}")
        if b.get("bad"):
            fail(at, f"{b['bad']} frames failed the byte check (first: {b.get('first_bad')})")
        if b.get("frames") != b.get("frames_expected") or s.get("acked") != s.get("frames_expected"):
            fail(at, f"frames: sent {s.get('sent')}, acked {s.get('acked')}, built {b.get('frames')}, "
                     f"expected {b.get('frames_expected')} (no_credit {s.get('no_credit')}, refused {s.get('refused')}, "
                     f"peer_down {s.get('peer_down')}, in_flight_lost {s.get('in_flight_lost')})")
        if timed:
            need(b, "gbytes_per_s", at, "builder GB/s")
            need(b, "frames_per_s", at, "builder frames/s")
            need(s, "gbytes_per_s", at, "sink GB/s")
    entry = {"builder": b, "sink": s, "gbytes_per_s": b.get("gbytes_per_s"), "frames_per_s": b.get("frames_per_s"),
             "sink_gbytes_per_s": s.get("gbytes_per_s")}
    own = failed.get(f"{name}.netdaq", [])
    entry["ok"] = not own and len(FAILURES) == start
    return entry

def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None

cases = {}
for line in text(f"{tmp}/rounds.tsv").splitlines():
    c, r, tool, name = line.split("\t")
    cases.setdefault(c, {}).setdefault(r, {})[tool] = name

results, rows = [], []
for c, rs in cases.items():
    tr, size = c.split("-")
    entry = {"case": c, "transport": tr, "ucx_tls": tls[tr], "size": int(size),
             "rounds": []}
    if "verify" in rs:
        v = netdaq_figures(rs["verify"]["netdaq"], where(f"{c}.verify.netdaq"), timed=False)
        entry["verify"] = {"ok": v["ok"], "checked": "every byte of every frame (builder --check full)",
                           "frames": v["builder"].get("frames"), "builder": v["builder"], "sink": v["sink"]}
    else:
        fail(f"case {c}", "no verify round")
    timed = sorted((r for r in rs if r.startswith("r")), key=lambda r: int(r[1:]))
    if len(timed) < 3:
        fail(f"case {c}", f"{len(timed)} rounds, at least 3 needed")
    tools = sorted({t for r in timed for t in rs[r] if t != "netdaq"})
    for r in timed:
        row = {"round": int(r[1:])}
        for tool, name in rs[r].items():
            at = where(f"{c}.{r}.{tool}")
            row[tool] = netdaq_figures(name, at) if tool == "netdaq" else perftest_figures(name, at)
        entry["rounds"].append(row)
    def m(tool, key):
        return med([x[tool].get(key) for x in entry["rounds"] if tool in x and x[tool].get("ok")])
    n_gb, n_fps, n_sink = m("netdaq", "gbytes_per_s"), m("netdaq", "frames_per_s"), m("netdaq", "sink_gbytes_per_s")
    entry["median"] = {"netdaq": {"gbytes_per_s": n_gb, "frames_per_s": n_fps, "sink_gbytes_per_s": n_sink}}
    for t in tools:
        entry["median"][t] = {"gbytes_per_s": m(t, "gbytes_per_s"), "msgs_per_s": m(t, "msgs_per_s")}
        entry[f"ratio_{t}"] = round(n_gb / entry["median"][t]["gbytes_per_s"], 3) \
            if n_gb and entry["median"][t]["gbytes_per_s"] else None
    for t in ["netdaq"] + tools:
        if entry["median"][t]["gbytes_per_s"] is None:
            fail(f"case {c}", f"figure missing: no {t} round passed, no median")
    ratio = entry.get("ratio_ucp_am_bw")
    entry["target"] = TARGET if int(size) == MIB else None
    entry["meets_target"] = ratio is not None and ratio >= TARGET if int(size) == MIB else None
    if enforce == "1" and int(size) == MIB and not entry["meets_target"]:
        fail(f"case {c}", f"netdaq / ucx_perftest am_bw {ratio}x, under the {TARGET}x target (--enforce)")
    results.append(entry)
    p = entry["median"].get("ucp_am_bw", {})
    tg = entry["median"].get("tag_bw", {})
    rows.append((tr, int(size), n_gb, n_fps, p.get("gbytes_per_s"), p.get("msgs_per_s"), ratio, tg.get("gbytes_per_s"),
                 entry.get("ratio_tag_bw"), n_sink))

f = lambda v, d=2: "-" if v is None else f"{v:.{d}f}"
print(f"\n{'transport':<10}{'size':>9} | {'netdaq GB/s':>11} {'frames/s':>10} {'(sink GB/s)':>11} | "
      f"{'am_bw GB/s':>10} {'msg/s':>9} {'ratio':>6} | {'tag_bw GB/s':>11} {'ratio':>6}")
for tr, size, gb, fps, pgb, pmr, ratio, tgb, tr_ratio, sgb in rows:
    mark = "" if size != MIB or ratio is None else (" (>= 0.8x)" if ratio >= TARGET else " (UNDER 0.8x)")
    print(f"{tr:<10}{size:>9} | {f(gb):>11} {num(fps):>10} {f(sgb):>11} | {f(pgb):>10} {num(pmr):>9} {f(ratio, 3):>6} | "
          f"{f(tgb):>11} {f(tr_ratio, 3):>6}{mark}")
print(f"medians of the rounds that passed; GB = 1e9 B; netdaq: builder clock (sink clock in brackets)")

settings = {"rounds": int(nrounds), "mib_per_round": int(mib),
            "credits": int(credits), "rx_cpu": int(rx_cpu), "tx_cpu": int(tx_cpu), "load_before": load_before,
            "load_after": load_after, "warmup": "1/20 of each round's frames (at least 10)",
            "enforce": enforce == "1", "bench": bench,
            "sink_buffers": int(sink_buffers) or 2 * int(credits), "builder_buffers": int(builder_buffers) or "default (32)",
            "ucx_env": ucx_env, "nice": -20}
print(machine(settings))
write_doc(out, {"bench": "fleet_vs_ucx_perftest", "settings": settings, "cpus": os.cpu_count(),
                "kernel": platform.release(),
                "ucx": subprocess.run("dpkg-query -W -f '${Version}' ucx-utils", shell=True, capture_output=True,
                                      text=True).stdout or "unknown",
                "method": "builder (EventBuilder nodes 1) in netns A on rx_cpu, sink (FrameSink route frame) in netns B "
                          "on tx_cpu, veth pair; ucx_perftest server in A, client in B, same pinning and UCX_TLS",
                "results": results})
finish()
PY
