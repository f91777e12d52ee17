#!/usr/bin/python3
"""deploy/prometheus/fleet.yml and fleet-rules.yml in a real Prometheus (Debian's) scraping a
real fleet on the loopback: 3 sensors (`netdaq run`) -> 3 ingest nodes (`netdaq ingest`, the
socket engine, examples/fleet/ingest.yaml) -> UCX over TCP -> 2 builders (`netdaq build`,
frame f on builder f % 2). Each fleet total the recording rules compute must equal the sum of
the processes' own summaries (--json), and the invariant must hold summed (unaccounted 0).

  prometheus_fleet_live_test.py SOURCE_DIR NETDAQ        (ctest fleet_prometheus_rules_live)

The shipped fleet.yml is used as it is but for its targets' ports (free ones are picked, so
nothing else on 9464.. is scraped by mistake). Every wait is bounded; every process started
here is stopped when the test ends. Exit 77 (skip) outside CI when prometheus is missing.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SRC, NETDAQ = sys.argv[1], sys.argv[2]
CI = os.environ.get("CI", "").lower() in ("true", "1", "yes")
FRAMES = 10  # per sensor: 640 packets of 1024 bytes, 64 per frame


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(what, seconds, check):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    raise TimeoutError(f"{what}: not within {seconds} s")


def query(port, expr):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    return {tuple(sorted(s["metric"].items())): float(s["value"][1]) for s in body["data"]["result"]}


def main():
    prometheus = shutil.which("prometheus")
    if not prometheus:
        if CI:
            print("FAIL: prometheus is missing (apt-get install prometheus); CI=true: this test must not skip")
            return 1
        print("SKIP: prometheus is missing (apt-get install prometheus)")
        return 77
    work = tempfile.mkdtemp(prefix="ndq-fleet-prom-")
    procs = []

    def start(name, argv):
        log = open(os.path.join(work, name + ".log"), "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        procs.append((name, p))
        return p

    try:
        ingest_metrics = [free_port() for _ in range(3)]
        builder_metrics = [free_port() for _ in range(2)]
        builder_ucx = [free_port() for _ in range(2)]
        sensor_udp = [free_port(socket.SOCK_DGRAM) for _ in range(3)]
        prom_port = free_port()

        # The shipped config and rules; only the targets' ports change.
        prom_dir = os.path.join(work, "prometheus")
        os.makedirs(prom_dir)
        shutil.copy(os.path.join(SRC, "deploy/prometheus/fleet-rules.yml"), prom_dir)
        cfg = open(os.path.join(SRC, "deploy/prometheus/fleet.yml")).read()
        for shipped, port in zip([9464, 9465, 9466, 9474, 9475], ingest_metrics + builder_metrics):
            assert f'"127.0.0.1:{shipped}"' in cfg, f"fleet.yml no longer lists 127.0.0.1:{shipped}"
            cfg = cfg.replace(f'"127.0.0.1:{shipped}"', f'"127.0.0.1:{port}"')
        open(os.path.join(prom_dir, "fleet.yml"), "w").write(cfg)

        # The fleet's configs from examples/fleet: 3 nodes, 2 builders.
        ingest = open(os.path.join(SRC, "examples/fleet/ingest.yaml")).read()
        builder = open(os.path.join(SRC, "examples/fleet/builder.yaml")).read()
        sensor = open(os.path.join(SRC, "examples/fleet/sensor.yaml")).read()
        dests = ",".join(f"127.0.0.1:{p}" for p in builder_ucx)
        for i in range(3):
            c = ingest.replace("udp://127.0.0.1:46100", f"udp://127.0.0.1:{sensor_udp[i]}")
            c = re.sub(r"(?m)^  node: 0\b", f"  node: {i}", c)
            c = re.sub(r"(?m)^  nodes: 1\b", "  nodes: 3", c)
            c = re.sub(r'(?m)^  destinations: "[^"]*"', f'  destinations: "{dests}"', c)
            open(os.path.join(work, f"ingest{i}.yaml"), "w").write(c)
            s = sensor.replace("udp://127.0.0.1:46100", f"udp://127.0.0.1:{sensor_udp[i]}")
            s = s.replace("rate_pps: 20000", "rate_pps: 10000")
            open(os.path.join(work, f"sensor{i}.yaml"), "w").write(s)
        for b in range(2):
            c = re.sub(r"(?m)^  nodes: 1\b", "  nodes: 3", builder)
            c = re.sub(r'(?m)^  listen: "[^"]*"', f'  listen: "127.0.0.1:{builder_ucx[b]}"', c)
            c = re.sub(r"(?m)^  max_bytes: 65536\b", "  max_bytes: 196608", c)
            open(os.path.join(work, f"builder{b}.yaml"), "w").write(c)

        start("prometheus", [prometheus, f"--config.file={prom_dir}/fleet.yml",
                             f"--storage.tsdb.path={work}/tsdb", f"--web.listen-address=127.0.0.1:{prom_port}",
                             "--log.level=warn"])

        def ready():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{prom_port}/-/ready", timeout=2) as r:
                    return r.status == 200
            except OSError:
                return False
        wait_until("prometheus ready", 30, ready)

        for b in range(2):
            start(f"builder{b}", [NETDAQ, "build", f"{work}/builder{b}.yaml", "--metrics",
                                  f"127.0.0.1:{builder_metrics[b]}", "--check-payload", "1024",
                                  "--packets-per-frame", "64", "--idle-ms", "3000", "--duration", "60",
                                  "--json", f"{work}/builder{b}.json", "--metrics-linger", "120"])
        time.sleep(1)
        for i in range(3):
            start(f"ingest{i}", [NETDAQ, "ingest", f"{work}/ingest{i}.yaml", "--metrics",
                                 f"127.0.0.1:{ingest_metrics[i]}", "--idle-ms", "2000", "--duration", "60",
                                 "--json", f"{work}/ingest{i}.json", "--metrics-linger", "120"])
        time.sleep(1)
        sensors = [start(f"sensor{i}", [NETDAQ, "run", f"{work}/sensor{i}.yaml"]) for i in range(3)]
        for p in sensors:
            p.wait(timeout=60)

        names = [f"ingest{i}" for i in range(3)] + [f"builder{b}" for b in range(2)]
        wait_until("every summary written", 60,
                   lambda: all(os.path.exists(f"{work}/{n}.json") for n in names))
        time.sleep(0.5)  # written in place whole (renamed), but give the lingering servers a publish
        ing = [json.load(open(f"{work}/ingest{i}.json")) for i in range(3)]
        bld = [json.load(open(f"{work}/builder{b}.json")) for b in range(2)]

        tot = lambda key: sum(r["sink"]["total"][key] for r in ing)  # noqa: E731
        want = {
            "fleet:netdaq_fleet_sink_frames:sum": sum(r["sink"]["frames"] for r in ing),
            "fleet:netdaq_fleet_sink_fragments:sum": tot("fragments"),
            "fleet:netdaq_fleet_sink_acked:sum": tot("acked"),
            "fleet:netdaq_fleet_sink_acked_bytes:sum": tot("bytes_acked"),
            "fleet:netdaq_fleet_sink_dropped:sum": tot("refused") + tot("no_credit"),
            "fleet:netdaq_fleet_sink_lost:sum": tot("peer_down") + tot("in_flight_lost"),
            "fleet:netdaq_fleet_sink_in_flight:sum": tot("in_flight"),
            "fleet:netdaq_fleet_sink_unaccounted:sum": 0,
            "fleet:netdaq_fleet_builder_frames:sum": sum(r["frames"]["built"] for r in bld),
            "fleet:netdaq_fleet_builder_timed_out:sum": sum(r["frames"]["timed_out"] for r in bld),
            "fleet:netdaq_fleet_builder_fragments:sum": sum(n["fragments"] for r in bld for n in r["nodes"]),
            "fleet:netdaq_fleet_builder_missing:sum": sum(n["missing"] for r in bld for n in r["nodes"]),
        }
        for n in range(3):
            want[f'fleet_node:netdaq_fleet_builder_fragments:sum{{node="{n}"}}'] = sum(
                x["fragments"] for r in bld for x in r["nodes"] if x["node"] == n)
        want['fleet_role:up:sum{role="ingest"}'] = 3
        want['fleet_role:up:sum{role="builder"}'] = 2

        def got_all():
            got = {}
            for expr in want:
                res = query(prom_port, expr)
                if len(res) != 1:
                    return None
                got[expr] = next(iter(res.values()))
            return got if all(got[e] == want[e] for e in want) else None

        try:
            got = wait_until("the recording rules to match the summaries", 60, got_all)
        except TimeoutError as e:
            print(f"FAIL: {e}")
            for expr, value in want.items():
                print(f"  {expr}: prometheus {query(prom_port, expr)}, summaries {value}")
            return 1
        for expr, value in got.items():
            print(f"ok   {expr} = {value:g} (the processes' summaries: {want[expr]})")
        # Each target carries its role and index labels from fleet.yml.
        labels = query(prom_port, 'up{job=~"netdaq-.*"}')
        seen = sorted((dict(k).get("role"), dict(k).get("node", dict(k).get("builder"))) for k in labels)
        expected = [("builder", "0"), ("builder", "1"), ("ingest", "0"), ("ingest", "1"), ("ingest", "2")]
        if seen != expected:
            print(f"FAIL: targets {seen}, want {expected}")
            return 1
        print(f"ok   targets {seen}")
        frames = want["fleet:netdaq_fleet_sink_frames:sum"]
        if frames == 0 or want["fleet:netdaq_fleet_builder_frames:sum"] == 0:
            print("FAIL: the fleet moved no frames")
            return 1
        print(f"fleet totals in Prometheus equal the sums of the 5 processes' summaries "
              f"({frames:g} frames sent, {want['fleet:netdaq_fleet_builder_frames:sum']:g} built)")
        return 0
    finally:
        for name, p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for name, p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
        if os.environ.get("NDQ_KEEP_WORK"):
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
