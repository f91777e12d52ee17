#!/usr/bin/env python3
"""Receives with netdaq from Python and prints rates and drops once a second.

    PYTHONPATH=build/python python3 examples/python/receive_rates.py examples/loopback.yaml

With examples/loopback.yaml the file's sender interface streams to its receiver in the same
session; this program sends nothing itself, so run `netdaq bench --tx-only --destination
127.0.0.1:46000` (or any UDP source) beside it. Ctrl-C stops it."""
import sys
import time

import netdaq


def main(path):
    with netdaq.Session(netdaq.Config.load(path)) as session:
        queues = session.rx_queues()
        packets = nbytes = 0
        last, last_packets, last_bytes = time.monotonic(), 0, 0
        try:
            while True:
                for q in queues:
                    with q.poll() as burst:       # buffers go back to the pool at the end
                        packets += len(burst)
                        nbytes += burst.bytes     # no per-packet Python: the burst counts
                now = time.monotonic()
                if now - last >= 1:
                    drops = {}
                    for s in session.stats():
                        for reason, n in s["drops"].items():
                            drops[reason] = drops.get(reason, 0) + n
                    dt = now - last
                    print(f"{(packets - last_packets) / dt:12,.0f} pkt/s {(nbytes - last_bytes) * 8 / dt / 1e9:7.3f} Gb/s"
                          f"  drops {({k: v for k, v in drops.items() if v}) or 0}", flush=True)
                    last, last_packets, last_bytes = now, packets, nbytes
        except KeyboardInterrupt:
            pass
    print(f"received {packets:,} packets, {nbytes:,} bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples/loopback.yaml")
