#!/usr/bin/env python3
"""Writes the seeds of netdaq_fleet_wire_fuzz (tests/fuzz/fleet_wire_corpus): fleet fragment
headers with and without presence words, credits (placed, refused) and a hello, laid out as
src/fleet/wire.cpp encodes them (little-endian)."""
import os
import struct

MAGIC, VERSION = 0x4651444E, 1
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fleet_wire_corpus")


def fragment(words, granule=1024, complete=True, node=2, frame=7, offset=65536, size=65536, present=65536, seq=3):
    head = struct.pack("<IHHIIII", MAGIC, VERSION, 1 if complete else 0, node, granule, len(words), 0)
    head += struct.pack("<11Q", 0, frame, offset, 0, 3 * size, size, present, 1, 2, 3, seq)
    return head + b"".join(struct.pack("<Q", w) for w in words)


def credit(status, reason, seq=3, frame=7, size=65536):
    return struct.pack("<IHBBQQQQ", MAGIC, VERSION, status, reason, seq, frame, size, 0)


def main():
    os.makedirs(HERE, exist_ok=True)
    seeds = {
        "fragment_plain.bin": fragment([], granule=0),
        "fragment_presence.bin": fragment([0xFFFFFFFFFFFFFFFF] * 2 + [0x7FFF], complete=False, present=64 * 1024 - 1024),
        "credit_placed.bin": credit(1, 0),
        "credit_refused_late.bin": credit(2, 4),
        "hello.bin": struct.pack("<IHHII", MAGIC, VERSION, 0, 5, 0),
    }
    for name, data in seeds.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
