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
need_testpmd() { command -v dpdk-testpmd >/dev/null || die "dpdk-testpmd not found (apt-get install dpdk)"; }
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

# lab_up: the veth pair between the two namespaces, addressed, up; sets mac_a (the sender's
# destination MAC)
lab_up() {
  ip netns add "$ns_a"
  ip netns add "$ns_b"
  ip link add "$veth_a" netns "$ns_a" type veth peer name "$veth_b" netns "$ns_b"
  local side ns_var veth_var ip_var
  for side in a b; do
    ns_var=ns_$side veth_var=veth_$side ip_var=ip_$side
    ip -n "${!ns_var}" addr add "${!ip_var}/24" dev "${!veth_var}"
    # No IPv6: no router solicitations or MLD reports from the kernels (testpmd and the PMD
    # count every frame on the queue, netdaq only its flow).
    ip netns exec "${!ns_var}" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "${!ns_var}" link set lo up
    ip -n "${!ns_var}" link set "${!veth_var}" up
  done
  mac_a=$(ip -n "$ns_a" -o link show dev "$veth_a" | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
}

xdp_attached() { ip -n "$ns_a" -o link show dev "$veth_a" | grep -q "prog/xdp\| xdp"; }
# xdp_check LABEL NAME: a receiver must detach its XDP program at exit (the next one could not
# attach, and the veth would stay in XDP mode)
xdp_check() {
  if xdp_attached; then echo "$1 $2 left an XDP program attached" >&2; exit 1; fi
}

# veth_stats FILE [both]: the receiving veth's counters (ethtool -S) before or after a round;
# with "both" also the sender's and `ip -s -s link` of each (afxdp_vs_pmd.sh shows them all)
veth_stats() {
  if [ "${2:-}" = both ]; then
    { ip netns exec "$ns_a" ethtool -S "$veth_a"; ip -n "$ns_a" -s -s link show dev "$veth_a";
      ip netns exec "$ns_b" ethtool -S "$veth_b"; ip -n "$ns_b" -s -s link show dev "$veth_b"; } >"$1" 2>&1 || true
  else
    ip netns exec "$ns_a" ethtool -S "$veth_a" >"$1" 2>&1 || true
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
      --eth-peer="0,$mac_a" >"$out" 2>&1 || echo "sender $name: testpmd failed: $(tail -3 "$out")" >&2
  if [ -n "${6:-}" ] && [ -s "$out.perf" ]; then
    perf report -i "$out.perf" --stdio --sort cpu,comm,dso,sym --percent-limit 0.5 >"$out.perf.txt" 2>/dev/null || true
  fi
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
  wait_for "$out" "$4" "$5" "$3" || echo "$1 $2 did not start: $(tail -3 "$out")" >&2
  date +%s.%N >"$out.start"
}
# rx_wait LABEL NAME PID: until the receiver has ended by itself
rx_wait() {
  local out=$tmp/$2.rx rc=0
  wait "$3" || rc=$?
  date +%s.%N >"$out.stop"
  untrack "$3"
  [ "$rc" = 0 ] || echo "$1 $2 exited with $rc: $(tail -5 "$out")" >&2
}
# sleep_past FILE SECONDS: until SECONDS after the time in FILE (a testpmd receiver stops as
# long after its readiness as netdaq's `run -d` does)
sleep_past() {
  sleep "$(python3 -c "import sys,time; print(max(0, float(open(sys.argv[1]).read()) + $2 - time.time()))" "$1")"
}

# ---- the report ----

# report ARGS...: runs the python on stdin (the script's report) after bench_py's helpers
report() { python3 - "$@" <<<"$(bench_py)"$'\n'"$(cat)"; }
bench_py() {
  cat <<'PY'
import json, os, platform, re, statistics, subprocess, sys

def text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""

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
    return int(m.group(1)) if m else 0

def sender_stats(base, duration):
    """testpmd txonly's frames handed to the kernel (TX-dropped: refused by the af_packet PMD)."""
    b = port0(text(f"{base}.tx"))
    sec = elapsed(base, "tx") or duration
    sent = field(b, "TX-packets:")
    return {"ok": bool(b), "sent": sent, "tx_dropped": field(b, "TX-dropped:"), "seconds": sec, "pps": sent / sec}

def testpmd_counts(base):
    """A testpmd receiver's port 0 counters; drops = RX-dropped (imissed) + RX-nombufs + RX-error."""
    out = text(f"{base}.rx")
    b = port0(out)
    if not b:
        return {"ok": False, "error": out[-500:]}
    got = field(b, "RX-packets:")
    missed, nombuf, err = field(b, "RX-dropped:"), field(b, "RX-nombufs:"), field(b, "RX-error:")
    return {"ok": True, "received": got, "drops": missed + nombuf + err, "rx_dropped": missed, "rx_nombufs": nombuf,
            "rx_error": err}

def nonzero(d):
    return {k: v for k, v in (d or {}).items() if v}

def netdaq_counts(base):
    """`netdaq run --json`'s rx queue: packets, drops (its QueueStats: the non-zero reasons), mode, run
    time; also the document and the queue for the rest. The output's tail when it wrote none."""
    j = json.loads(text(f"{base}.json") or "null")
    if not j:
        return {"ok": False, "error": text(f"{base}.rx")[-500:]}, None, None
    q = next(q for q in j["queues"] if q["direction"] == "rx")
    drops = nonzero(q.get("drops"))
    return ({"ok": True, "received": q["packets"], "drops": sum(drops.values()), "drop_reasons": drops,
             "mode": q.get("mode", ""), "run_seconds": j.get("seconds"), "interrupted": j.get("interrupted")}, j, q)

def over_sender(r, tx):
    """A receiver's rate over the sender's time, and lost = sent - received (anywhere in between)."""
    r["pps"] = r["received"] / tx["seconds"] if tx["seconds"] else None
    r["lost"] = tx["sent"] - r["received"]
    return r

def median(rows, who, part, key):
    """The median of rows[i][who][part][key] over the rounds where that part is ok."""
    v = [x[who][part][key] for x in rows if part in x[who] and x[who][part].get("ok") and x[who][part].get(key) is not None]
    return statistics.median(v) if v else None

def num(v):
    return f"{int(v):,}" if v is not None else "-"

def machine(settings):
    return (f"{os.cpu_count()} CPUs, kernel {platform.release()}; load average {settings['load_before']} before, "
            f"{settings['load_after']} after")

def netdaq_version(netdaq):
    return subprocess.run([netdaq, "--version"], capture_output=True, text=True).stdout.split("\n")[0]

def write_json(out, settings, netdaq_ver, results):
    """The run's JSON file (nothing without --json): settings, machine, versions, results."""
    if not out:
        return
    with open(out, "w") as f:
        json.dump({"settings": settings, "cpus": os.cpu_count(), "kernel": platform.release(), "netdaq": netdaq_ver,
                   "testpmd": subprocess.run("dpkg-query -W -f '${Version}' dpdk", shell=True, capture_output=True,
                                             text=True).stdout or "unknown",
                   "results": results}, f, indent=2)
    print(f"wrote {out}")
PY
}
