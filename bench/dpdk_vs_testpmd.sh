#!/usr/bin/env bash
# netdaq's dpdk engine against dpdk-testpmd rxonly as receivers on the same DPDK ports, one
# polling core each, side by side in one run. The receivers alternate (netdaq worker, netdaq
# direct, testpmd, netdaq worker, ...) for --rounds; the table shows medians.
#
# Receivers (same EAL memory: in-memory on hugepages, or --no-huge with --memory plain; burst
# 64; --mbufs mbufs of 2,048 B incl. headroom; mempool cache 256; 1,024 rx descriptors; EAL
# main lcore on --main-cpu, polling lcore on --rx-cpu):
#   testpmd  dpdk-testpmd --in-memory -m 256 --iova-mode=va --no-pci --no-telemetry -l MAIN,RX
#            --vdev PORT -- --forward-mode=rxonly --nb-cores=1 --burst=64 --total-num-mbufs=N
#            --mbcache=C --mbuf-size=2048 --rxd=1024 --stats-period 1; stdin held open, stopped
#            with SIGINT (testpmd 22.11 prints its forward statistics then).
#   netdaq   `netdaq run CONFIG -q --no-verify -d SECONDS --json FILE`, one rx queue, batch_size
#            64 (--batch), ring_depth 32 (2048 / batch), eal {cores: [MAIN, RX], main_core: MAIN}; the CLI's receiver
#            thread reads each packet's first bytes (payload header check) and releases the burst.
#            worker: `mode: worker, cpu_core: RX`: the engine's worker polls on RX, the CLI's
#                    receiver thread takes its bursts on MAIN (pinned by this script)
#            direct: `mode: direct`: the CLI's receiver thread polls the port itself, on RX;
#                    one thread, one core, like testpmd's forwarding lcore
#            The script pins netdaq's other threads (main, EAL's) on MAIN after the start.
#
# Cases:
#   null   net_null0,size=64: a virtual port that returns as many 64 B frames as asked for
#          (mbufs from the receiver's mempool, contents untouched), so the receiver's own cost
#          per packet is all there is. netdaq with dpdk.raw_frames (the frames are not UDP;
#          whole frames are handed over, as rxonly does not parse either). Steady-state rate:
#          testpmd's periodic Rx-pps after the first period, netdaq's queue packets over its
#          seconds (first to last burst); --duration s each. ns/packet = 1e9 / rate (one
#          polling core); ratio = netdaq / testpmd, target >= 0.9.
#   afxdp  the veth pair of afxdp_vs_pmd.sh (namespaces ndqdA<pid> / ndqdB<pid>) under DPDK's
#          AF_XDP PMD: both receivers open net_af_xdp0,iface=ndqdva,start_queue=0,queue_count=1
#          (netdaq: UDP payloads, no raw_frames, no flows); the sender is dpdk-testpmd txonly
#          over the af_packet PMD, 64 B frames, unpaced, on --main-cpu for --duration s. Rates =
#          received / sender seconds; drops: netdaq's QueueStats drops, testpmd's RX-dropped +
#          RX-nombufs + RX-error; lost = sent - received. On a 2-CPU machine the sender shares
#          its CPU with the main lcores (idle) and netdaq's receiver thread in worker mode.
#
# Payload verification: the timed rounds' frames carry no netdaq payload (net_null's are
# untouched mbufs, testpmd's txonly payloads have no netdaq header), so netdaq runs them with
# --no-verify. After the timed rounds each case has a "verify" round per netdaq receiver mode
# (not timed, not in the medians), where netdaq sends and netdaq receives with every payload
# byte and sequence number checked (`netdaq run` without --no-verify):
#   null   `netdaq run` on net_ring0 (DPDK's ring PMD: the port's tx queue feeds its rx queue),
#          one tx and one rx queue (worker or direct) in one process, 64 B payloads, unpaced
#   afxdp  netdaq's socket engine in ndqdB<pid> sends 64 B payloads to the receiver's UDP port
#          (100 kpps for --duration s); the receiver is netdaq on net_af_xdp as above
# A verify round must deliver every packet sent once and intact: no malformed or duplicate
# packet, and sent - received = netdaq's counted drops.
#
# What fails the run (exit status 1, after the table, the rounds and the JSON are written,
# with a "FAILED:" list naming case, round, receiver and figure): a figure missing (a receiver
# wrote no JSON or the JSON lacks a key, testpmd printed no statistics); a process that did not
# start or ended other than as expected (netdaq: exit 0 at its duration, not interrupted;
# testpmd: 0 or 130 after SIGINT); in the afxdp case, netdaq's lost (testpmd's TX-packets -
# netdaq's packets) other than its counted drops; a verify round's check. Counted drops (e.g.
# ring_full in worker mode on null) are allowed and shown per reason; testpmd's own unexplained
# loss is a warning (the reference is measured, not checked). Failed rounds stay out of the
# medians.
#
# usage: bench/dpdk_vs_testpmd.sh [--duration S] [--rounds N] [--cases null,afxdp] [--json FILE]
#            [--netdaq PATH] [--main-cpu N] [--rx-cpu N] [--mbufs N] [--memory huge|plain]
#            [--hugepages N] [--receivers netdaq,direct,testpmd] [--batch N] [--ring N] [--mbcache N] [--rt] [--perf]
#            [--keep DIR]
#   --duration S      seconds per round and receiver, whole seconds >= 3 (default 5)
#   --rounds N        rounds per case and receiver (default 3; the table shows medians)
#   --cases LIST      null, afxdp or both (default null,afxdp)
#   --receivers LIST  in this order per round: netdaq (worker mode), direct (netdaq direct
#                     mode), testpmd (default netdaq,direct,testpmd)
#   --main-cpu N      EAL main lcore of the receivers; (afxdp) the sender's CPU (default 0)
#   --rx-cpu N        the polling lcore (default 1)
#   --mbufs N         mbufs per receiver (testpmd --total-num-mbufs, netdaq num_bufs; default 8192)
#   --batch N         netdaq's rx batch_size (default 64 = testpmd's --burst, which stays 64): the
#                     packets a worker hands over at once; ring_depth 2048 / N (>= 4) keeps the
#                     packets in flight the same
#   --mbcache N       mempool cache of both receivers (testpmd --mbcache, netdaq
#                     dpdk.mempool_cache; default 256)
#   --ring N          netdaq's rx ring_depth (bursts between the worker and the application;
#                     default 2048 / batch, at least 4)
#   --memory MODE     huge (default: EAL in-memory on hugepages, netdaq's region kind huge) or
#                     plain (--no-huge, region kind host)
#   --hugepages N     2 MiB hugepages the script reserves on top of those already reserved and
#                     gives back at the end, also on an error or Ctrl-C (default 512; 0: none)
#   --rt              null case: run the receivers SCHED_FIFO 50 (chrt), so other load on a
#                     shared machine cannot preempt them (not for afxdp: real-time threads on
#                     the sender's CPU would hold off the kernel's veth/XDP work there)
#   --perf            cpu-clock profile (perf record -g) of the polling CPU for 2 s of each null
#                     round: top symbols in the output, perf.data in --keep DIR
#   --keep DIR        keep every output file (configs, testpmd logs, netdaq JSON, thread pinning)
# Needs root, dpdk-testpmd, a netdaq built with the dpdk engine (`netdaq --version`).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

duration=5
rounds=3
cases="null,afxdp"
json_out=""
netdaq=""
main_cpu=0
rx_cpu=1
mbufs=8192
memory=huge
hugepages=512
receivers="netdaq,direct,testpmd"
batch=64
ring=""
mbcache=256
perf=0
rt=0
keep=""
port=47700
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --netdaq) netdaq=$2; shift 2 ;;
    --main-cpu) main_cpu=$2; shift 2 ;;
    --rx-cpu) rx_cpu=$2; shift 2 ;;
    --mbufs) mbufs=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --hugepages) hugepages=$2; shift 2 ;;
    --receivers) receivers=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --ring) ring=$2; shift 2 ;;
    --mbcache) mbcache=$2; shift 2 ;;
    --perf) perf=1; shift ;;
    --rt) rt=1; shift ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) usage ;;
    *) bad_option "$1" ;;
  esac
done

find_netdaq dpdk
need_testpmd
need_root "hugepages, namespaces, XDP"
need_duration
[[ "$batch" =~ ^[0-9]+$ ]] && [ "$batch" -ge 1 ] && [ "$batch" -le 1024 ] || die "--batch: 1..1024 packets"
[ -n "$ring" ] || ring=$(( 2048 / batch > 4 ? 2048 / batch : 4 ))
[[ "$ring" =~ ^[0-9]+$ ]] && [ "$ring" -ge 2 ] || die "--ring: at least 2 bursts"
[[ "$mbcache" =~ ^[0-9]+$ ]] && [ "$mbcache" -le 512 ] || die "--mbcache: 0..512 mbufs (DPDK's RTE_MEMPOOL_CACHE_MAX_SIZE)"
need_other_cpus --main-cpu "$main_cpu" --rx-cpu "$rx_cpu"
case "$memory" in huge|plain) ;; *) die "--memory: huge or plain" ;; esac
[ "$perf" = 0 ] || command -v perf >/dev/null || die "--perf: perf not found"

exit_hooks+=(hugepages_give_back)
lab_init d 197  # namespaces ndqdA<pid> / ndqdB<pid>, veths ndqdva / ndqdvb, 10.197.0.0/24 (case afxdp)

# ---- hugepages ----
[ "$memory" != huge ] || hugepages_reserve "$hugepages" 320 "each receiver needs ~300"

rt_cmd=()  # set per case: --rt applies to the null case

# NETDAQ_DPDK_DRIVERS=DIR: drivers to load with -d (both receivers), for a DPDK copied to a
# machine without its package (scripts/gpu-check.sh), where EAL's built-in driver path is empty.
drivers_eal=${NETDAQ_DPDK_DRIVERS:+-d $NETDAQ_DPDK_DRIVERS}
drivers_yaml=${NETDAQ_DPDK_DRIVERS:+, args: [-d$NETDAQ_DPDK_DRIVERS]}

mem_eal() {  # EAL memory (and driver) options of a receiver
  if [ "$memory" = huge ]; then echo --in-memory -m 256 $drivers_eal; else echo --no-huge --no-shconf -m 256 $drivers_eal; fi
}

child_of() { ps -o pid= --ppid "$1" 2>/dev/null | head -1 | tr -d ' ' || true; }  # timeout's child: the receiver

# perf_sample NAME: a cpu-clock profile (call graphs) of the polling CPU in the middle of the run
perf_pid=""
perf_sample() {
  perf_pid=""
  [ "$perf" = 1 ] || return 0
  ( sleep 1; perf record -q -e cpu-clock -g -C "$rx_cpu" -o "$tmp/$1.perf" -- sleep 2 || true ) >/dev/null 2>&1 &
  perf_pid=$!
  track "$perf_pid"
}
perf_done() {  # NAME: waits for perf_sample's profiler
  [ -n "$perf_pid" ] || return 0
  wait "$perf_pid" 2>/dev/null || true
  untrack "$perf_pid"
}

# ---- receivers ----
netdaq_mode() { if [ "$1" = direct ]; then echo direct; else echo worker; fi; }
# netdaq_config CASE MODE
# netdaq_config CASE MODE: CASE null, afxdp, or ring (null's verify round: net_ring0, whose tx
# queue feeds its rx queue, with a tx queue sending netdaq payloads)
netdaq_config() {
  local kind=huge hp=true addr extra="" cpu_line tx_region="" tx=""
  [ "$memory" = huge ] || { kind=host; hp=false; }
  case "$1" in
    null) addr="net_null0,size=64"; extra="raw_frames: true, " ;;
    afxdp) addr="net_af_xdp0,iface=$veth_a,start_queue=0,queue_count=1" ;;
    ring)
      addr=net_ring0
      extra='dst_mac: "02:00:00:00:00:02", src_ip: 10.0.0.1, '
      tx_region="  - {name: tx_bufs, kind: $kind, buf_size: 2048, num_bufs: 8192}"
      tx="    tx:
      destination: udp://10.0.0.2:$port
      queues:
        - {id: 0, batch_size: 64, memory_regions: [tx_bufs]}" ;;
  esac
  if [ "$2" = worker ]; then cpu_line="mode: worker, cpu_core: $rx_cpu"; else cpu_line="mode: direct"; fi
  cat <<EOF
# netdaq dpdk: the benchmark's receiver ($0, case $1)
memory_regions:
  - {name: rx_bufs, kind: $kind, buf_size: 2048, num_bufs: $mbufs}
${tx_region}
interfaces:
  - name: rx
    engine: dpdk
    address: "$addr"
    rx:
      queues:
        - {id: 0, $cpu_line, batch_size: $batch, ring_depth: $ring, memory_regions: [rx_bufs]}
${tx}
    dpdk: {${extra}rx_desc: 1024, mempool_cache: $mbcache}
eal: {cores: [$main_cpu, $rx_cpu], main_core: $main_cpu, hugepages: $hp, memory_mb: 256, file_prefix: ${prefix}_nd$drivers_yaml}
run: {duration_s: $duration, tx_payload_size: $(verify_payload 22)}
log: {level: warn}
EOF
}

# pin_threads PID MODE: the CLI's receiver thread (ndq-rx: polls the queue in direct mode,
# takes the worker's bursts in worker mode) on --rx-cpu (direct) or --main-cpu (worker), every
# other thread but the engine's worker (ndq-rx/..., pinned by cpu_core) on --main-cpu.
pin_threads() {
  local pid=$1 i t tid comm rx=$main_cpu
  [ "$2" = worker ] || rx=$rx_cpu
  for ((i = 0; i < 500; i++)); do  # the receiver thread starts after "netdaq run:"
    grep -qx "ndq-rx" /proc/"$pid"/task/*/comm 2>/dev/null && break
    sleep 0.01
  done
  for t in /proc/"$pid"/task/*; do
    tid=${t##*/}
    comm=$(cat "$t/comm" 2>/dev/null) || continue
    case "$comm" in
      ndq-rx/*|ndq-cpu*) ;;
      ndq-rx) taskset -p -c "$rx" "$tid" >/dev/null 2>&1 || true ;;
      *) taskset -p -c "$main_cpu" "$tid" >/dev/null 2>&1 || true ;;
    esac
  done
  { grep -H . /proc/"$pid"/task/*/comm 2>/dev/null || true; } | while IFS=: read -r f c; do
    echo "$c $(taskset -p -c "$(basename "$(dirname "$f")")" 2>/dev/null | sed 's/.*: //')"; done >"$3"
}

# netdaq_rx NAME CASE MODE RUN_SECONDS [NETNS] [verify]: runs netdaq for RUN_SECONDS (--no-verify:
# the timed rounds' frames carry no netdaq payload; "verify": every payload byte checked); the
# caller waits (netdaq_wait)
netdaq_pid=""
netdaq_rx() {
  local name=$1 out=$tmp/$1 ns=${5:-} check=--no-verify
  [ "${6:-}" != verify ] || check=""
  netdaq_config "$2" "$3" >"$out.yaml"
  ${ns:+ip netns exec "$ns"} timeout -s INT -k 5 "$bound" "${rt_cmd[@]}" "$netdaq" run "$out.yaml" -q $check \
    -d "$4" --json "$out.json" >"$out.rx" 2>&1 &
  netdaq_pid=$!
  track "$netdaq_pid"
  rx_started netdaq "$name" "$netdaq_pid" "netdaq run: .*rx queue" 20
  local p
  p=$(child_of "$netdaq_pid")  # timeout's child (ip netns exec and timeout exec)
  [ -z "$p" ] || pin_threads "$p" "$3" "$out.threads"
}
netdaq_wait() { rx_wait netdaq "$1" "$netdaq_pid"; }  # NAME

# testpmd_rx NAME VDEV [NETNS]: starts testpmd rxonly; testpmd_stop sends SIGINT
testpmd_pid=""
testpmd_rx() {
  local name=$1 out=$tmp/$1 ns=${3:-}
  mkfifo "$out.fifo"
  # stdin: a pipe held open (EOF would end a non-interactive testpmd); SIGINT stops it.
  # shellcheck disable=SC2046  # mem_eal: several words
  ${ns:+ip netns exec "$ns"} timeout -s INT -k 5 "$bound" "${rt_cmd[@]}" stdbuf -oL -eL dpdk-testpmd $(mem_eal) --file-prefix "${prefix}_tp" \
      --no-pci --no-telemetry --iova-mode=va -l "$main_cpu,$rx_cpu" --main-lcore "$main_cpu" --vdev "$2" -- \
      --forward-mode=rxonly --nb-cores=1 --burst=64 --total-num-mbufs="$mbufs" --mbcache="$mbcache" --mbuf-size=2048 \
      --rxd=1024 --txd=1024 --stats-period 1 <"$out.fifo" >"$out.rx" 2>&1 &
  testpmd_pid=$!
  track "$testpmd_pid"
  exec 3>"$out.fifo"
  rx_started testpmd "$name" "$testpmd_pid" "start packet forwarding" 20
}
testpmd_stop() {
  local name=$1 out=$tmp/$1 rc=0
  date +%s.%N >"$out.rx.stop"
  kill -INT "$testpmd_pid" 2>/dev/null || true  # timeout passes SIGINT on to testpmd
  exec 3>&-  # and stdin EOF, should it wait for "enter" after the signal
  wait "$testpmd_pid" || rc=$?
  untrack "$testpmd_pid"
  # testpmd 22.11 prints its statistics in the SIGINT handler, then dies of the signal (130).
  # (No statistics: the report says which figures are missing.)
  [ "$rc" = 0 ] || [ "$rc" = 130 ] || round_failed "$name" "testpmd exited with $rc: $(one_line "$out.rx" 5)"
  rm -rf /var/run/dpdk/"${prefix}_tp"  # testpmd leaves its runtime dir (netdaq removes its own)
}

null_round() {  # NAME WHO
  local name=$1
  case "$2" in
    netdaq|direct)
      netdaq_rx "$name" null "$(netdaq_mode "$2")" "$duration"
      perf_sample "$name"
      netdaq_wait "$name"
      perf_done "$name" ;;
    testpmd)
      testpmd_rx "$name" "net_null0,size=64"
      perf_sample "$name"
      sleep "$duration"
      testpmd_stop "$name"
      perf_done "$name" ;;
  esac
}

# ---- case afxdp: the veth lab (lib.sh), 64 B frames from testpmd txonly forwarding on --main-cpu ----
afxdp_round() {  # NAME WHO
  local name=$1 vdev="net_af_xdp0,iface=$veth_a,start_queue=0,queue_count=1"
  veth_stats "$tmp/$name.veth0"
  case "$2" in
    netdaq|direct)
      netdaq_rx "$name" afxdp "$(netdaq_mode "$2")" $((duration + 3)) "$ns_a"
      sender "$name" 64 "$rx_cpu" "$main_cpu"
      netdaq_wait "$name" ;;
    testpmd)
      testpmd_rx "$name" "$vdev" "$ns_a"
      sender "$name" 64 "$rx_cpu" "$main_cpu"
      sleep_past "$tmp/$name.rx.start" $((duration + 3))  # stop as long after readiness as netdaq's run
      testpmd_stop "$name" ;;
  esac
  veth_stats "$tmp/$name.veth1"
  xdp_check "$2" "$name"
}

# ---- verify rounds: netdaq sends, netdaq receives and checks every payload byte (not timed) ----
# null_verify NAME MODE: `netdaq run` on net_ring0 with a tx and an rx queue, verify_pps x
# $duration packets unpaced; the sent count is the process's own
null_verify() {
  local name=$1 out=$tmp/$1
  netdaq_config ring "$2" >"$out.yaml"
  date +%s.%N >"$out.rx.start"
  timeout -s INT -k 5 "$bound" "$netdaq" run "$out.yaml" -q -n $((verify_pps * duration)) -d $((duration + 10)) \
    --json "$out.json" >"$out.rx" 2>&1 || round_failed "$name" "netdaq run (net_ring0) exited with $?: $(one_line "$out.rx" 5)"
  date +%s.%N >"$out.rx.stop"
}
# afxdp_verify NAME MODE: lib.sh netdaq_sender (socket engine in <B>) into netdaq on net_af_xdp
afxdp_verify() {
  local name=$1 payload
  payload=$(verify_payload 22)
  veth_stats "$tmp/$name.veth0"
  netdaq_rx "$name" afxdp "$2" $((duration + 3)) "$ns_a" verify
  netdaq_sender "$name" "$payload"
  netdaq_wait "$name"
  veth_stats "$tmp/$name.veth1"
  xdp_check "$2" "$name"
}

IFS=, read -r -a case_list <<<"$cases"
IFS=, read -r -a receiver_list <<<"$receivers"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for c in "${case_list[@]}"; do
  rt_cmd=()
  case "$c" in
    null) [ "$rt" = 0 ] || rt_cmd=(chrt -f 50) ;;
    afxdp) lab_up ;;
    *) die "unknown case $c (null, afxdp)" ;;
  esac
  for ((r = 1; r <= rounds; r++)); do
    for who in "${receiver_list[@]}"; do
      case "$who" in netdaq|direct|testpmd) ;; *) die "unknown receiver $who (netdaq, direct, testpmd)" ;; esac
      "${c}_round" "$c.r$r.$who" "$who"
    done
    echo "case $c round $r of $rounds done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  done
  rt_cmd=()
  for who in "${receiver_list[@]}"; do
    [ "$who" != testpmd ] || continue
    "${c}_verify" "$c.verify.$who" "$(netdaq_mode "$who")"
  done
  echo "case $c verify round done" >&2
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
leftover=$(ls -d /var/run/dpdk/"$prefix"_nd 2>/dev/null || true)  # netdaq removes its runtime dir at exit

settings=$(printf '{"duration_s": %s, "rounds": %s, "cases": "%s", "receivers": "%s", "main_cpu": %s, "rx_cpu": %s, "mbufs": %s, "burst": 64, "netdaq_batch": %s, "netdaq_ring_depth": %s, "mempool_cache": %s, "rx_desc": 1024, "memory": "%s", "hugepages_reserved": %s, "sched_fifo": %s, "load_before": "%s", "load_after": "%s", "runtime_dirs_left": "%s", "verify_packets": %s, "verify_payload": %s, "verify_pps": %s}' \
  "$duration" "$rounds" "$cases" "$receivers" "$main_cpu" "$rx_cpu" "$mbufs" "$batch" "$ring" "$mbcache" "$memory" "$hp_added" "$([ "$rt" = 1 ] && echo true || echo false)" "$load_before" "$load_after" "$leftover" \
  $((verify_pps * duration)) "$(verify_payload 22)" "$verify_pps")
report "$tmp" "$json_out" "$netdaq" "$settings" <<'PY'
tmp, out, netdaq, settings = sys.argv[1:5]
settings = json.loads(settings)
duration, rounds = settings["duration_s"], settings["rounds"]
cases = [c for c in settings["cases"].split(",") if c]
receivers = [w for w in settings["receivers"].split(",") if w]
netdaqs = [w for w in receivers if w != "testpmd"]
MODE = {"netdaq": "worker", "direct": "direct"}
failed = script_failures(tmp)
settings["payload_verification"] = (
    "the 'verify' round of each case, per netdaq mode (not timed): netdaq sends and netdaq receives without "
    "--no-verify (every payload byte and sequence number checked); null: netdaq run on net_ring0 (tx feeds rx), "
    "afxdp: netdaq's socket sender in the sender namespace at verify_pps into netdaq on net_af_xdp. The timed "
    "rounds run --no-verify: their frames carry no netdaq payload")

def perf_top(name):
    """Top symbols of the polling CPU's cpu-clock profile (perf report --no-children)."""
    path = f"{tmp}/{name}.perf"
    if not os.path.exists(path):
        return []
    rep = subprocess.run(["perf", "report", "-i", path, "--stdio", "--no-children", "--sort", "comm,dso,sym", "-g", "none",
                          "--percent-limit", "1"], capture_output=True, text=True).stdout
    with open(path + ".txt", "w") as f:
        f.write(rep)
    top = []
    for line in rep.splitlines():
        m = re.match(r"\s+([0-9.]+)%\s+(\S+)\s+(\S+)\s+\[[.kH]\]\s+(.*)$", line)
        if m and len(top) < 15:
            top.append({"pct": float(m.group(1)), "comm": m.group(2), "dso": m.group(3), "sym": m.group(4).strip()})
    return top

def testpmd_rx(name, at, sender=None):
    r = testpmd_counts(f"{tmp}/{name}", at)
    if sender is not None:  # the reference: its unexplained loss is a warning
        return over_sender(r, sender, at, strict=False, who="testpmd", hint=path_hint(veth_delta(name)))
    # null: the periodic Rx-pps (the first period shows 0: no previous sample)
    samples = [int(x) for x in re.findall(r"Rx-pps:\s*([0-9]+)", text(f"{tmp}/{name}.rx"))]
    steady = [v for v in samples[1:] if v > 0]
    win = elapsed(f"{tmp}/{name}", "rx")
    r["pps_samples"] = samples
    r["pps_whole_run"] = r["received"] / win if win and r["received"] is not None else None
    if not steady and r["received"] is not None:
        fail(at, f"figure missing: testpmd's steady Rx-pps (periodic samples {samples})")
    r["pps"] = statistics.mean(steady) if steady else None
    return r

def netdaq_rx(name, at, sender=None):
    r, j, q = netdaq_counts(f"{tmp}/{name}", at)
    if not j:
        return r
    r.update(engine_counters=nonzero(q.get("engine")), threads=text(f"{tmp}/{name}.threads").split("\n")[:-1])
    if sender is not None:
        return over_sender(r, sender, at, hint=path_hint(veth_delta(name)))
    r["queue_seconds"] = need(q, "seconds", at, "netdaq queue seconds")
    r["pps"] = need(q, "pps", at, "netdaq queue pps")
    if r["pps"] == 0:
        fail(at, "netdaq received nothing")
    r["pps_whole_run"] = r["received"] / j["seconds"] if j.get("seconds") and r["received"] is not None else None
    return r

def veth_delta(name):
    """Counters of the receiving veth (ethtool -S) that changed over the round."""
    def parse(t):
        return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+([A-Za-z0-9_]+):\s+([0-9]+)$", t, re.M)}
    a, b = parse(text(f"{tmp}/{name}.veth0")), parse(text(f"{tmp}/{name}.veth1"))
    return {k: b[k] - a.get(k, 0) for k in b if k != "peer_ifindex" and b[k] - a.get(k, 0)}

def verify_round(c, who):
    """Case C's verify round of netdaq receiver WHO: the receiver's figures and verify_check's."""
    name = f"{c}.verify.{who}"
    at, start = where(name), len(FAILURES)
    base = f"{tmp}/{name}"
    r, j, q = netdaq_counts(base, at)
    entry = {"round": "verify", "mode": MODE[who], "receiver": r}
    if c == "afxdp":
        tx = netdaq_sender_stats(base, at)
        entry["sender"] = tx
        entry["veth"] = veth_delta(name)
        entry["check"] = verify_check(at, j, tx["sent"], hint=path_hint(entry["veth"]))
    else:  # net_ring0: sender and receiver in one process, the streams know what was sent
        entry["check"] = verify_check(at, j)
    return round_checked(entry, name, failed, start)

results = []
for c in cases:
    rows = []
    for r in range(1, rounds + 1):
        row = {"round": r}
        for who in receivers:
            name = f"{c}.r{r}.{who}"
            at, start = where(name), len(FAILURES)
            tx = sender_stats(f"{tmp}/{name}", at) if c == "afxdp" else None
            rx = (testpmd_rx if who == "testpmd" else netdaq_rx)(name, at, tx)
            row[who] = {"receiver": rx}
            if tx:
                row[who]["sender"] = tx
                row[who]["veth"] = veth_delta(name)
            top = perf_top(name)
            if top:
                row[who]["perf_top"] = top
            round_checked(row[who], name, failed, start)
        rows.append(row)
    def med(who, part, key):
        return median(rows, who, part, key)
    res = {"case": c, "port": "net_null0,size=64" if c == "null" else "net_af_xdp0 on a veth pair, 64 B frames"}
    for who in receivers:
        pps = med(who, "receiver", "pps")
        res[who] = {"rx_pps": pps, "received": med(who, "receiver", "received"), "drops": med(who, "receiver", "drops"),
                    "failed_rounds": sum(1 for x in rows if not x[who]["ok"])}
        if c == "null":  # one polling core, never idle: its time per packet
            res[who]["ns_per_packet"] = 1e9 / pps if pps else None
        if c == "afxdp":
            res[who].update({"lost": med(who, "receiver", "lost"), "sender_pps": med(who, "sender", "pps"),
                             "sent": med(who, "sender", "sent")})
    b = (res.get("testpmd") or {}).get("rx_pps")
    for who in netdaqs:
        a = res[who]["rx_pps"]
        res[who]["ratio_to_testpmd"] = a / b if a and b else None
    res["rounds"] = rows
    res["verify"] = {who: verify_round(c, who) for who in netdaqs}
    results.append(res)

def mpps(v):
    return f"{v/1e6:.2f}" if v is not None else "-"
def ns(v):
    return f"{v:.1f}" if v is not None else "-"

hdr = (f"{'case':>5} {'netdaq':>6} | {'sent':>6} {'netdaq rx':>9} {'ns/pkt':>6} {'drops':>11} {'lost':>8} | {'sent':>6} "
       f"{'testpmd rx':>10} {'ns/pkt':>6} {'drops':>6} {'lost':>8} | {'netdaq/testpmd':>14}")
print(hdr)
print("-" * len(hdr))
for r in results:
    p = r.get("testpmd") or {}
    for who in netdaqs or ["-"]:
        n = r.get(who) or {}
        ratio = f"{n['ratio_to_testpmd']:.2f}x" if n.get("ratio_to_testpmd") else "-"
        if n.get("failed_rounds") == rounds:
            ratio = "netdaq failed"
        print(f"{r['case']:>5} {MODE.get(who, '-'):>6} | {mpps(n.get('sender_pps')):>6} {mpps(n.get('rx_pps')):>9} "
              f"{ns(n.get('ns_per_packet')):>6} {num(n.get('drops')):>11} {num(n.get('lost')):>8} | "
              f"{mpps(p.get('sender_pps')):>6} {mpps(p.get('rx_pps')):>10} {ns(p.get('ns_per_packet')):>6} "
              f"{num(p.get('drops')):>6} {num(p.get('lost')):>8} | {ratio:>14}")
print("(Mpps; medians of the rounds that passed every check; sent: the afxdp sender's rate in the same rounds; "
      "ns/pkt: null only, where the polling core never idles)")
print("\nrounds:")
for r in results:
    for x in r["rounds"]:
        for who in receivers:
            v, e = x[who]["receiver"], x[who]
            label = "testpmd" if who == "testpmd" else "nd-" + MODE[who]
            t = e.get("sender")
            line = f"  {r['case']:>5} r{x['round']} {label:<10} {'' if e['ok'] else 'FAILED '}rx {num(v.get('received')):>12}"
            line += f" ({mpps(v.get('pps'))} Mpps"
            if t:
                line += f"; sent {num(t.get('sent'))} in {t['seconds'] or 0:.2f} s, lost {num(v.get('lost'))}"
            elif v.get("pps_whole_run"):
                line += f"; whole run {v['pps_whole_run']/1e6:.2f}"
            line += ") drops " + reasons_text(v.get("drop_reasons"))
            if e.get("veth"):
                line += "; veth: " + ", ".join(f"{k.replace('rx_queue_0_', '')}={v_:,}" for k, v_ in e["veth"].items()
                                                if "bytes" not in k)
            top = e.get("perf_top")
            if top:
                line += "\n      cpu " + str(settings["rx_cpu"]) + ": " + ", ".join(
                    f"{t_['sym'][:48]} {t_['pct']:.0f}%" for t_ in top[:8])
            print(line)
print("\nverify rounds (netdaq sends, netdaq receives and checks every payload byte and sequence number; not timed):")
for r in results:
    for who, e in r["verify"].items():
        k = e["check"]
        print(f"  {r['case']:>5} verify nd-{MODE[who]:<7} {'ok' if e['ok'] else 'FAILED':<6} sent {num(k.get('sent'))}, "
              f"received {num(k.get('unique'))} intact, lost {num(k.get('lost'))}, malformed {num(k.get('malformed'))}, "
              f"duplicates {num(k.get('duplicates'))}; drops {reasons_text(k.get('drop_reasons'))}")
ver = netdaq_version(netdaq)
print(f"\n{ver} ({netdaq}); medians of {rounds} rounds of {duration:g} s per receiver; EAL main lcore on CPU "
      f"{settings['main_cpu']}, polling lcore on CPU {settings['rx_cpu']}; burst 64 (netdaq batch_size {settings['netdaq_batch']}, ring_depth {settings.get('netdaq_ring_depth', '-')}), {settings['mbufs']} mbufs, memory "
      f"{settings['memory']}{'; null receivers SCHED_FIFO' if settings['sched_fifo'] else ''}; {machine(settings)}")
print("null: steady-state rate (testpmd: periodic Rx-pps; netdaq: queue packets / first-to-last burst); "
      "afxdp: received / sender duration; ns/pkt = 1e9 / rate")
print(f"payload verification: {settings['payload_verification']}")
if settings["runtime_dirs_left"]:
    warn("netdaq", f"left its DPDK runtime dir behind (removed now): {settings['runtime_dirs_left']}")
write_json(out, settings, ver, results)
finish()
PY
