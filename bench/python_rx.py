#!/usr/bin/env python3
"""The Python receive loop of bench/python_vs_cpp.py: `netdaq bench --rx-only`'s queue layout
(direct mode, one pool of 6 bursts, 64 MiB rcvbuf, GRO on) polled from Python, counting
packets and bytes with the batch helpers (len, .bytes), and with --check every sequence number
(burst.field, numpy); no per-packet Python. Prints JSON:
packets, bytes, seconds (first to last packet), pps, gbps, drops."""
import argparse
import json
import time

import numpy as np

import netdaq


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--count", type=int, required=True, help="stop after this many packets")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--idle", type=float, default=1.0, help="stop this long after the last packet")
    ap.add_argument("--check", action="store_true",
                    help="also track every packet's sequence number (burst.field), as netdaq bench does")
    a = ap.parse_args()
    cfg = netdaq.Config.from_dict({
        "memory_regions": [{"name": "rx0", "buf_size": max(64, (a.size + 63) // 64 * 64), "num_bufs": 6 * a.batch}],
        "interfaces": [{"name": "bench-rx", "engine": "socket", "address": f"udp://127.0.0.1:{a.port}",
                        "rx": {"queues": [{"id": 0, "batch_size": a.batch, "ring_depth": 2,
                                           "memory_regions": ["rx0"]}]},
                        "socket": {"rcvbuf": 64 << 20}}],
        "log": {"level": "warn"}})
    packets = nbytes = gaps = 0
    expect = 0
    first = last = None
    with netdaq.Session(cfg) as s:
        q = s.rx_queue("bench-rx")
        print("ready", flush=True)
        start = time.monotonic()
        while packets < a.count:
            b = q.poll()
            now = time.monotonic()
            if b:
                if first is None:
                    first = now
                last = now
                packets += len(b)
                nbytes += b.bytes
                if a.check:  # the netdaq payload's 64-bit sequence number at offset 8
                    seqs = b.field(8, "<u8")
                    if seqs[0] != expect or (len(seqs) > 1 and (np.diff(seqs) != 1).any()):
                        gaps += 1
                    expect = int(seqs[-1]) + 1
                b.release()
            elif (last or start) + a.idle < now:
                break
        stats = q.stats()
    seconds = (last - first) if first is not None and last > first else 0.0
    print(json.dumps({"packets": packets, "bytes": nbytes, "seconds": seconds,
                      "pps": packets / seconds if seconds else 0.0,
                      "gbps": nbytes * 8 / seconds / 1e9 if seconds else 0.0,
                      "drops": stats["drops"], "bursts_with_gaps": gaps}))


if __name__ == "__main__":
    main()
