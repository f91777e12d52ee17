# shellcheck shell=bash disable=SC2154  # the globals below are the sourcing script's
# Shell code the bench scripts share; sourced by them (`. bench/lib.sh` after their cd to the
# repository root), never run. The veth-lab functions (afxdp_vs_pmd.sh, dpdk_vs_testpmd.sh)
# use the script's globals duration, port and keep, and those lab_init sets.

# ---- options and checks ----

# usage: the script's header comment (line 2 up to the first line that is not a comment) is
# its --help, so the text cannot drift from a line range.
usage() {
  awk 'NR == 1 { next } /^#/ { print; next } { exit }' "$0"
  exit 0
}
bad_option() { die "unknown option $1 (see --help)"; }
die() {
  echo "$*" >&2
  exit 1
}

need_root() { [ "$(id -u)" = 0 ] || die "needs root ($1)"; }  # WHY
need_testpmd() { command -v dpdk-testpmd >/dev/null || die "dpdk-testpmd not found (apt-get install dpdk-dev)"; }
# need_duration: --duration in whole seconds, >= 3 (the sender samples from 1 s in to 1 s before the end)
need_duration() {
  [[ "$duration" =~ ^[0-9]+$ ]] && [ "$duration" -ge 3 ] || die "--duration: whole seconds, at least 3"
}
# need_other_cpus OPTION1 CPU1 OPTION2 CPU2: two polling threads on one CPU would measure the sharing
need_other_cpus() { [ "$2" != "$4" ] || die "$1 and $3 must differ"; }

# find_netdaq ENGINE: sets netdaq (absolute) to --netdaq's binary, or else to the first build
# (NETDAQ_BUILD_DIR, then build*/) whose `netdaq --version` lists ENGINE (builds differ in engines)
find_netdaq() {
  local c
  if [ -z "$netdaq" ]; then
    for c in "${NETDAQ_BUILD_DIR:-build}/tools/netdaq/netdaq" build*/tools/netdaq/netdaq; do
      if [ -x "$c" ] && "$c" --version 2>/dev/null | grep -q "$1"; then netdaq=$c; break; fi
    done
  fi
  [ -n "$netdaq" ] && [ -x "$netdaq" ] || die "no netdaq binary with the $1 engine found: build one or pass --netdaq PATH"
  netdaq=$(realpath "$netdaq")
  "$netdaq" --version | grep -q "$1" || die "$netdaq has no $1 engine ($("$netdaq" --version | sed -n 2p))"
}

# ---- 2 MiB hugepages: what a script reserves, it gives back (hugepages_give_back on exit) ----
hp_file=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
hp_added=0
# hugepages_reserve N NEED_MB WHY: reserves N more (0: none), then dies unless NEED_MB are free
hugepages_reserve() {
  if [ "$1" -gt 0 ]; then
    local before
    before=$(cat "$hp_file")
    echo $((before + $1)) >"$hp_file" || true
    hp_added=$(($(cat "$hp_file") - before))
    [ "$hp_added" -gt 0 ] || hp_added=0
    echo "hugepages: reserved $hp_added x 2 MiB (asked $1; $before were reserved before)" >&2
  fi
  local free_mb
  free_mb=$(($(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages) * 2))
  [ "$free_mb" -ge "$2" ] || die "only $free_mb MiB of 2 MiB hugepages free; $3 (--hugepages N)"
}
hugepages_give_back() {  # what this script reserved (others may hold more)
  [ "$hp_added" -gt 0 ] || return 0
  local now
  now=$(cat "$hp_file")
  echo $((now > hp_added ? now - hp_added : 0)) >"$hp_file" 2>/dev/null || true
  hp_added=0
}

# ---- background processes: tracked, so that the exit trap can stop what still runs ----
pids=()
track() { pids+=("$1"); }
untrack() {  # PID (whole entries only: removing 123 must not touch 1234)
  local p rest=()
  for p in "${pids[@]}"; do [ "$p" = "$1" ] || rest+=("$p"); done
  pids=("${rest[@]}")
}

# wait_for FILE TEXT SECONDS [PID]: until FILE contains TEXT (or process PID has ended)
wait_for() {
  local i
  for ((i = 0; i < $3 * 100; i++)); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    [ -z "${4:-}" ] || kill -0 "$4" 2>/dev/null || return 1
    sleep 0.01
  done
  return 1
}

# ---- failed rounds: recorded, the run goes on, and the report ends with a "FAILED:" list and
# exit status 1 (bench_py's finish), after printing and writing everything that was measured ----

# one_line FILE [N]: the last N (default 3) lines of FILE on one line, for a message
one_line() { tail -n "${2:-3}" "$1" 2>/dev/null | tr -s '\n\t' '  ' | cut -c1-400; }
# round_failed NAME WHAT: round NAME (CASE.rN.WHO) failed: a process exited other than the
# expected way, or did not start; its figures are left out of the medians
round_failed() {
  echo "FAILED: $1: $2" >&2
  printf '%s\t%s\n' "$1" "$2" >>"$tmp/failed"
}

# ---- the veth lab: namespaces <A> (receivers, veth_a) and <B> (the sender, veth_b) ----

# lab_init TAG NET: this run's names (namespaces ndq<TAG>A<pid>/ndq<TAG>B<pid>, veths
# ndq<TAG>va/vb, 10.NET.0.1/.2, DPDK file prefixes ndq<TAG><pid>_*: one TAG per script, so
# that the scripts can run side by side), $tmp, $bound and the exit trap (lab_cleanup).
lab_init() {
  ns_a=ndq${1}A$$ ns_b=ndq${1}B$$ veth_a=ndq${1}va veth_b=ndq${1}vb
  ip_a=10.$2.0.1 ip_b=10.$2.0.2
  prefix=ndq$1$$
  bound=$((duration + 40))  # seconds any one process may run (timeout -s INT, then KILL)
  tmp=$(mktemp -d)
  trap lab_cleanup EXIT
  trap 'exit 130' INT TERM
}

# exit_hooks: functions lab_cleanup runs after the lab is gone (a script's own resources)
exit_hooks=()
# lab_cleanup: on every exit (error and Ctrl-C too) nothing of the run may stay behind: its
# processes, namespaces (veths with them) and DPDK runtime dirs; --keep DIR gets $tmp's files.
lab_cleanup() {
  local rc=$? p h
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
  rm -rf /var/run/dpdk/"$prefix"_* 2>/dev/null || true
  for h in "${exit_hooks[@]}"; do "$h" || true; done
  if [ -n "$keep" ]; then mkdir -p "$keep" && cp -r "$tmp"/. "$keep"/; fi
  rm -rf "$tmp"
  exit $rc
}

# in_ns NS CMD...: CMD in network namespace NS through nsenter. `ip netns exec` and `ip -n`
# also remount /sys in a mount namespace of their own, which fails where / is not a mount
# point (a chroot such as fresh-root-check.sh's: "mount --make-rslave /" failed). A background
# job whose pid matters calls nsenter itself (it execs CMD, so $! is CMD's pid).
in_ns() {
  local ns=$1
  shift
  nsenter --net=/run/netns/"$ns" -- "$@"
}

# lab_up: the veth pair between the two namespaces, addressed, up; sets mac_a (the sender's
# destination MAC)
lab_up() {
  ip netns add "$ns_a"
  ip netns add "$ns_b"
  ip link add "$veth_a" netns "$ns_a" type veth peer name "$veth_b" netns "$ns_b"
  local side ns_var veth_var ip_var
  for side in a b; do
    ns_var=ns_$side veth_var=veth_$side ip_var=ip_$side
    in_ns "${!ns_var}" ip addr add "${!ip_var}/24" dev "${!veth_var}"
    # No IPv6: no router solicitations or MLD reports from the kernels (testpmd and the PMD
    # count every frame on the queue, netdaq only its flow).
    in_ns "${!ns_var}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    in_ns "${!ns_var}" ip link set lo up
    in_ns "${!ns_var}" ip link set "${!veth_var}" up
  done
  mac_a=$(in_ns "$ns_a" ip -o link show dev "$veth_a" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
}

xdp_attached() { in_ns "$ns_a" ip -o link show dev "$veth_a" | grep -q "prog/xdp\| xdp"; }
# xdp_check LABEL NAME: a receiver must detach its XDP program at exit (the next one could not
# attach, and the veth would stay in XDP mode): else the round fails and the program goes
xdp_check() {
  xdp_attached || return 0
  round_failed "$2" "$1 left an XDP program attached (removed now)"
  in_ns "$ns_a" ip link set dev "$veth_a" xdp off 2>/dev/null || true
  ! xdp_attached || die "$1 $2 left an XDP program attached that cannot be removed"
}

# veth_stats FILE [both]: the receiving veth's counters (ethtool -S) before or after a round;
# with "both" also the sender's and `ip -s -s link` of each (afxdp_vs_pmd.sh shows them all)
veth_stats() {
  if [ "${2:-}" = both ]; then
    { in_ns "$ns_a" ethtool -S "$veth_a"; in_ns "$ns_a" ip -s -s link show dev "$veth_a";
      in_ns "$ns_b" ethtool -S "$veth_b"; in_ns "$ns_b" ip -s -s link show dev "$veth_b"; } >"$1" 2>&1 || true
  else
    in_ns "$ns_a" ethtool -S "$veth_a" >"$1" 2>&1 || true
  fi
}

# dpdk_eal PREFIX MAIN_CPU FWD_CPU VDEV: EAL and mbuf options of a testpmd on a veth (no
# hugepages: af_packet and af_xdp copy into their own buffers, and hugepages stay free)
dpdk_eal() {
  echo --no-huge -m 256 --no-shconf --no-telemetry --no-pci --file-prefix "$1" --lcores "0@$2,1@$3" --vdev "$4" -- \
       --total-num-mbufs=8192
}

# sender NAME FRAME_BYTES MAIN_CPU FWD_CPU [stat [PERF_CPUS]]: testpmd txonly (af_packet PMD, UDP
# to ip_a:port, unpaced) on veth_b for $duration s, forwarding lcore on FWD_CPU; output in
# $tmp/NAME.tx, its start and stop times in .tx.start/.tx.stop (rates are over that time).
# With "stat", the middle of the run (1 s after the start to 1 s before the end) is sampled:
# /proc/stat per CPU in .tx.stat0/.tx.stat1, and with PERF_CPUS a cpu-clock profile of those CPUs.
sender() {
  local name=$1 frame=$2 out=$tmp/$1.tx
  : >"$out"
  # stdin: a pipe held open for $duration s once forwarding runs; its EOF stops testpmd.
  # shellcheck disable=SC2046  # dpdk_eal: several words
  { wait_for "$out" "Press enter to exit" 20 || true; date +%s.%N >"$out.start"
    if [ "${5:-}" = stat ]; then sample_middle "$out" "${6:-}"; else sleep "$duration"; fi
    date +%s.%N >"$out.stop"; } |
    ip netns exec "$ns_b" timeout -s INT -k 5 "$bound" stdbuf -oL -eL dpdk-testpmd $(dpdk_eal "${prefix}_tx" "$3" "$4" "net_af_packet0,iface=$veth_b") \
      --forward-mode=txonly --txpkts="$frame" --tx-ip="$ip_b,$ip_a" --tx-udp="9000,$port" \
      --eth-peer="0,$mac_a" >"$out" 2>&1 || round_failed "$name" "sender (testpmd txonly) exited with $?: $(one_line "$out")"
  if [ -n "${6:-}" ] && [ -s "$out.perf" ]; then
    perf report -i "$out.perf" --stdio --sort cpu,comm,dso,sym --percent-limit 0.5 >"$out.perf.txt" 2>/dev/null || true
  fi
}

# ---- payload verification rounds: netdaq sends, netdaq receives and checks every byte ----

verify_pps=100000  # the verify rounds' sender rate: a lossless pace for a veth on a small machine
# verify_payload SIZE: the verify round's UDP payload for a case of SIZE-byte payloads: SIZE, but
# at least 64 (netdaq's header is 24 bytes: a 22-byte payload could not carry it, and the
# round should check pattern bytes too)
verify_payload() { echo $(($1 > 64 ? $1 : 64)); }
# sender_interface DESTINATION RATE_PPS: a netdaq socket-engine sender as an item of a config's
# interfaces: (interface "sender", one tx queue in region tx_bufs)
sender_interface() {
  cat <<EOF
  - name: sender
    engine: socket
    tx:
      destination: $1
      rate_pps: $2
      queues:
        - {id: 0, batch_size: 64, ring_depth: 8, memory_regions: [tx_bufs]}
EOF
}
# socket_sender_yaml DESTINATION RATE_PPS NUM_BUFS: memory_regions and interfaces of a sender alone
socket_sender_yaml() {
  printf 'memory_regions:\n  - {name: tx_bufs, kind: host, buf_size: 2048, num_bufs: %s}\ninterfaces:\n' "$3"
  sender_interface "$1" "$2"
}
# netdaq_sender NAME PAYLOAD: netdaq's socket engine in <B> sends verify_pps x $duration numbered,
# patterned payloads of PAYLOAD bytes to ip_a:port at verify_pps (`netdaq run -n`); output in
# $tmp/NAME.tx, its JSON (the sent count) in $tmp/NAME.tx.json. The caller's receiver checks them.
netdaq_sender() {
  local name=$1 out=$tmp/$1.tx
  { echo "# netdaq socket tx-only: the verify round's sender ($0)"
    socket_sender_yaml "udp://$ip_a:$port" "$verify_pps" 4096
    echo "run: {tx_payload_size: $2}"
    echo "log: {level: warn}"; } >"$out.yaml"
  # B's kernel must know A's MAC without ARP: a DPDK receiver owning veth_a answers none (and
  # the af_packet sender's link changes flush B's neighbours, permanent ones too)
  in_ns "$ns_b" ip neigh replace "$ip_a" lladdr "$mac_a" dev "$veth_b" nud permanent
  date +%s.%N >"$out.start"
  ip netns exec "$ns_b" timeout -s INT -k 5 "$bound" "$netdaq" run "$out.yaml" -q -n $((verify_pps * duration)) \
    -d $((duration + 10)) --json "$out.json" >"$out" 2>&1 || round_failed "$name" "sender (netdaq run, socket) exited with $?: $(one_line "$out")"
  date +%s.%N >"$out.stop"
}

sample_middle() {  # OUT [PERF_CPUS]: sender's $duration s, sampled in the middle
  sleep 1
  grep '^cpu[0-9]' /proc/stat >"$1.stat0"
  if [ -n "${2:-}" ]; then
    perf record -q -e cpu-clock -C "$2" -o "$1.perf" -- sleep "$((duration - 2))" >/dev/null 2>&1
  else
    sleep "$((duration - 2))"
  fi
  grep '^cpu[0-9]' /proc/stat >"$1.stat1"
  sleep 1
}

# ---- receivers: output in $tmp/NAME.rx, start (ready) and stop times in .rx.start/.rx.stop ----

# rx_started LABEL NAME PID TEXT SECONDS: until the receiver's output shows TEXT (it is ready)
rx_started() {
  local out=$tmp/$2.rx
  wait_for "$out" "$4" "$5" "$3" || round_failed "$2" "$1 did not start: $(one_line "$out")"
  date +%s.%N >"$out.start"
}
# rx_wait LABEL NAME PID: until the receiver has ended by itself; an exit status other than 0
# fails the round
rx_wait() {
  local out=$tmp/$2.rx rc=0
  wait "$3" || rc=$?
  date +%s.%N >"$out.stop"
  untrack "$3"
  [ "$rc" = 0 ] || round_failed "$2" "$1 exited with $rc: $(one_line "$out" 5)"
}
# sleep_past FILE SECONDS: until SECONDS after the time in FILE (a testpmd receiver stops as
# long after its readiness as netdaq's `run -d` does)
sleep_past() {
  sleep "$(python3 -c "import sys,time; print(max(0, float(open(sys.argv[1]).read()) + $2 - time.time()))" "$1")"
}

# ---- the report ----

# report ARGS...: runs the python on stdin (the script's report) after bench_py's helpers; its
# exit status is the report's (finish: 1 when a check failed)
report() { python3 - "$@" <<<"$(bench_py)"$'\n'"$(cat)"; }
bench_py() {
  cat <<'PY'
import json, os, platform, re, statistics, subprocess, sys

# ---- checks: each failure names the round, case and figure; finish() lists them and exits 1 ----
FAILURES = []  # "case C, round N, WHO: what failed"
WARNINGS = []

def fail(at, what):
    FAILURES.append(f"{at}: {what}")

def warn(at, what):
    WARNINGS.append(f"{at}: {what}")

def where(name):
    """A round's name, CASE.rN.WHO or CASE.verify.WHO, as 'case CASE, round N, WHO'."""
    parts = name.split(".")
    c, r, who = parts[0], parts[1] if len(parts) > 1 else "", ".".join(parts[2:])
    rnd = f"round {r[1:]}" if r[:1] == "r" and r[1:].isdigit() else f"{r} round"
    return f"case {c}, {rnd}" + (f", {who}" if who else "")

def need(d, key, at, figure=None):
    """d[key], a figure the report needs: missing (or null) is a failure naming it, never 0."""
    v = d.get(key) if isinstance(d, dict) else None
    if v is None:
        fail(at, f"figure missing: {figure or key}")
    return v

def script_failures(tmp):
    """Rounds the script saw fail (lib.sh round_failed: a process exited other than as expected,
    or did not start): {name: [what, ...]}; each is a failure."""
    failed = {}
    for line in text(f"{tmp}/failed").splitlines():
        name, _, what = line.partition("\t")
        failed.setdefault(name, []).append(what)
        fail(where(name), what)
    return failed

def round_checked(entry, name, failed, start):
    """entry (one receiver's round) with ok: nothing failed since START (len(FAILURES) before
    its checks) and the script recorded no failure of the round; the failures in entry['failures']."""
    own = [f"{where(name)}: {w}" for w in failed.get(name, [])] + FAILURES[start:]
    entry["ok"] = not own
    if own:
        entry["failures"] = own
    return entry

def finish():
    """The report's end: warnings, then every failure under "FAILED:" and exit status 1."""
    for w in WARNINGS:
        print(f"WARNING: {w}")
    if FAILURES:
        print(f"\nFAILED: {len(FAILURES)} check{'s' if len(FAILURES) > 1 else ''} (rounds with a failure are left out "
              f"of the medians; all they measured is above and in the JSON):")
        for f in FAILURES:
            print(f"  FAILED: {f}")
        sys.exit(1)
    print("\nchecks passed: every figure present, every process ended as expected, every loss explained by counted drops, "
          "every verified payload intact")

# ---- reading what the processes left ----

def text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""

def load_json(path):
    try:
        return json.loads(text(path) or "null")
    except ValueError:
        return None

def tail(path, n=400):
    return " ".join(text(path)[-n:].split())

def elapsed(base, part):
    """Seconds between BASE.PART.start and BASE.PART.stop (date +%s.%N), None without them."""
    try:
        return float(text(f"{base}.{part}.stop")) - float(text(f"{base}.{part}.start"))
    except ValueError:
        return None

def port0(out):
    """The last 'Forward statistics for port 0' block of testpmd's output."""
    blocks = re.findall(r"Forward statistics for port 0\s*-+\n(.*?)\n\s*-{10,}", out, re.S)
    return blocks[-1] if blocks else ""

def field(block, label):
    m = re.search(re.escape(label) + r"\s*([0-9]+)", block)
    return int(m.group(1)) if m else None

def nonzero(d):
    return {k: v for k, v in (d or {}).items() if v}

def rx_drops(drops):
    """A queue's non-zero drop reasons that lose received packets (tx_* are the sender's)."""
    return {k: v for k, v in (drops or {}).items() if v and not k.startswith("tx_")}

def reasons_text(reasons):
    """{reason: n} as 'reason=n, ...'; 'none' when empty, '-' when unknown (a figure missing)."""
    return "-" if reasons is None else ", ".join(f"{k}={v:,}" for k, v in reasons.items()) or "none"

def sender_stats(base, at):
    """testpmd txonly's frames handed to the kernel (TX-dropped: refused by the af_packet PMD)."""
    b = port0(text(f"{base}.tx"))
    if not b:
        fail(at, f"figures missing: the sender (testpmd txonly) printed no forward statistics: {tail(base + '.tx', 200)!r}")
        return {"sent": None, "tx_dropped": None, "seconds": elapsed(base, "tx"), "pps": None}
    sent, dropped, sec = field(b, "TX-packets:"), field(b, "TX-dropped:"), elapsed(base, "tx")
    for v, what in ((sent, "sender TX-packets"), (dropped, "sender TX-dropped"), (sec, "sender run time")):
        if v is None:
            fail(at, f"figure missing: {what}")
    return {"sent": sent, "tx_dropped": dropped, "seconds": sec, "pps": sent / sec if sent is not None and sec else None}

def netdaq_sender_stats(base, at):
    """lib.sh netdaq_sender's packets sent (its tx queue's packets: accepted by the socket engine)."""
    j = load_json(f"{base}.tx.json")
    q = next((q for q in (j or {}).get("queues") or [] if q.get("direction") == "tx"), None)
    if q is None:
        fail(at, f"figures missing: the sender (netdaq run) wrote no tx queue figures: {tail(base + '.tx', 200)!r}")
        return {"sent": None, "seconds": elapsed(base, "tx"), "pps": None}
    sent, sec = need(q, "packets", at, "sender tx packets"), elapsed(base, "tx")
    drops = need(q, "drops", at, "sender drops")
    return {"sent": sent, "seconds": sec, "pps": sent / sec if sent is not None and sec else None,
            "tx_drops": nonzero(drops)}

def testpmd_counts(base, at):
    """A testpmd receiver's port 0 counters; drops = RX-dropped (imissed) + RX-nombufs + RX-error."""
    b = port0(text(f"{base}.rx"))
    if not b:
        fail(at, f"figures missing: testpmd printed no forward statistics of port 0: {tail(base + '.rx', 300)!r}")
        return {"received": None, "drops": None, "drop_reasons": None}
    got, missed = field(b, "RX-packets:"), field(b, "RX-dropped:")
    # testpmd prints RX-error and RX-nombufs only when their sum is not 0 (fwd_stats_display)
    err, nombuf = field(b, "RX-error:"), field(b, "RX-nombufs:")
    if (err is None) != (nombuf is None):
        fail(at, "figure missing: testpmd RX-error / RX-nombufs (one printed without the other)")
    err, nombuf = err or 0, nombuf or 0
    for v, what in ((got, "testpmd RX-packets"), (missed, "testpmd RX-dropped")):
        if v is None:
            fail(at, f"figure missing: {what}")
    if got is None or missed is None:
        return {"received": got, "drops": None, "drop_reasons": None}
    reasons = nonzero({"RX-dropped": missed, "RX-nombufs": nombuf, "RX-error": err})
    return {"received": got, "drops": missed + nombuf + err, "drop_reasons": reasons, "rx_dropped": missed,
            "rx_nombufs": nombuf, "rx_error": err}

def netdaq_counts(base, at):
    """`netdaq run --json`'s rx queue: packets, drops (its QueueStats: the non-zero reasons), mode, run
    time; also the document and the queue for the rest. A run stopped by the script's bound
    (interrupted) is a failure: netdaq run -d stops by itself."""
    j = load_json(f"{base}.json")
    q = next((q for q in (j or {}).get("queues") or [] if q.get("direction") == "rx"), None)
    if q is None:
        fail(at, f"figures missing: netdaq wrote no rx queue figures: {tail(base + '.rx', 300)!r}")
        return {"received": None, "drops": None, "drop_reasons": None}, None, None
    got, drops = need(q, "packets", at, "netdaq rx packets"), need(q, "drops", at, "netdaq drops")
    seconds, interrupted = need(j, "seconds", at, "netdaq run seconds"), need(j, "interrupted", at, "netdaq interrupted")
    if interrupted:
        fail(at, f"netdaq run was interrupted after {seconds} s (the script's time bound), not stopped at its duration")
    reasons = rx_drops(drops) if drops is not None else None
    return ({"received": got, "drops": sum(reasons.values()) if reasons is not None else None, "drop_reasons": reasons,
             "mode": q.get("mode", ""), "run_seconds": seconds, "interrupted": interrupted}, j, q)

def loss_check(at, sent, received, reasons, strict=True, who="netdaq", kernel_batch=1, hint=""):
    """lost = sent - received must equal the receiver's counted drops (REASONS: {reason: n}).
    A mismatch is unexplained loss: a failure (strict: netdaq) or a warning (a reference receiver,
    measured, not under test). kernel_batch > 1: each 'kernel' drop may stand for up to that many
    packets (with GRO the kernel counts dropped super-datagrams), so lost may lie between.
    HINT: where else the loss shows (e.g. the veth's counters), for the message."""
    if sent is None or received is None or reasons is None:
        return None  # a figure is missing: already a failure
    lost = sent - received
    other = sum(v for k, v in reasons.items() if k != "kernel")
    kernel = reasons.get("kernel", 0)
    low, high = other + kernel, other + kernel * kernel_batch
    if not low <= lost <= high:
        counted = f"{low:,}" if low == high else f"{low:,} to {high:,} (kernel drops of up to {kernel_batch} datagrams each)"
        (fail if strict else warn)(at, f"unexplained loss: sent {sent:,}, {who} received {received:,}: lost {lost:,}, "
                                       f"counted drops {counted} ({reasons_text(reasons)}){hint}")
    return lost

def path_hint(counters):
    """The drop and error counters (ethtool -S) that changed over a round, for a loss message."""
    bad = {k: v for k, v in (counters or {}).items() if v and re.search(r"drop|err", k)}
    return (f"; the veth counted {', '.join(f'{k}={v:,}' for k, v in bad.items())}" if bad else
            "; no drop or error counter of the veth changed")

def over_sender(r, tx, at, strict=True, who="netdaq", hint=""):
    """A receiver's rate over the sender's time, and lost = sent - received (anywhere in between),
    which its counted drops must explain (loss_check)."""
    if r.get("received") is not None and tx.get("seconds"):
        r["pps"] = r["received"] / tx["seconds"]
    else:
        r["pps"] = None
    r["lost"] = loss_check(at, tx.get("sent"), r.get("received"), r.get("drop_reasons"), strict, who, hint=hint)
    return r

def verify_check(at, j, sent=None, hint=""):
    """A verify round's receiver (`netdaq run` without --no-verify: every payload byte and sequence
    number checked): the packets sent arrive once and intact: malformed (corrupt pattern, wrong
    size, no netdaq header) 0, duplicates 0, sent - unique = its counted drops. SENT: the sender's
    count (another process); None: the streams' own (sender and receiver in one process)."""
    if not j:
        return {"verified": False}  # no JSON: already a failure (netdaq_counts)
    q = next((q for q in j.get("queues") or [] if q.get("direction") == "rx"), {})
    totals = need(j, "totals", at, "netdaq totals") or {}
    streams = [s for s in j.get("streams") or [] if s.get("rx_queue") == q.get("name")]
    if not streams:
        fail(at, "payload verification: netdaq received no netdaq stream")
    unique = sum(need(s, "unique", at, "stream unique") or 0 for s in streams)
    dups, bad = need(totals, "duplicates", at, "duplicates"), need(totals, "malformed", at, "malformed")
    if bad:
        fail(at, f"payload verification: {bad:,} malformed packets (corrupt pattern, wrong size or no netdaq header)")
    if dups:
        fail(at, f"payload verification: {dups:,} duplicate packets")
    if sent is None:
        sent = sum(need(s, "sent", at, "stream sent") or 0 for s in streams)
    drops = need(q, "drops", at, "netdaq drops")
    reasons = rx_drops(drops) if drops is not None else None
    lost = loss_check(at, sent, unique, reasons, hint=hint) if streams else None
    return {"verified": "every payload byte and sequence number", "sent": sent, "unique": unique, "duplicates": dups,
            "malformed": bad, "lost": lost, "drop_reasons": reasons}

def median(rows, who, part, key):
    """The median of rows[i][who][part][key] over the rounds that passed every check."""
    v = [x[who][part][key] for x in rows if x[who].get("ok") and x[who].get(part, {}).get(key) is not None]
    return statistics.median(v) if v else None

def num(v):
    return f"{int(v):,}" if v is not None else "-"

def machine(settings):
    return (f"{os.cpu_count()} CPUs, kernel {platform.release()}; load average {settings['load_before']} before, "
            f"{settings['load_after']} after")

def netdaq_version(netdaq):
    return subprocess.run([netdaq, "--version"], capture_output=True, text=True).stdout.split("\n")[0]

def write_doc(out, doc):
    """The run's JSON file (nothing without --json), with the checks' outcome: failures, ok."""
    if not out:
        return
    doc.update(failures=FAILURES, warnings=WARNINGS, ok=not FAILURES)
    with open(out, "w") as f:
        json.dump(doc, f, indent=2)
    print(f"wrote {out}")

def write_json(out, settings, netdaq_ver, results):
    """The veth/DPDK scripts' JSON: settings, machine, versions, results, failures."""
    write_doc(out, {"settings": settings, "cpus": os.cpu_count(), "kernel": platform.release(), "netdaq": netdaq_ver,
                    "testpmd": subprocess.run("dpkg-query -W -f '${Version}' dpdk", shell=True, capture_output=True,
                                              text=True).stdout or "unknown",
                    "results": results})
PY
}
