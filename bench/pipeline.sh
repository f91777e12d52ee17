#!/usr/bin/env bash
# The whole path from a NIC's receive queue to frames in GPU memory, end to end, in one
# `netdaq run` process per row, with the two limits that bound it measured in the same run:
# dpdk-testpmd rxonly on the same kind of DPDK port and CPU (what one polling core can
# receive), and pinned host-to-device cudaMemcpy (what PCIe can carry into the GPU).
#
# A row: one `netdaq run CONFIG -q --no-verify -d S --json FILE` with the dpdk engine on
# net_ring0 (DPDK's ring PMD: the port's tx queue feeds its rx queue; no NIC, no hugepage-sized
# copies: the rx queue gets the tx queue's mbufs as they are):
#   generator    the CLI's sender thread (ndq-tx) on --gen-cpu: netdaq payloads (24-byte
#                header + SIZE sample bytes, header only written: --no-verify), burst 64, from
#                its tx queue's own region (a mempool of mbufs: the dpdk engine's fast TX path);
#                unpaced, or paced by the tx queue's pacer (tx.rate_pps) at --gen-rate
#   worker       the rx queue in `mode: worker, cpu_core: W` (thread ndq-nic/rx0 on --worker-cpu):
#                polls the port, hands bursts of 64 through a ring (ring_depth 32 + the bursts the
#                GPU jobs may hold: 66 with job_packets 1024)
#   application  the CLI's receiver thread (ndq-rx) on --app-cpu: reads each payload header
#                (stream, sequence number), then hands the burst to the queue's GPU frame
#                pipeline (rx.reorder: seq_offset 8, seq_bits 64, little endian, payload_offset
#                24, payload_size SIZE, packets_per_frame 64 below 4 KiB samples else 16,
#                job_packets 1024, gpu 0; frames released as soon as they are ready)
#   other        every other thread (main, EAL, CUDA) on --main-cpu
# Row types (--launches): rx_only (no rx.reorder: ring tx -> worker -> CLI receiver only; the
# regions in hugepages, or plain memory with --memory plain), and per launch mode with the
# regions in pinned memory (kind pinned, gpu 0, staging: copy): per_burst, graph and persistent
# (CUDA_MODULE_LOADING=EAGER). Staging copy for persistent too: the kernel gathers each packet
# as aligned 16-byte vectors (the samples are 66 bytes into the frame); read in place
# (staging: direct) it read each vector twice over PCIe and placed 0.38x pinned H2D at 8 KB.
# Sizes (--sizes) are sample bytes per packet: frames on the port are SIZE + 24 + 42 bytes.
#
# The generator's rate (--gen-rate). Unpaced, one sender thread offers what it can: 11-15 Mpps
# on an H200 machine at 1 KB and 8 KB alike (its cost is per packet: each packet's mbuf and
# header lines come back from the worker's core, since net_ring hands the tx queue's mbufs to
# the rx queue and the worker frees them into the generator's pool; the rx_only row, generator
# and worker alone, stalls at ~11 Mpps on both, so at 1 KB the generator is about as fast as
# the pipeline it feeds, not 3x: bench/README.md, issue 34 item 2). At 8 KB that is ~2.4x what
# PCIe carries, so an unpaced 8 KB row measures the pipeline under overload (ring_full drops in
# every GPU row, counted). `--gen-rate 0.82h2d` paces the GPU rows' generator at 0.82 x the
# pinned H2D GB/s measured at the start of this run (pps = 0.82 x GB/s / SIZE sample bytes), so
# a row that keeps up (and rides out the host's stalls in its rings) drops nothing and one that
# does not shows ring_full drops: "placed >= F x
# H2D with no drops" is then a statement about the pipeline, not about an overload. Why pace
# rather than back-pressure the sender (the worker leaving packets in the port's ring): a NIC
# does not back-pressure the wire, it drops (imissed) when its descriptors are full, so the
# honest test of a receive path is a stated offered rate and every loss counted, as here.
# The row says what was offered (gen_rate_pps in the JSON, its "generator:" line) and
# the generator's sent / placed (>= 1 when the generator is not the row's limit). rx_only rows
# are paced only by an N Mpps rate: unpaced, their sent rate is the generator's capacity on this
# port and CPU.
#
# Limits, once per size in the same run, on the same CPUs:
#   testpmd  dpdk-testpmd -v (EAL as the row's netdaq: in-memory on hugepages, or --no-huge)
#            --no-pci --no-telemetry --iova-mode=va -l MAIN,WORKER --vdev
#            net_null0,size=<SIZE + 66> -- --forward-mode=rxonly --nb-cores=1 --burst=64
#            --total-num-mbufs=8192 --mbcache=256 --mbuf-size=<netdaq's buf_size> --rxd=1024
#            --stats-period 1 for --duration s (stdin held open, stopped with SIGINT); its
#            steady Rx-pps (the periodic samples after the first). The polling lcore is on
#            --worker-cpu: the core netdaq's worker polls on.
#   h2d      `netdaq_gpu_throughput --sections h2d --json F`: one pinned host-to-device
#            cudaMemcpy of 64 MiB per packet size, median of 20 (skipped with --no-gpu)
#
# Reported per row: Mpps sent, received (rx queue packets over first to last packet) and
# placed (the pipeline's packets_placed over the same seconds); GB/s into GPU memory
# (bytes_to_gpu over those seconds); frames complete / incomplete; drops per reason; CPU ns
# per received packet of each thread group (generator, worker, application, other): each
# thread's run time (/proc/PID/task/TID/schedstat, else utime + stime of .../stat) from the
# start of traffic (both CLI threads running) to its last sample (every 20 ms until it ends),
# summed per group. Ratios: netdaq / testpmd Mpps (placed for GPU rows, received for rx_only),
# netdaq GB/s into the GPU / pinned H2D GB/s.
#
# What fails the run (exit status 1, after the table and the JSON, with a "FAILED:" list naming
# size, row and figure): netdaq, testpmd or netdaq_gpu_throughput did not end as expected
# (netdaq: 0 at its duration, not interrupted; testpmd: 0 or 130 after SIGINT; the throughput
# binary: 0); a figure missing (never read as 0); sent != received + counted rx drops (drops
# such as ring_full in worker mode are allowed and shown per reason); a malformed packet; GPU
# rows: pipeline packets_in != packets received, packets_placed != packets_in - (duplicate +
# late + malformed + no_buffer), gpu_errors, frames complete == 0. No rate is ever a failure.
# On a machine without a GPU every GPU row fails at netdaq's start (its reason is in the list):
# use --no-gpu there.
#
# usage: bench/pipeline.sh [--duration S] [--sizes 1024,8192] [--launches LIST] [--no-gpu]
#            [--gen-cpu N] [--worker-cpu N] [--app-cpu N] [--main-cpu N] [--json FILE]
#            [--netdaq PATH] [--throughput PATH] [--testpmd PATH] [--memory huge|plain]
#            [--hugepages N] [--job-packets N] [--frame-packets N] [--verify] [--keep DIR]
#            [--gen-rate unpaced|Fh2d|NMpps] [--ring-slack N] [--job-timeout-us N] [--persistent-sms N]
#   --duration S       seconds of traffic per row and of testpmd per size, whole, >= 3 (default 5)
#   --sizes LIST       sample bytes per packet, 1..16000 each (default 1024,8192)
#   --launches LIST    rows per size, in this order: rx_only, per_burst, graph, persistent
#                      (default rx_only,per_burst,graph,persistent)
#   --no-gpu           rx_only rows only, no H2D limit: for a machine without a GPU
#   --gen-cpu N        the generator (ndq-tx) (default 2)
#   --worker-cpu N     the engine's worker, and testpmd's polling lcore (default 3)
#   --app-cpu N        the CLI's receiver (ndq-rx), which feeds the GPU pipeline (default 4)
#   --main-cpu N       EAL main lcore (netdaq, testpmd), every other thread (default 1)
#   --netdaq PATH      netdaq binary with the dpdk engine (default: the first build*/ with one)
#   --throughput PATH  netdaq_gpu_throughput (default: bench/gpu/ of netdaq's build dir)
#   --testpmd PATH     dpdk-testpmd (default: PATH's, then .carry/dpdk/bin/ or .carry/testpmd/bin/)
#   --memory MODE      huge (default: EAL on 2 MiB hugepages, rx_only regions kind huge) or
#                      plain (EAL --no-huge, rx_only regions kind host); GPU rows: kind pinned
#   --hugepages N      2 MiB hugepages reserved on top of those already reserved and given back
#                      at the end, also on an error or Ctrl-C (default 512; 0: none)
#   --job-packets N    rx.reorder job_packets of the GPU rows (default 1024; 0: a job per burst)
#   --ring-slack N     bursts of the worker's ring beyond what the GPU jobs may hold (default 32:
#                      2,048 packets, ~0.4 ms at 5.5 Mpps, what the application may fall behind
#                      in a stall before the worker drops as ring_full); 1..4096
#   --job-timeout-us N rx.reorder job_timeout_us of the GPU rows (default: netdaq's, 100 us: a
#                      paced 8 KB row at 5.5 Mpps then sends jobs of ~550 packets, not 1,024)
#   --persistent-sms N rx.reorder persistent_sms of the persistent rows: the SMs its kernel takes
#                      (default: netdaq's auto, half the GPU's; 1..1024)
#   --jobs-in-flight N rx.reorder bursts_in_flight of the GPU rows: GPU jobs in flight at once
#                      (default 2; 1..8)
#   --frame-packets N  rx.reorder packets_per_frame (default 64 below 4 KiB samples, else 16)
#   --verify           netdaq writes and checks every payload byte (default: headers only)
#   --gen-rate R       the GPU rows' generator: unpaced (default), Fh2d (F x pinned H2D GB/s of
#                      this run, in sample bytes; F in (0, 2]; needs the GPU rows) or NMpps (N
#                      million packets/s)
#   --json FILE        write settings, rows, limits, ratios and the checks' outcome
#   --keep DIR         keep every file (configs, logs, netdaq JSON and --stats lines, thread CPU
#                      samples)
# NETDAQ_DPDK_DRIVERS=DIR: DPDK drivers to load with -d (netdaq and testpmd), for a DPDK copied
# to a machine without its package (scripts/gpu-check.sh). Needs root, dpdk-testpmd, a netdaq
# built with the dpdk engine (and CUDA for the GPU rows).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

duration=5
sizes="1024,8192"
launches="rx_only,per_burst,graph,persistent"
no_gpu=0
gen_cpu=2
worker_cpu=3
app_cpu=4
main_cpu=1
json_out=""
netdaq=""
throughput=""
testpmd=""
memory=huge
hugepages=512
job_packets=1024
ring_slack=32
job_timeout_us=""
persistent_sms=""
bursts_in_flight=2
frame_packets=""
verify=0
keep=""
gen_rate=unpaced
port=47800
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --launches) launches=$2; shift 2 ;;
    --no-gpu) no_gpu=1; shift ;;
    --gen-cpu) gen_cpu=$2; shift 2 ;;
    --worker-cpu) worker_cpu=$2; shift 2 ;;
    --app-cpu) app_cpu=$2; shift 2 ;;
    --main-cpu) main_cpu=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --netdaq) netdaq=$2; shift 2 ;;
    --throughput) throughput=$2; shift 2 ;;
    --testpmd) testpmd=$2; shift 2 ;;
    --memory) memory=$2; shift 2 ;;
    --hugepages) hugepages=$2; shift 2 ;;
    --job-packets) job_packets=$2; shift 2 ;;
    --ring-slack) ring_slack=$2; shift 2 ;;
    --job-timeout-us) job_timeout_us=$2; shift 2 ;;
    --persistent-sms) persistent_sms=$2; shift 2 ;;
    --jobs-in-flight) bursts_in_flight=$2; shift 2 ;;
    --frame-packets) frame_packets=$2; shift 2 ;;
    --verify) verify=1; shift ;;
    --keep) keep=$2; shift 2 ;;
    --gen-rate) gen_rate=$2; shift 2 ;;
    -h|--help) usage ;;
    *) bad_option "$1" ;;
  esac
done

# ---- checks of the options and the tools ----
need_root "hugepages, DPDK"
need_duration
for v in gen_cpu worker_cpu app_cpu main_cpu hugepages job_packets ring_slack; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || die "--${v//_/-}: a whole number (got '${!v}')"
done
[[ "$bursts_in_flight" =~ ^[1-8]$ ]] || die "--jobs-in-flight: 1..8 jobs (got '$bursts_in_flight')"
[ -z "$job_timeout_us" ] || [[ "$job_timeout_us" =~ ^[1-9][0-9]{0,6}$ ]] || die "--job-timeout-us: a whole number of microseconds >= 1 (got '$job_timeout_us')"
[ -z "$persistent_sms" ] || [[ "$persistent_sms" =~ ^[1-9][0-9]{0,3}$ ]] || die "--persistent-sms: SMs, 1..1024 (got '$persistent_sms')"
[ "$ring_slack" -ge 1 ] && [ "$ring_slack" -le 4096 ] || die "--ring-slack: 1..4096 bursts (got $ring_slack)"
[ -z "$frame_packets" ] || [[ "$frame_packets" =~ ^[1-9][0-9]*$ ]] || die "--frame-packets: a whole number >= 1"
ncpu=$(nproc --all)
for v in gen_cpu worker_cpu app_cpu main_cpu; do
  [ "${!v}" -lt "$ncpu" ] || die "--${v//_/-} ${!v}: this machine has CPUs 0..$((ncpu - 1))"
done
# The worker polls without pause: a CPU of its own (the generator and the application may share one)
need_other_cpus --worker-cpu "$worker_cpu" --gen-cpu "$gen_cpu"
need_other_cpus --worker-cpu "$worker_cpu" --app-cpu "$app_cpu"
need_other_cpus --worker-cpu "$worker_cpu" --main-cpu "$main_cpu"
case "$memory" in huge|plain) ;; *) die "--memory: huge or plain" ;; esac
# --gen-rate: unpaced, F h2d (0 < F <= 2) or N Mpps (0 < N <= 1000)
if [[ "$gen_rate" =~ ^([0-9]+(\.[0-9]+)?)h2d$ ]]; then
  python3 -c 'import sys; sys.exit(0 if 0 < float(sys.argv[1]) <= 2 else 1)' "${BASH_REMATCH[1]}" \
    || die "--gen-rate $gen_rate: F h2d with 0 < F <= 2"
  [ "$no_gpu" = 0 ] || die "--gen-rate $gen_rate: a fraction of pinned H2D needs the GPU rows (not --no-gpu); use N Mpps"
elif [[ "$gen_rate" =~ ^([0-9]+(\.[0-9]+)?)[Mm]pps$ ]]; then
  python3 -c 'import sys; sys.exit(0 if 0 < float(sys.argv[1]) <= 1000 else 1)' "${BASH_REMATCH[1]}" \
    || die "--gen-rate $gen_rate: N Mpps with 0 < N <= 1000"
elif [ "$gen_rate" != unpaced ]; then
  die "--gen-rate: unpaced, Fh2d (e.g. 0.82h2d: 0.82 x pinned H2D) or NMpps (e.g. 5.5Mpps) (got '$gen_rate')"
fi
IFS=, read -r -a size_list <<<"$sizes"
[ "${#size_list[@]}" -gt 0 ] || die "--sizes: at least one size"
for s in "${size_list[@]}"; do
  if ! [[ "$s" =~ ^[1-9][0-9]*$ ]] || [ "$s" -gt 16000 ]; then die "--sizes: sample bytes 1..16000 (got '$s')"; fi
done
if [ "$no_gpu" = 1 ]; then launches=rx_only; fi
IFS=, read -r -a launch_list <<<"$launches"
[ "${#launch_list[@]}" -gt 0 ] || die "--launches: at least one of rx_only, per_burst, graph, persistent"
gpu_rows=0
for l in "${launch_list[@]}"; do
  case "$l" in
    rx_only) ;;
    per_burst|graph|persistent) gpu_rows=1 ;;
    *) die "--launches: unknown row '$l' (rx_only, per_burst, graph, persistent)" ;;
  esac
done

find_netdaq dpdk
if [ "$gpu_rows" = 1 ] && [ -z "$throughput" ]; then
  throughput=$(dirname "$(dirname "$(dirname "$netdaq")")")/bench/gpu/netdaq_gpu_throughput
  [ -x "$throughput" ] || die "no $throughput next to $netdaq (build netdaq_gpu_throughput, or pass --throughput PATH; --no-gpu: no GPU rows)"
fi
[ "$gpu_rows" = 0 ] || [ -x "$throughput" ] || die "--throughput $throughput: not an executable"
[ -z "$throughput" ] || throughput=$(realpath "$throughput")
if [ -z "$testpmd" ]; then
  # an installed one first: beside a system DPDK, EAL would also load the system's drivers into
  # the carried testpmd, which links copies of some of them (it aborts)
  for c in "$(command -v dpdk-testpmd || true)" .carry/dpdk/bin/dpdk-testpmd .carry/testpmd/bin/dpdk-testpmd; do
    if [ -n "$c" ] && [ -x "$c" ]; then testpmd=$c; break; fi
  done
fi
[ -n "$testpmd" ] || die "dpdk-testpmd not found (apt-get install dpdk-dev; on the GPU machine scripts/make-carry.sh carries it in .carry/dpdk/bin; or --testpmd PATH)"
[ -x "$testpmd" ] || die "--testpmd $testpmd: not an executable"
testpmd=$(realpath "$testpmd")

# ---- the run's files, its processes and the exit trap (no network namespaces here) ----
prefix=ndqp$$
bound=$((duration + 60))  # seconds any one process may run (timeout -s INT, then KILL); CUDA starts slowly
tmp=$(mktemp -d)
cleanup() {
  local rc=$? p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf /var/run/dpdk/"$prefix"_* 2>/dev/null || true
  hugepages_give_back
  if [ -n "$keep" ]; then mkdir -p "$keep" && cp -r "$tmp"/. "$keep"/; fi
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$memory" != huge ] || hugepages_reserve "$hugepages" 640 "a row needs up to ~600 (or --memory plain)"

# NETDAQ_DPDK_DRIVERS=DIR: drivers to load with -d, for a DPDK copied to a machine without its
# package (scripts/gpu-check.sh), where EAL's built-in driver path is empty.
drivers_eal=${NETDAQ_DPDK_DRIVERS:+-d $NETDAQ_DPDK_DRIVERS}
drivers_yaml=${NETDAQ_DPDK_DRIVERS:+, args: [-d$NETDAQ_DPDK_DRIVERS]}

# why FILE: what a process that failed said: its lines naming the problem (PANIC, error, cannot,
# failed, invalid), else its last lines
why() {
  local w
  w=$(grep -m 3 -iE 'panic|error|cannot|fail|invalid' "$1" 2>/dev/null | tr -s '\n\t' '  ' | cut -c1-400 || true)
  if [ -n "$w" ]; then echo "$w"; else one_line "$1" 4; fi
}

# ---- sizes of a row ----
batch=64
max_open_frames=4
# The worker's ring: --ring-slack bursts (32), plus the bursts the GPU jobs hold (each job slot up to
# job_packets / batch + 1 bursts until its job completes). The CLI's receiver retires finished
# jobs only when it gets a burst: if the GPU jobs held every burst of the queue, the worker
# would have none to fill (all ring_full) and the receiver none to take, until the run's end.
# Every row gets the same ring, rx_only too.
ring_depth=$((ring_slack + bursts_in_flight * ((job_packets + batch - 1) / batch + 1)))
frame_bytes() { echo $(($1 + 24 + 42)); }  # SIZE: the Ethernet frame (header 24, Ethernet/IPv4/UDP 42)
# buf_size SIZE: one buffer holds the frame and DPDK's 128-byte headroom, in whole KiB, >= 2048
buf_size() {
  local b=$(($(frame_bytes "$1") + 128))
  b=$(((b + 1023) / 1024 * 1024))
  echo $((b < 2048 ? 2048 : b))
}
ppf_of() { if [ -n "$frame_packets" ]; then echo "$frame_packets"; elif [ "$1" -lt 4096 ]; then echo 64; else echo 16; fi; }
# frame_buffers SIZE: the open frames plus, per job in flight, the frames one job spans (+ margin)
frame_buffers_of() {
  local ppf n
  ppf=$(ppf_of "$1")
  n=$((max_open_frames + bursts_in_flight * ((batch + job_packets + ppf - 1) / ppf + 1) + 4))
  echo $((n > 4096 ? 4096 : n))
}
# Pools: rx as the validator counts it (worker ring + 1 burst, rx descriptors, mempool cache, GPU
# jobs in flight); tx also feeds everything the rx side holds on net_ring (the ring PMD hands
# the tx queue's mbufs to the rx queue): room for both, rounded up to 1,024.
rx_bufs() { local n=$(((ring_depth + 1) * batch + 1024 + 256 + bursts_in_flight * (batch + job_packets) + 512)); echo $(((n + 1023) / 1024 * 1024)); }
tx_bufs() { local n=$((64 * batch + 1024 + 1024 + $(rx_bufs))); echo $(((n + 1023) / 1024 * 1024)); }

# gen_pps SIZE LAUNCH: the generator's packets/s for the row (--gen-rate), nothing if unpaced;
# Fh2d from the pinned H2D figure of this run (the one the row's ratio uses)
gen_pps() {
  case "$gen_rate" in
    unpaced) ;;
    *[Mm]pps) python3 -c 'import sys; print(round(float(sys.argv[1][:-4]) * 1e6))' "$gen_rate" ;;
    *h2d) [ "$2" = rx_only ] || python3 - "$tmp/h2d.json" "$1" "${gen_rate%h2d}" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)  # no H2D figure: the row fails (below)
size, f = int(sys.argv[2]), float(sys.argv[3])
row = next((x for x in j.get("results") or [] if x.get("section") == "h2d_pinned"
            and x.get("packet_bytes") == (1024 if size < 4096 else 8192) and x.get("gbps")), None)
if row:
    print(round(f * row["gbps"] * 1e9 / size))
PY
      ;;
  esac
}

# netdaq_config SIZE LAUNCH [PPS]: the row's config (PPS: the generator's pacing)
netdaq_config() {
  local size=$1 launch=$2 kind gpu_key="" hp=true reorder="" staging=copy buf rate="" sms=""
  buf=$(buf_size "$size")
  [ -z "${3:-}" ] || rate="
      rate_pps: $3"
  [ "$memory" = huge ] || hp=false
  if [ "$launch" = rx_only ]; then
    if [ "$memory" = huge ]; then kind=huge; else kind=host; fi
  else
    kind=pinned gpu_key="gpu: 0, "
    [ "$launch" != persistent ] || sms=$persistent_sms  # the key is refused with the other launch modes
    reorder="      reorder:
        - {queue: 0, gpu: 0, seq_offset: 8, seq_bits: 64, seq_byte_order: little, payload_offset: 24,
           payload_size: $size, packets_per_frame: $(ppf_of "$size"), max_open_frames: $max_open_frames,
           frame_buffers: $(frame_buffers_of "$size"), bursts_in_flight: $bursts_in_flight,
           job_packets: $job_packets,${job_timeout_us:+ job_timeout_us: $job_timeout_us,} staging: $staging, launch: $launch${sms:+, persistent_sms: $sms}}"
  fi
  cat <<EOF
# netdaq dpdk on net_ring0 (tx feeds rx) -> ${launch}: bench/pipeline.sh, $size sample bytes per packet
memory_regions:
  - {name: rx_bufs, kind: $kind, ${gpu_key}buf_size: $buf, num_bufs: $(rx_bufs)}
  - {name: tx_bufs, kind: $kind, ${gpu_key}buf_size: $buf, num_bufs: $(tx_bufs)}
interfaces:
  - name: nic
    engine: dpdk
    address: net_ring0
    rx:
      queues:
        - {id: 0, mode: worker, cpu_core: $worker_cpu, batch_size: $batch, ring_depth: $ring_depth, memory_regions: [rx_bufs]}
${reorder}
    tx:
      destination: udp://10.0.0.2:$port${rate}
      queues:
        - {id: 0, batch_size: $batch, memory_regions: [tx_bufs]}
    dpdk: {dst_mac: "02:00:00:00:00:02", src_ip: 10.0.0.1, rx_desc: 1024, mempool_cache: 256}
eal: {cores: [$main_cpu, $worker_cpu], main_core: $main_cpu, hugepages: $hp, memory_mb: 256, file_prefix: ${prefix}_nd$drivers_yaml}
run: {duration_s: $duration, tx_payload_size: $((size + 24)), drain_ms: 1000}
log: {level: warn}
EOF
}

# ---- the per-thread sampler: pins netdaq's threads, then samples their CPU time ----
# python3 -c SAMPLER TIMEOUT_PID OUT GEN_CPU WORKER_CPU APP_CPU MAIN_CPU: finds netdaq (timeout's
# child), waits until both CLI threads run (traffic has started: the session is open), pins its
# threads (ndq-tx on GEN_CPU, ndq-rx on APP_CPU, the engine's worker ndq-<queue> on WORKER_CPU,
# where its cpu_core put it, every other thread on MAIN_CPU; later threads, and threads that
# rename themselves, as they show up), takes the start sample, then samples every 20 ms until
# the process has gone. OUT: JSON {started, t_start, t_end, threads: {tid: {comm, cpus, start,
# end, t_last}}} with start/end {"ns": schedstat run time or null, "ticks_ns": (utime + stime)
# in ns} and t_last the time of the thread's last sample.
sampler_py=$(cat <<'PY'
import json, os, sys, time
tpid, out = int(sys.argv[1]), sys.argv[2]
gen, worker, app, main = (int(x) for x in sys.argv[3:7])
hz = os.sysconf("SC_CLK_TCK")
doc = {"started": False, "threads": {}}

def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None

def child():
    for _ in range(2000):  # timeout forks netdaq at once; 20 s at most
        c = (read(f"/proc/{tpid}/task/{tpid}/children") or "").split()
        if c:
            return int(c[0])
        if read(f"/proc/{tpid}/stat") is None:
            return None
        time.sleep(0.01)
    return None

def sample(pid):
    s = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for t in tids:
        comm, st, ss = read(f"/proc/{pid}/task/{t}/comm"), read(f"/proc/{pid}/task/{t}/stat"), read(f"/proc/{pid}/task/{t}/schedstat")
        if comm is None or st is None:
            continue
        f = st[st.rfind(")") + 2:].split()  # fields after comm: state is field 3, utime 14, stime 15
        ticks = int(f[11]) + int(f[12])
        s[t] = {"comm": comm.strip(), "ns": int(ss.split()[0]) if ss else None, "ticks_ns": ticks * 1_000_000_000 // hz}
    return s

def pin(pid, s, pinned):
    """Each thread once per name (a new thread has its creator's name until it names itself)."""
    for t, v in s.items():
        c = v["comm"]
        if pinned.get(t, (None,))[0] == c:
            continue
        # the engine's worker (ndq-<queue>, ndq-cpu<N>) pins itself on cpu_core: kept there
        cpu = gen if c == "ndq-tx" else app if c == "ndq-rx" else worker if c.startswith("ndq-") else main
        try:
            os.sched_setaffinity(int(t), {cpu})
            pinned[t] = (c, sorted(os.sched_getaffinity(int(t))))
        except OSError:
            pass

pid = child()
pinned = {}
if pid:
    doc["pid"] = pid
    # until traffic starts: both CLI threads named (a thread names itself first thing)
    while True:
        s = sample(pid)
        if s is None:
            break
        comms = {v["comm"] for v in s.values()}
        if "ndq-rx" in comms and "ndq-tx" in comms:
            pin(pid, s, pinned)
            s = sample(pid) or s
            doc["started"], doc["t_start"] = True, time.time()
            for t, v in s.items():
                doc["threads"][t] = {"comm": v["comm"], "start": v, "end": v, "t_last": doc["t_start"]}
            break
        # nothing pinned before: the session checks its worker's cpu_core against the
        # affinity of the thread that opens it
        time.sleep(0.005)
    while doc["started"]:
        s = sample(pid)
        if s is None or not s:
            break
        now = time.time()
        pin(pid, s, pinned)
        for t, v in s.items():
            e = doc["threads"].setdefault(t, {"comm": v["comm"], "start": {"ns": 0 if v["ns"] is not None else None, "ticks_ns": 0}})
            e["comm"], e["end"], e["t_last"] = v["comm"], v, now
        doc["t_end"] = now
        time.sleep(0.02)
for t, e in doc["threads"].items():
    e["cpus"] = pinned.get(t, (None, None))[1]
with open(out, "w") as f:
    json.dump(doc, f)
PY
)

# ---- a netdaq row ----
# netdaq_row NAME SIZE LAUNCH: `netdaq run` for --duration s with the sampler beside it
netdaq_row() {
  local name=$1 out=$tmp/$1 check=--no-verify rc=0 npid spid env=() pps=""
  [ "$verify" = 0 ] || check=""
  [ "$3" != persistent ] || env=(env CUDA_MODULE_LOADING=EAGER)  # no lazy kernel load while it runs
  if [ "$gen_rate" != unpaced ]; then
    pps=$(gen_pps "$2" "$3")
    if [ -z "$pps" ] && [ "$3" != rx_only ]; then
      round_failed "$name" "--gen-rate $gen_rate: no pinned H2D figure to pace the generator at"
      return
    fi
  fi
  echo "${pps:-unpaced}" >"$out.gen_rate"
  netdaq_config "$2" "$3" "$pps" >"$out.yaml"
  echo "row $name: netdaq run ($3, $2 B samples, $duration s, generator ${pps:+paced at }${pps:-unpaced}${pps:+ pps})" >&2
  date +%s.%N >"$out.rx.start"
  # shellcheck disable=SC2086  # check: no word or one
  timeout -s INT -k 5 "$bound" "${env[@]}" "$netdaq" run "$out.yaml" -q $check -d "$duration" --json "$out.json" \
    --stats "$out.stats" >"$out.rx" 2>&1 &
  npid=$!
  track "$npid"
  taskset -c "$main_cpu" timeout -k 5 "$((bound + 10))" python3 -c "$sampler_py" "$npid" "$out.cpu.json" \
    "$gen_cpu" "$worker_cpu" "$app_cpu" "$main_cpu" >"$out.sampler" 2>&1 &
  spid=$!
  track "$spid"
  wait "$npid" || rc=$?
  untrack "$npid"
  date +%s.%N >"$out.rx.stop"
  wait "$spid" || round_failed "$name" "the CPU sampler exited with $?: $(one_line "$out.sampler")"
  untrack "$spid"
  [ "$rc" = 0 ] || round_failed "$name" "netdaq run exited with $rc$([ "$rc" = 124 ] && echo " (stopped by the script's bound of $bound s)"): $(why "$out.rx")"
  rm -rf /var/run/dpdk/"${prefix}_nd"  # after a failed start
}

# ---- the testpmd limit: rxonly on net_null0,size=FRAME on the worker's CPU ----
testpmd_row() {  # NAME SIZE
  local name=$1 out=$tmp/$1 rc=0 tpid mem started=0
  if [ "$memory" = huge ]; then mem="--in-memory -m 256"; else mem="--no-huge --no-shconf -m 256"; fi
  echo "row $name: dpdk-testpmd rxonly on net_null0,size=$(frame_bytes "$2") ($duration s)" >&2
  mkfifo "$out.fifo"
  # stdin: a pipe held open (EOF would end a non-interactive testpmd); SIGINT stops it.
  # shellcheck disable=SC2086  # mem, drivers_eal: several words
  timeout -s INT -k 5 "$bound" stdbuf -oL -eL "$testpmd" -v $mem $drivers_eal --file-prefix "${prefix}_tp" \
    --no-pci --no-telemetry --iova-mode=va -l "$main_cpu,$worker_cpu" --main-lcore "$main_cpu" \
    --vdev "net_null0,size=$(frame_bytes "$2")" -- --forward-mode=rxonly --nb-cores=1 --burst=64 \
    --total-num-mbufs=8192 --mbcache=256 --mbuf-size="$(buf_size "$2")" --rxd=1024 --txd=1024 --stats-period 1 \
    <"$out.fifo" >"$out.rx" 2>&1 &
  tpid=$!
  track "$tpid"
  exec 3>"$out.fifo"
  if wait_for "$out.rx" "start packet forwarding\|Start automatic packet forwarding" 30 "$tpid"; then
    started=1
    date +%s.%N >"$out.rx.start"
    sleep "$duration"
  fi
  date +%s.%N >"$out.rx.stop"
  kill -INT "$tpid" 2>/dev/null || true  # timeout passes SIGINT on to testpmd
  exec 3>&-
  wait "$tpid" || rc=$?
  untrack "$tpid"
  # testpmd 22.11 prints its statistics in the SIGINT handler, then dies of the signal (130)
  if [ "$started" = 0 ]; then
    round_failed "$name" "testpmd did not start (exit status $rc): $(why "$out.rx")"
  elif [ "$rc" != 0 ] && [ "$rc" != 130 ]; then
    round_failed "$name" "testpmd exited with $rc: $(why "$out.rx")"
  fi
  rm -rf /var/run/dpdk/"${prefix}_tp"
}

# ---- the H2D limit ----
h2d_limit() {
  local rc=0
  echo "limit h2d: $throughput --sections h2d" >&2
  timeout -s INT -k 5 "$bound" taskset -c "$main_cpu" "$throughput" --sections h2d --json "$tmp/h2d.json" >"$tmp/h2d.out" 2>&1 || rc=$?
  [ "$rc" = 0 ] || round_failed h2d "netdaq_gpu_throughput --sections h2d exited with $rc: $(why "$tmp/h2d.out")"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
[ "$gpu_rows" = 0 ] || h2d_limit
for s in "${size_list[@]}"; do
  testpmd_row "$s.testpmd" "$s"
  for l in "${launch_list[@]}"; do netdaq_row "$s.$l" "$s" "$l"; done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
leftover=$(ls -d /var/run/dpdk/"$prefix"_* 2>/dev/null || true)

settings=$(python3 -c 'import json, sys; print(json.dumps(dict(zip(sys.argv[1::2], sys.argv[2::2]))))' \
  duration_s "$duration" sizes "$sizes" launches "$launches" no_gpu "$no_gpu" gen_cpu "$gen_cpu" \
  worker_cpu "$worker_cpu" app_cpu "$app_cpu" main_cpu "$main_cpu" memory "$memory" hugepages_reserved "$hp_added" \
  job_packets "$job_packets" frame_packets "$frame_packets" verify "$verify" batch "$batch" ring_depth "$ring_depth" \
  bursts_in_flight "$bursts_in_flight" ring_slack "$ring_slack" job_timeout_us "$job_timeout_us" persistent_sms "$persistent_sms" max_open_frames "$max_open_frames" load_before "$load_before" \
  load_after "$load_after" runtime_dirs_left "$leftover" testpmd "$testpmd" throughput "$throughput" \
  drivers "${NETDAQ_DPDK_DRIVERS:-}" gen_rate "$gen_rate")
report "$tmp" "$json_out" "$netdaq" "$settings" <<'PY'
tmp, out, netdaq, settings = sys.argv[1:5]
settings = json.loads(settings)
for k in ("duration_s", "no_gpu", "gen_cpu", "worker_cpu", "app_cpu", "main_cpu", "hugepages_reserved", "job_packets",
          "verify", "batch", "ring_depth", "bursts_in_flight", "ring_slack", "max_open_frames"):
    settings[k] = int(settings[k])
settings["frame_packets"] = int(settings["frame_packets"]) if settings["frame_packets"] else None
settings["job_timeout_us"] = int(settings["job_timeout_us"]) if settings["job_timeout_us"] else None  # None: netdaq's default
settings["persistent_sms"] = int(settings["persistent_sms"]) if settings["persistent_sms"] else None  # None: auto
for k in ("no_gpu", "verify"):
    settings[k] = bool(settings[k])
sizes = [int(s) for s in settings["sizes"].split(",") if s]
launches = [l for l in settings["launches"].split(",") if l]
GPU = ("per_burst", "graph", "persistent")

def label(name):
    """A row's name SIZE.WHO as 'size SIZE B, WHO'; h2d as 'limit h2d'."""
    size, _, who = name.partition(".")
    return f"size {size} B, {who}" if who else f"limit {name}"

failed = {}
for line in text(f"{tmp}/failed").splitlines():
    name, _, what = line.partition("\t")
    failed.setdefault(name, []).append(what)
    fail(label(name), what)

def mean(v):
    return sum(v) / len(v) if v else None

# ---- limits ----
def testpmd_limit(size):
    name = f"{size}.testpmd"
    at = label(name)
    base = f"{tmp}/{name}"
    out = text(base + ".rx")
    r = {"port": f"net_null0,size={size + 66}", "frame_bytes": size + 66}
    m = re.search(r"RTE Version: '([^']*)'", out)
    r["version"] = m.group(1) if m else None
    if name in failed:  # did not start or crashed: that failure says it, no figure is read
        return r
    samples = [int(x) for x in re.findall(r"Rx-pps:\s*([0-9]+)", out)]
    steady = [v for v in samples[1:] if v > 0]
    r["pps_samples"] = samples
    r["pps"] = mean(steady)
    if r["pps"] is None:
        fail(at, f"figure missing: testpmd's steady Rx-pps (periodic samples {samples}): {tail(base + '.rx', 300)!r}")
    c = testpmd_counts(base, at)
    r.update(received=c.get("received"), drops=c.get("drops"), drop_reasons=c.get("drop_reasons"))
    r["ns_per_packet"] = 1e9 / r["pps"] if r["pps"] else None
    return r

def h2d_limits():
    if settings["no_gpu"] or not any(l in GPU for l in launches):
        return {}
    j = load_json(f"{tmp}/h2d.json")
    res = {}
    for size in sizes:
        row = next((x for x in (j or {}).get("results") or [] if x.get("section") == "h2d_pinned"
                    and x.get("packet_bytes") == (1024 if size < 4096 else 8192)), None)
        if row is None:
            if "h2d" not in failed:
                fail("limit h2d", f"figure missing: pinned H2D GB/s (netdaq_gpu_throughput --sections h2d wrote none): "
                                  f"{tail(tmp + '/h2d.out', 300)!r}")
            res[size] = {"gbps": None}
        else:
            res[size] = {"gbps": row.get("gbps"), "copy_mib": row.get("mib"), "measured_at_packet_bytes": row.get("packet_bytes"),
                         "device": j.get("device")}
    return res

# ---- a netdaq row ----
def group_of(comm):
    if comm == "ndq-tx":
        return "generator"
    if comm == "ndq-rx":
        return "application"
    if comm.startswith("ndq-"):
        return "worker"
    return "other"

def cpu_groups(name, at, packets):
    """Per thread group: CPU seconds from the start of traffic to each thread's last sample,
    the share of the traffic's time (busy), ns per received packet; other's threads by name."""
    doc = load_json(f"{tmp}/{name}.cpu.json")
    if not doc or not doc.get("started"):
        fail(at, "figure missing: per-thread CPU times (the sampler saw no traffic start: netdaq's ndq-rx and ndq-tx threads)")
        return None
    # busy: over the traffic, from its start to the generator's last sample (its thread ends with
    # the sending; what the others do in the drain after it counts too, so it may pass 100%)
    gen_last = max((e.get("t_last") or 0 for e in doc["threads"].values() if e["comm"] == "ndq-tx"), default=0)
    wall = gen_last - (doc.get("t_start") or 0)
    groups = {g: {"cpu_s": 0.0, "threads": 0, "cpus": set()} for g in ("generator", "worker", "application", "other")}
    others = {}
    clock = "schedstat"
    for t, e in doc["threads"].items():
        s, n = e["start"], e["end"]
        if s.get("ns") is not None and n.get("ns") is not None:
            d = n["ns"] - s["ns"]
        else:
            d, clock = n["ticks_ns"] - s["ticks_ns"], "utime+stime"
        g = groups[group_of(e["comm"])]
        g["cpu_s"] += d / 1e9
        g["threads"] += 1
        g["cpus"].update(e.get("cpus") or [])
        if group_of(e["comm"]) == "other":
            key = re.sub(r"[0-9]+$", "N", e["comm"])
            others[key] = others.get(key, 0) + d / 1e9
    for k in ("generator", "worker", "application"):
        if not groups[k]["threads"]:
            fail(at, f"figure missing: CPU time of the {k} thread (not found)")
    res = {"clock": clock, "traffic_s": wall, "sampled_s": (doc.get("t_end") or 0) - (doc.get("t_start") or 0)}
    for k, g in groups.items():
        res[k] = {"cpu_s": g["cpu_s"], "busy": g["cpu_s"] / wall if wall > 0 else None, "threads": g["threads"],
                  "cpus": sorted(g["cpus"]),
                  "ns_per_packet": g["cpu_s"] * 1e9 / packets if packets else None}
    res["other_by_thread"] = {k: round(v, 4) for k, v in sorted(others.items(), key=lambda x: -x[1])}
    return res

def netdaq_row(size, launch):
    name = f"{size}.{launch}"
    at = label(name)
    start = len(FAILURES)
    base = f"{tmp}/{name}"
    row = {"size": size, "row": launch, "frame_bytes": size + 66, "udp_payload": size + 24,
           "staging": None if launch == "rx_only" else "copy"}
    g = text(base + ".gen_rate").strip()
    row["gen_rate_pps"] = int(g) if g.isdigit() else None  # the generator's pacing; None: unpaced
    j = load_json(base + ".json")
    if j is None and name in failed:  # netdaq failed (its reason is the failure): nothing measured
        row.update(ok=False, failures=FAILURES[start:] + [f"{at}: {w}" for w in failed[name]],
                   output=tail(base + ".rx", 600))
        return row
    r, j, q = netdaq_counts(base, at)
    row["receiver"] = r
    if not j:
        row["ok"] = False
        return row
    tq = next((x for x in j.get("queues") or [] if x.get("direction") == "tx"), None)
    if tq is None:
        fail(at, "figure missing: netdaq's tx queue (the generator)")
        tq = {}
    sent = need(tq, "packets", at, "tx queue packets (sent)")
    row["sent"] = sent
    row["sent_pps"] = tq.get("pps")
    row["tx_drops"] = nonzero(tq.get("drops"))
    received = r.get("received")
    seconds = need(q, "seconds", at, "rx queue seconds (first to last packet)")
    row["seconds"] = seconds
    row["rx_pps"] = need(q, "pps", at, "rx queue pps")
    row["lost"] = loss_check(at, sent, received, r.get("drop_reasons"))
    totals = need(j, "totals", at, "netdaq totals") or {}
    bad = need(totals, "malformed", at, "malformed packets")
    row["malformed"] = bad
    if bad:
        fail(at, f"{bad:,} malformed packets (netdaq's own payloads: wrong size or no netdaq header)")
    row["streams"] = [{k: s.get(k) for k in ("sent", "received", "unique", "lost", "duplicates", "reordered")}
                      for s in j.get("streams") or []]
    if launch in GPU:
        g = next(iter(j.get("gpu") or []), None)
        if g is None:
            fail(at, "figure missing: the GPU pipeline's figures (netdaq's JSON has no gpu entry)")
            g = {}
        keys = ("packets_in", "packets_placed", "duplicate", "late", "malformed", "no_buffer", "frames_complete",
                "frames_incomplete", "frames_skipped", "frames_dropped", "packets_missing", "bytes_to_gpu", "jobs",
                "waits", "gpu_errors", "seconds")
        p = {k: need(g, k, at, f"gpu {k}") for k in keys} if g else {k: None for k in keys}
        row["pipeline"] = p
        if None not in (p["packets_in"], received) and p["packets_in"] != received:
            fail(at, f"the pipeline got {p['packets_in']:,} packets, the receiver {received:,}")
        drops = [p[k] for k in ("duplicate", "late", "malformed", "no_buffer")]
        if None not in drops and None not in (p["packets_in"], p["packets_placed"]):
            row["pipeline_drops"] = dict(zip(("duplicate", "late", "malformed", "no_buffer"), drops))
            if p["packets_placed"] != p["packets_in"] - sum(drops):
                fail(at, f"packets placed {p['packets_placed']:,} != packets in {p['packets_in']:,} - counted pipeline drops "
                         f"{sum(drops):,} ({reasons_text(nonzero(row['pipeline_drops']))})")
        if p["gpu_errors"]:
            fail(at, f"{p['gpu_errors']:,} GPU errors")
        if p["frames_complete"] == 0:
            fail(at, "no frame complete")
        row["placed_pps"] = p["packets_placed"] / seconds if p["packets_placed"] is not None and seconds else None
        row["gpu_gbps"] = p["bytes_to_gpu"] / p["seconds"] / 1e9 if p["bytes_to_gpu"] is not None and p["seconds"] else None
    row["cpu"] = cpu_groups(name, at, received)
    own = [f"{at}: {w}" for w in failed.get(name, [])] + FAILURES[start:]
    row["ok"] = not own
    if own:
        row["failures"] = own
    return row

limits = {"testpmd": {}, "h2d": h2d_limits()}
rows = []
for size in sizes:
    limits["testpmd"][size] = testpmd_limit(size)
    for launch in launches:
        row = netdaq_row(size, launch)
        tp = limits["testpmd"][size].get("pps")
        mine = row.get("rx_pps") if launch == "rx_only" else row.get("placed_pps")
        h2d = (limits["h2d"].get(size) or {}).get("gbps")
        row["ratios"] = {"netdaq_mpps_over_testpmd": mine / tp if mine and tp else None,
                         "gpu_gbps_over_h2d": row["gpu_gbps"] / h2d if row.get("gpu_gbps") and h2d else None,
                         # > 1: the generator offered more than the row took (not the row's limit)
                         "sent_over_netdaq": row["sent_pps"] / mine if row.get("sent_pps") and mine else None}
        rows.append(row)

# ---- the table ----
def f2(v, scale=1.0, digits=2):
    return f"{v / scale:.{digits}f}" if v is not None else "-"

def ns_cell(row):
    c = row.get("cpu")
    if not c:
        return "-"
    return "/".join(f2(c[g]["ns_per_packet"], 1, 1) for g in ("generator", "worker", "application", "other"))

def drops_cell(row):
    r = row.get("receiver") or {}
    d = dict(r.get("drop_reasons") or {}) if r.get("drop_reasons") is not None else None
    if d is not None:
        for k, v in (row.get("pipeline_drops") or {}).items():
            if v:
                d["gpu_" + k] = v
    return reasons_text(d) if d is not None else "-"

hdr = (f"{'size':>5} {'row':<10} | {'sent':>6} {'rx':>6} {'placed':>6} {'GB/s':>6} {'frames ok/inc':>15} "
       f"{'drops':<22} {'ns/pkt gen/wrk/app/oth':>24} | {'testpmd':>7} {'x':>5} | {'H2D':>6} {'x':>5}")
print()
print(hdr)
print("-" * len(hdr))
for row in rows:
    size = row["size"]
    tp = limits["testpmd"][size]
    h2d = limits["h2d"].get(size) or {}
    p = row.get("pipeline") or {}
    frames = f"{num(p.get('frames_complete'))}/{num(p.get('frames_incomplete'))}" if p else "-"
    rat = row["ratios"]
    status = "" if row.get("ok") else " FAILED"
    print(f"{size:>5} {row['row']:<10} | {f2(row.get('sent_pps'), 1e6):>6} {f2(row.get('rx_pps'), 1e6):>6} "
          f"{f2(row.get('placed_pps'), 1e6):>6} {f2(row.get('gpu_gbps')):>6} {frames:>15} {drops_cell(row)[:22]:<22} "
          f"{ns_cell(row):>24} | {f2(tp.get('pps'), 1e6):>7} {f2(rat['netdaq_mpps_over_testpmd']):>5} | "
          f"{f2(h2d.get('gbps')):>6} {f2(rat['gpu_gbps_over_h2d']):>5}{status}")
print("(Mpps: sent, received, placed into frames, over first to last packet; GB/s: bytes_to_gpu / those seconds; "
      "ns/pkt: CPU ns per received packet of the generator (ndq-tx), the engine's worker, the application (ndq-rx, "
      "feeding the GPU) and every other thread; testpmd: rxonly Mpps on net_null at the same frame size, polling on "
      "the worker's CPU; x: netdaq placed (rx_only: received) Mpps / testpmd, GB/s / pinned H2D GB/s)")
print("\nrows:")
for row in rows:
    c = row.get("cpu") or {}
    line = f"  {row['size']:>5} {row['row']:<10} {'ok' if row.get('ok') else 'FAILED'}"
    r = row.get("receiver")
    if r:
        line += (f": sent {num(row.get('sent'))}, received {num(r.get('received'))}, lost {num(row.get('lost'))}, drops "
                 f"{reasons_text(r.get('drop_reasons'))}")
        if row.get("tx_drops"):
            line += f"; tx {reasons_text(row['tx_drops'])}"
        gr = row.get("gen_rate_pps")
        line += (f"\n      generator: {'paced at ' + f2(gr, 1e6) + ' Mpps' if gr else 'unpaced'}, sent "
                 f"{f2(row.get('sent_pps'), 1e6)} Mpps = {f2(row['ratios'].get('sent_over_netdaq'))}x what the row "
                 f"{'received' if row['row'] == 'rx_only' else 'placed'}")
    p = row.get("pipeline")
    if p:
        line += (f"\n      gpu: packets in {num(p.get('packets_in'))}, placed {num(p.get('packets_placed'))}; frames "
                 f"{num(p.get('frames_complete'))} complete, {num(p.get('frames_incomplete'))} incomplete "
                 f"({num(p.get('packets_missing'))} packets missing), {num(p.get('frames_skipped'))} skipped, "
                 f"{num(p.get('frames_dropped'))} dropped; {num(p.get('jobs'))} jobs, {num(p.get('waits'))} waits")
    if c:
        line += "\n      cpu (" + c["clock"] + f"; busy = share of the {c['traffic_s']:.2f} s of traffic): " + ", ".join(
            f"{g} {c[g]['cpu_s']:.2f} s = {f2(c[g]['busy'], 0.01, 0)}% on {c[g]['cpus'] or '-'}"
            for g in ("generator", "worker", "application", "other"))
        top = list(c["other_by_thread"].items())[:4]
        if top:
            line += "; other: " + ", ".join(f"{k} {v:.2f} s" for k, v in top)
    if not r and row.get("output"):
        line += f"\n      netdaq said: {row['output'][-300:]}"
    print(line)
tpv = next((v.get("version") for v in limits["testpmd"].values() if v.get("version")), None)
ver = netdaq_version(netdaq)
print(f"\n{ver} ({netdaq}); testpmd {tpv or '?'} ({settings['testpmd']}); {settings['duration_s']} s per row; CPUs: "
      f"generator {settings['gen_cpu']}, worker {settings['worker_cpu']}, application {settings['app_cpu']}, main "
      f"{settings['main_cpu']}; generator {settings['gen_rate']}; burst {settings['batch']}, job_packets {settings['job_packets']}; memory "
      f"{settings['memory']}; {machine(settings)}")
if settings["runtime_dirs_left"]:
    warn("netdaq", f"left a DPDK runtime dir behind (removed now): {settings['runtime_dirs_left']}")
write_doc(out, {"bench": "pipeline", "settings": settings, "cpus": os.cpu_count(), "kernel": platform.release(),
                "netdaq": ver, "testpmd": tpv, "limits": {"testpmd": {str(k): v for k, v in limits["testpmd"].items()},
                                                          "h2d": {str(k): v for k, v in limits["h2d"].items()}},
                "rows": rows})
for w in WARNINGS:
    print(f"WARNING: {w}")
if FAILURES:
    print(f"\nFAILED: {len(FAILURES)} check{'s' if len(FAILURES) > 1 else ''} (all that was measured is above and in the JSON):")
    for f in FAILURES:
        print(f"  FAILED: {f}")
    sys.exit(1)
print("\nchecks passed: every process ended as expected, every figure present, sent = received + counted drops, "
      "no malformed packet" + ("" if settings["no_gpu"] else
                               ", every packet the pipelines got placed or counted, frames completed, no GPU error"))
PY
