#!/usr/bin/env python3
"""netdaq's Python receive loop against its C++ one on the same loopback traffic, side by side.

For each payload size (64 B and 8 KB by default), the same sender (`netdaq bench --tx-only`,
unpaced, for --duration seconds, burst 256, on the first CPU) feeds in turn `netdaq bench --rx-only
--no-verify` (C++) and bench/python_rx.py (Python, the batch helpers), both on the last CPU
with the same queue layout; then the Python loop again tracking every sequence number
(burst.field + numpy), since netdaq bench checks each packet's header in C++ even with
--no-verify. Rates are the receiver's: packets over first-to-last packet. Each case runs
--repeat times alternating the order; the table shows medians and the ratios Python / C++
(target >= 0.8 for the counting loop; the exit status is 1 below it).

usage: bench/python_vs_cpp.py [--netdaq build/tools/netdaq/netdaq] [--sizes 64,8192]
           [--duration 2] [--repeat 3] [--json FILE]
Needs PYTHONPATH=<build>/python (or netdaq installed with pip)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cpus():
    c = sorted(os.sched_getaffinity(0))
    return str(c[0]), str(c[-1])


def run_case(kind, netdaq, size, duration, batch, port):
    count = 10**12  # receivers stop 1 s after the last packet
    tx_cpu, rx_cpu = cpus()
    if kind == "cpp":
        rx_cmd = [netdaq, "bench", "--rx-only", "--address", f"127.0.0.1:{port}", "--size", str(size),
                  "--count", str(count), "--batch", str(batch), "--no-verify", "--idle-timeout", "1",
                  "--rx-cpu", rx_cpu, "--json", "--quiet"]
    else:
        rx_cmd = ["taskset", "-c", rx_cpu, sys.executable, os.path.join(HERE, "python_rx.py"), "--port", str(port),
                  "--size", str(size), "--count", str(count), "--batch", str(batch)]
        if kind == "py_check":
            rx_cmd.append("--check")
    rx = subprocess.Popen(rx_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if kind != "cpp":
        assert rx.stdout.readline().strip() == "ready", rx.stderr.read()
    else:
        time.sleep(0.5)
    tx = subprocess.run(["taskset", "-c", tx_cpu, netdaq, "bench", "--tx-only", "--destination",
                         f"127.0.0.1:{port}", "--size", str(size), "--duration", str(duration), "--batch", str(batch),
                         "--no-verify", "--json", "--quiet"], capture_output=True, text=True, timeout=120)
    out, err = rx.communicate(timeout=120)
    if rx.returncode != 0 or tx.returncode != 0:
        raise RuntimeError(f"{kind} size {size}: receiver exit {rx.returncode}: {err[-2000:]}\n"
                           f"sender exit {tx.returncode}: {tx.stderr[-2000:]}")
    r = json.loads(out) if kind == "cpp" else json.loads(out.strip().splitlines()[-1])
    return {"pps": r["pps"], "gbps": r["gbps"], "packets": r["packets"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--netdaq", default=os.path.join(HERE, "..", "build", "tools", "netdaq", "netdaq"))
    ap.add_argument("--sizes", default="64,8192")
    ap.add_argument("--duration", type=float, default=2.0, help="seconds the sender sends per run")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--port", type=int, default=47310)
    ap.add_argument("--json", dest="json_out")
    a = ap.parse_args()
    cases = []
    failed = False
    for size in [int(s) for s in a.sizes.split(",")]:
        runs = {"cpp": [], "py": [], "py_check": []}
        for r in range(a.repeat):
            order = ["cpp", "py", "py_check"]
            for kind in (order if r % 2 == 0 else order[::-1]):
                runs[kind].append(run_case(kind, a.netdaq, size, a.duration, a.batch, a.port))
        med = {k: statistics.median(x["pps"] for x in v) for k, v in runs.items()}
        ratio = med["py"] / med["cpp"] if med["cpp"] else 0.0
        ratio_check = med["py_check"] / med["cpp"] if med["cpp"] else 0.0
        failed |= ratio < 0.8
        cases.append({"size": size, "batch": a.batch, "cpp_pps": med["cpp"], "python_pps": med["py"],
                      "python_check_pps": med["py_check"], "ratio": ratio, "ratio_check": ratio_check,
                      "cpp_gbps": statistics.median(x["gbps"] for x in runs["cpp"]),
                      "python_gbps": statistics.median(x["gbps"] for x in runs["py"]), "runs": runs})
    print(f"{'size':>6} {'C++ pps':>12} {'Python pps':>12} {'ratio':>6} {'Py+seq pps':>12} {'ratio':>6}"
          f"  (medians of {a.repeat}, burst {a.batch})")
    for c in cases:
        print(f"{c['size']:>6} {c['cpp_pps']:>12,.0f} {c['python_pps']:>12,.0f} {c['ratio']:>6.2f}"
              f" {c['python_check_pps']:>12,.0f} {c['ratio_check']:>6.2f}"
              f"{'' if c['ratio'] >= 0.8 else '  < 0.8 target'}")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump({"netdaq": "bench", "command": "python_vs_cpp", "cases": cases}, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
