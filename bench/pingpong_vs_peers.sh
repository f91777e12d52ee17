#!/usr/bin/env bash
# UDP round-trip latency: netdaq's socket ping-pong against `sockperf ping-pong`, side by side
# in one run, (a) on loopback and (b) across a veth pair between two namespaces this script
# creates (removed on every exit), payloads of 64 B and 1 KB.
#
# Both tools measure the same quantity, round trip / 2 per message, one message in flight,
# and report p50, p99, p99.9 and max of it (sockperf without --full-rtt prints exactly that;
# `netdaq bench --ping-pong` too). Both run as two processes on two cores, busy polling:
#   sockperf: `sockperf server --nonblocked` on the server CPU, `sockperf ping-pong
#             --nonblocked -m SIZE -t S` on the client CPU (non-blocking recvfrom in a loop);
#   netdaq:   `netdaq bench --ping-pong --role server` on the server CPU (echoes each message
#             at once), `netdaq bench --ping-pong --role client --duration S` on the client CPU.
# Loopback: both ends in namespace <A> on 127.0.0.1. veth: the client in <A> (10.N.0.1), the
# server in <B> (10.N.0.2). Rounds alternate the tools (odd rounds netdaq first); the table
# shows the medians over the rounds of each figure, and the ratio netdaq p50 / sockperf p50
# (target <= 1.1: PASS or MISS).
#
# usage: bench/pingpong_vs_peers.sh [--time S] [--rounds N] [--sizes 64,1024]
#            [--only loopback,veth] [--client-cpu N] [--server-cpu N] [--port N]
#            [--netdaq PATH] [--json FILE] [--keep DIR]
# Defaults: 2 s per run, 5 rounds, CPUs 0 (client) and 1 (server): about 100 s. Needs root
# (namespaces) and sockperf (apt-get install sockperf).
#
# What fails the run (exit status 1, after the table and the JSON are written): a figure
# missing (sockperf printed no percentile 50/99/99.9, MAX or [Valid Duration] line; netdaq's
# JSON lacks a key); a process exiting other than as expected (each is bounded: timeout);
# loss not accounted: sockperf's valid-duration SentMessages != ReceivedMessages or its
# dropped / duplicated / out-of-order counts non-zero; netdaq's client with a lost, late or
# malformed message, or its server not having echoed exactly the client's messages + its
# warm-up message, or malformed / unsent ones. A round with a failure stays out of the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

duration=2
rounds=5
sizes=64,1024
only=loopback,veth
client_cpu=0
server_cpu=1
port=47700
netdaq=""
json_out=""
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --time) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --client-cpu) client_cpu=$2; shift 2 ;;
    --server-cpu) server_cpu=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --netdaq) netdaq=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) usage ;;
    *) bad_option "$1" ;;
  esac
done
need_root "network namespaces and a veth pair"
command -v sockperf >/dev/null || die "sockperf not found (apt-get install sockperf)"
need_other_cpus --client-cpu "$client_cpu" --server-cpu "$server_cpu"
[[ "$duration" =~ ^[0-9]+$ ]] && [ "$duration" -ge 1 ] || die "--time: whole seconds >= 1"
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] || die "--rounds: >= 1"
find_netdaq socket
lab_init pp 79
lab_up

# env_addrs ENV: client/server namespaces and addresses of ENV (loopback: both ends in <A>)
env_addrs() {
  case "$1" in
    loopback) c_ns=$ns_a s_ns=$ns_a c_ip=127.0.0.1 s_ip=127.0.0.1 ;;
    veth) c_ns=$ns_a s_ns=$ns_b c_ip=$ip_a s_ip=$ip_b ;;
    *) die "--only: loopback or veth, not $1" ;;
  esac
}

# run_bg NAME CPU NS CMD...: CMD pinned to CPU in NS, in the background, output in
# $tmp/NAME.out; sets bg (its pid). Killed by timeout after $bound s whatever happens
# (--foreground: a SIGINT to it reaches CMD once, not again through its process group).
run_bg() {
  local name=$1 cpu=$2 ns=$3
  shift 3
  timeout --foreground -s INT -k 5 "$bound" nsenter --net=/run/netns/"$ns" -- taskset -c "$cpu" "$@" \
    >"$tmp/$name.out" 2>"$tmp/$name.err" &
  bg=$!
  track "$bg"
}

# stop_server NAME PID: SIGINT (both servers end on it), then its exit status in NAME.rc
stop_server() {
  local rc=0
  kill -INT "$2" 2>/dev/null || true
  wait "$2" || rc=$?
  untrack "$2"
  echo "$rc" >"$tmp/$1.server.rc"
}

netdaq_round() {  # NAME SIZE
  local name=$1 size=$2 rc=0 p=$port
  port=$((port + 2))
  run_bg "$name.server" "$server_cpu" "$s_ns" "$netdaq" bench --ping-pong --role server --size "$size" \
    --address "$s_ip:$p" --echo-destination "$c_ip:$((p + 1))" --no-pin --quiet --json --duration "$bound"
  local spid=$bg
  sleep 0.3  # its socket bound (the client's warm-up message also waits up to 10 s for it)
  nsenter --net=/run/netns/"$c_ns" -- timeout -s INT -k 5 "$bound" taskset -c "$client_cpu" \
    "$netdaq" bench --ping-pong --role client --size "$size" --address "$s_ip:$p" --echo-address "$c_ip:$((p + 1))" \
    --duration "$duration" --count 1000000 --no-pin --quiet --json >"$tmp/$name.client.out" 2>"$tmp/$name.client.err" || rc=$?
  echo "$rc" >"$tmp/$name.client.rc"
  [ "$rc" = 0 ] || round_failed "$name" "netdaq client exited $rc: $(one_line "$tmp/$name.client.err")"
  stop_server "$name" "$spid"
  rc=$(cat "$tmp/$name.server.rc")
  [ "$rc" = 0 ] || round_failed "$name" "netdaq server exited $rc: $(one_line "$tmp/$name.server.err")"
}

sockperf_round() {  # NAME SIZE
  local name=$1 size=$2 rc=0 p=$port
  port=$((port + 2))
  run_bg "$name.server" "$server_cpu" "$s_ns" sockperf server -i "$s_ip" -p "$p" --nonblocked
  local spid=$bg
  wait_for "$tmp/$name.server.out" "using recvfrom" 10 "$spid" || round_failed "$name" "sockperf server did not start: $(one_line "$tmp/$name.server.err")"
  nsenter --net=/run/netns/"$c_ns" -- timeout -s INT -k 5 "$bound" taskset -c "$client_cpu" \
    sockperf ping-pong -i "$s_ip" -p "$p" -m "$size" -t "$duration" --nonblocked \
    >"$tmp/$name.client.out" 2>"$tmp/$name.client.err" || rc=$?
  echo "$rc" >"$tmp/$name.client.rc"
  [ "$rc" = 0 ] || round_failed "$name" "sockperf ping-pong exited $rc: $(one_line "$tmp/$name.client.err")"
  stop_server "$name" "$spid"
  rc=$(cat "$tmp/$name.server.rc")
  # sockperf server ends on SIGINT with 0 (or 130/ -2 from its handler, as the version has it)
  case "$rc" in 0|130|254) ;; *) round_failed "$name" "sockperf server exited $rc: $(one_line "$tmp/$name.server.err")" ;; esac
}

cases=()
for env in ${only//,/ }; do
  env_addrs "$env"
  for size in ${sizes//,/ }; do
    c=$env-s$size
    cases+=("$c")
    for ((r = 1; r <= rounds; r++)); do
      echo "== $c round $r/$rounds" >&2
      if ((r % 2)); then netdaq_round "$c.r$r.netdaq" "$size"; sockperf_round "$c.r$r.sockperf" "$size"
      else sockperf_round "$c.r$r.sockperf" "$size"; netdaq_round "$c.r$r.netdaq" "$size"; fi
    done
  done
done

report "$tmp" "$rounds" "$json_out" "$netdaq" "$duration" "$client_cpu" "$server_cpu" "${cases[@]}" <<'PY'
tmp, rounds, json_out, netdaq_bin, duration, ccpu, scpu = sys.argv[1:8]
cases = sys.argv[8:]
rounds = int(rounds)
failed = script_failures(tmp)
FIG = ["p50", "p99", "p99.9", "max"]
TARGET = 1.1

def clean(s):
    return re.sub(r"\x1b\[[0-9;]*m", "", s)

def sockperf_figures(name, at):
    out = clean(text(f"{tmp}/{name}.client.out") + text(f"{tmp}/{name}.client.err"))
    f = {}
    for key, pat in (("p50", r"percentile 50\.000 =\s*([0-9.]+)"), ("p99", r"percentile 99\.000 =\s*([0-9.]+)"),
                     ("p99.9", r"percentile 99\.900 =\s*([0-9.]+)"), ("max", r"<MAX> observation =\s*([0-9.]+)")):
        m = re.search(pat, out)
        f[key] = float(m.group(1)) if m else None
        need(f, key, at, f"sockperf {key}")
    m = re.search(r"\[Valid Duration\] RunTime=([0-9.]+) sec; SentMessages=([0-9]+); ReceivedMessages=([0-9]+)", out)
    if not m:
        fail(at, "figure missing: sockperf [Valid Duration] line")
    else:
        f["seconds"], f["sent"], f["received"] = float(m.group(1)), int(m.group(2)), int(m.group(3))
        if f["sent"] != f["received"]:
            fail(at, f"sockperf lost {f['sent'] - f['received']} of {f['sent']} messages")
    m = re.search(r"# dropped messages = ([0-9]+); # duplicated messages = ([0-9]+); # out-of-order messages = ([0-9]+)", out)
    if not m:
        fail(at, "figure missing: sockperf dropped/duplicated/out-of-order line")
    else:
        f["dropped"], f["duplicated"], f["out_of_order"] = map(int, m.groups())
        if any(map(int, m.groups())):
            fail(at, f"sockperf: dropped {m.group(1)}, duplicated {m.group(2)}, out-of-order {m.group(3)}")
    m = re.search(r"Latency is ([0-9.]+) usec", out)
    f["mean"] = float(m.group(1)) if m else None
    return f

def netdaq_figures(name, at):
    c = load_json(f"{tmp}/{name}.client.out")
    s = load_json(f"{tmp}/{name}.server.out")
    f = {}
    if not isinstance(c, dict):
        fail(at, "figure missing: netdaq client JSON")
        c = {}
    if not isinstance(s, dict):
        fail(at, "figure missing: netdaq server JSON")
        s = {}
    lat = c.get("latency_us") or {}
    for key in FIG:
        f[key] = lat.get(key)
        need(f, key, at, f"netdaq {key}")
    f["mean"] = lat.get("mean")
    for key in ("messages", "returned", "loss", "late", "malformed", "seconds"):
        f[key] = need(c, key, at, f"netdaq client {key}")
    for key in ("received", "echoed", "malformed", "unsent"):
        f["server_" + key] = need(s, key, at, f"netdaq server {key}")
    if f["loss"] or f["late"] or f["malformed"]:
        fail(at, f"netdaq client: lost {f['loss']}, late {f['late']}, malformed {f['malformed']}")
    if f["messages"] is not None and f["returned"] is not None and f["messages"] != f["returned"]:
        fail(at, f"netdaq: {f['messages']} sent, {f['returned']} returned")
    if f["messages"] is not None and f["server_echoed"] is not None and f["server_echoed"] != f["messages"] + 1:
        fail(at, f"netdaq server echoed {f['server_echoed']}, the client sent {f['messages']} + 1 warm-up")
    if f["server_malformed"] or f["server_unsent"]:
        fail(at, f"netdaq server: malformed {f['server_malformed']}, unsent {f['server_unsent']}")
    return f

def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None

result = {"benchmark": "pingpong_vs_peers", "quantity": "round trip / 2, us", "seconds_per_run": int(duration),
          "rounds": rounds, "client_cpu": int(ccpu), "server_cpu": int(scpu), "target_p50_ratio": TARGET,
          "host": platform.node(), "kernel": platform.release(),
          "sockperf": clean(subprocess.run(["sockperf", "--version"], capture_output=True, text=True).stdout).strip().splitlines()[-1:],
          "netdaq": subprocess.run([netdaq_bin, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[:1],
          "cases": {}}
print(f"\nround trip / 2 (us), median of {rounds} rounds, {duration} s each; client CPU {ccpu}, server CPU {scpu}")
print(f"{'case':<16} {'tool':<9} {'p50':>8} {'p99':>8} {'p99.9':>9} {'max':>10} {'msgs/round':>11}")
rows = []
for c in cases:
    per = {"netdaq": [], "sockperf": []}
    for r in range(1, rounds + 1):
        for tool in ("netdaq", "sockperf"):
            name = f"{c}.r{r}.{tool}"
            at = where(name)
            start = len(FAILURES)
            f = netdaq_figures(name, at) if tool == "netdaq" else sockperf_figures(name, at)
            f["round"] = r
            per[tool].append(round_checked(f, name, failed, start))
    entry = {"rounds": per}
    for tool in ("netdaq", "sockperf"):
        ok = [f for f in per[tool] if f["ok"]]
        entry[tool] = {k: med([f.get(k) for f in ok]) for k in FIG}
        entry[tool]["ok_rounds"] = len(ok)
        msgs = med([f.get("messages" if tool == "netdaq" else "received") for f in ok])
        m = entry[tool]
        fmt = lambda v, w: f"{v:>{w}.3f}" if v is not None else f"{'-':>{w}}"
        print(f"{c:<16} {tool:<9} {fmt(m['p50'], 8)} {fmt(m['p99'], 8)} {fmt(m['p99.9'], 9)} {fmt(m['max'], 10)} "
              f"{msgs if msgs is not None else '-':>11}")
    n, s = entry["netdaq"]["p50"], entry["sockperf"]["p50"]
    entry["ratio_p50"] = n / s if n and s else None
    entry["verdict"] = None if entry["ratio_p50"] is None else ("PASS" if entry["ratio_p50"] <= TARGET else "MISS")
    if entry["ratio_p50"] is None:
        fail(f"case {c}", "no p50 ratio (a tool has no good round)")
    rows.append((c, entry))
    result["cases"][c] = entry
print(f"\n{'case':<16} {'netdaq/sockperf p50':>20}  target <= {TARGET}")
for c, e in rows:
    ratio = f"{e['ratio_p50']:.3f}" if e["ratio_p50"] is not None else "-"
    print(f"{c:<16} {ratio:>20}  {e['verdict'] or '-'}")
result["failures"], result["warnings"], result["ok"] = FAILURES, WARNINGS, not FAILURES
if json_out:
    with open(json_out, "w") as fh:
        json.dump(result, fh, indent=2)
    print(f"JSON: {json_out}")
finish()
PY
