#!/usr/bin/env python3
"""Writes the seed corpus of the RoCEv2 fuzzer (tests/fuzz/roce_corpus/*.bin).

roce_fuzz reads each file as a UDP payload (parse), as an IP packet (icrc) and as a frame spec
plus payload (build_frame). The seeds: UDP payloads of every opcode netdaq handles (RC and UC
SEND ONLY, WRITE FIRST/MIDDLE/LAST/ONLY, with and without immediate) with every pad count,
flags set, PSN and QP at their limits; packets parse() must refuse (unknown opcodes, a
transport version other than 0, truncated headers, a pad longer than the payload, empty); and
whole IPv4 and IPv6 RoCEv2 packets.

    tests/fuzz/make_roce_corpus.py          # (re)write the corpus
    tests/fuzz/make_roce_corpus.py --check  # exit 1 if the committed files differ
"""
import pathlib
import struct

import corpus_dir

OUT = pathlib.Path(__file__).resolve().parent / "roce_corpus"

OPS = {
    "rc_send_only": 0x04, "rc_write_first": 0x06, "rc_write_middle": 0x07, "rc_write_last": 0x08,
    "rc_write_last_imm": 0x09, "rc_write_only": 0x0A, "rc_write_only_imm": 0x0B,
    "uc_send_only": 0x24, "uc_write_first": 0x26, "uc_write_middle": 0x27, "uc_write_last": 0x28,
    "uc_write_last_imm": 0x29, "uc_write_only": 0x2A, "uc_write_only_imm": 0x2B,
}


def bth(op, pad=0, tver=0, pkey=0xFFFF, qp=0x000011, psn=0, se=0, m=0, fecn=0, becn=0, ack=0):
    return struct.pack("!BBHBBHBBH", op, se << 7 | m << 6 | pad << 4 | tver, pkey,
                       fecn << 7 | becn << 6, qp >> 16, qp & 0xFFFF, ack << 7, psn >> 16, psn & 0xFFFF)


def roce(op, payload=b"", pad=None, icrc=b"\x01\x02\x03\x04", **kw):
    """A UDP payload: BTH, RETH and ImmDt as the opcode has them, payload, pad, ICRC."""
    pad = -len(payload) % 4 if pad is None else pad
    low = op & 0x1F
    body = b""
    if low in (0x06, 0x0A, 0x0B):
        body += struct.pack("!QII", 0x00007F0000001000, 0xCAFEBABE, len(payload) or 4096)
    if low in (0x09, 0x0B):
        body += struct.pack("!I", 0x00000007)
    return bth(op, pad=pad, **kw) + body + payload + b"\0" * (-len(payload) % 4) + icrc


def data(n, seed=1):
    return bytes((seed * 37 + i * 11) & 0xFF for i in range(n))


def ipv4(udp_payload, tos=0, ttl=64):
    udp = struct.pack("!HHHH", 49152, 4791, 8 + len(udp_payload), 0) + udp_payload
    return struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(udp), 7, 0x4000, ttl, 17, 0,
                       bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])) + udp


def ipv6(udp_payload):
    udp = struct.pack("!HHHH", 49152, 4791, 8 + len(udp_payload), 0x1234) + udp_payload
    return struct.pack("!IHBB", 0x6B812345, len(udp), 17, 64) + bytes(15) + b"\1" + bytes(15) + b"\2" + udp


def corpus():
    c = {}
    for name, op in OPS.items():
        for n in (0, 1, 2, 3, 4):
            c["%s_%d" % (name, n)] = roce(op, data(n, op))
        c[name + "_1k"] = roce(op, data(1024, op), psn=0xFFFFFF, qp=0xFFFFFF)
    c["uc_write_only_imm_all_flags"] = roce(0x2B, data(5), se=1, m=1, fecn=1, becn=1, ack=1, pkey=0x8001)
    c["uc_write_middle_pmtu_4096"] = roce(0x27, data(4096))
    for op in (0x00, 0x05, 0x0C, 0x11, 0x25, 0x40, 0x64, 0x81, 0xFF):
        c["unknown_opcode_%02x" % op] = roce(op, data(8))
    c["tver_1"] = roce(0x2A, data(8), tver=1)
    c["tver_15"] = roce(0x29, data(8), tver=15)
    c["pad_longer_than_payload"] = bth(0x27, pad=3) + b"\xab\xcd" + b"\x01\x02\x03\x04"
    c["truncated_in_bth"] = roce(0x2A, data(8))[:9]
    c["truncated_in_reth"] = roce(0x2A, data(8))[:20]
    c["truncated_before_icrc"] = roce(0x2B)[:33]
    c["headers_and_icrc_only"] = roce(0x26)
    c["empty"] = b""
    c["ipv4_uc_write_only_imm"] = ipv4(roce(0x2B, data(7)))
    c["ipv4_tos_ttl"] = ipv4(roce(0x28, data(64)), tos=0x68, ttl=3)
    c["ipv4_options"] = b"\x46" + ipv4(roce(0x26, data(16)))[1:20] + b"\x01\x01\x01\x00" + ipv4(roce(0x26, data(16)))[20:]
    c["ipv6_uc_write_first"] = ipv6(roce(0x26, data(9)))
    c["ipv6_rc_send_only"] = ipv6(roce(0x04, data(3)))
    c["ipv6_header_only"] = ipv6(b"")[:40]
    return c


def main():
    corpus_dir.main(OUT, {name + ".bin": data for name, data in corpus().items()}, __doc__)


if __name__ == "__main__":
    main()
