#!/usr/bin/python3
"""netdaq's RoCEv2 ICRC and frames (src/protocols/roce) against scapy's (scapy.contrib.roce).

    roce_scapy_check.py <roce_icrc_tool>

1. scapy builds RoCEv2 packets over IPv4 (every opcode netdaq handles, payloads of 0-5, 63 and
   1024 bytes so every pad count, varied TOS/TTL/id/pkey/flags/UDP checksum) and computes their
   ICRC; netdaq's icrc() must give the same bytes. A packet changed after scapy's ICRC must
   not (the comparison can fail).
2. scapy has no ICRC for IPv6 (2.5 returns 0 with a warning), so IPv6 packets built by scapy
   are checked against `kernel_icrc` below: the masking of Linux rxe (rxe_icrc.c) written over
   zlib.crc32, itself checked against scapy on every IPv4 packet of step 1.
3. netdaq's build_frame frames, dissected by scapy: the BTH fields as asked, the IPv4 checksum
   scapy computes, and the ICRC scapy computes over them equal what netdaq wrote.

Byte order: scapy packs zlib's crc32 little-endian (pack("!I")[::-1]); rxe computes crc32_le
from 0xdebb20e3 (the CRC state after 8 bytes of 0xFF) and stores ~crc as a CPU-order u32 (low
byte first on x86), which is the same 4 bytes: scapy and the kernel agree, and netdaq with them.

Run with Debian's /usr/bin/python3 (python3-scapy). Without scapy it exits 77 (skipped), or 1
under CI=true. Exit 1 on any mismatch.
"""
import os
import random
import struct
import subprocess
import sys
import zlib

CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

try:
    import logging
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)  # no IPv6-ICRC warnings
    from scapy.compat import raw
    from scapy.contrib.roce import BTH
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw
except ImportError as e:
    print("scapy is not installed (apt-get install python3-scapy: scripts/install-deps.sh): %s" % e)
    sys.exit(1 if CI else 77)

OPCODES = [0x04, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x24, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B]
SIZES = [0, 1, 2, 3, 4, 5, 63, 1024]
failures = []


def has_reth(op):
    return op & 0x1F in (0x06, 0x0A, 0x0B)


def has_imm(op):
    return op & 0x1F in (0x09, 0x0B)


def kernel_icrc(ip):
    """The ICRC of an IP packet (header through payload and pad, no ICRC) as rxe_icrc.c
    computes it: IPv4 TOS, TTL, checksum / IPv6 traffic class, flow label, hop limit, the UDP
    checksum and BTH byte 4 set to ones, after 8 bytes of ones; its 4 wire bytes."""
    m = bytearray(ip)
    if m[0] >> 4 == 6:
        m[0] |= 0x0F
        m[1:4] = b"\xff\xff\xff"
        m[7] = 0xFF
        hdr = 40
    else:
        m[1] = 0xFF
        m[8] = 0xFF
        m[10:12] = b"\xff\xff"
        hdr = (m[0] & 15) * 4
    m[hdr + 6:hdr + 8] = b"\xff\xff"
    m[hdr + 8 + 4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(m)))


class Tool:
    def __init__(self, path):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        answer = self.p.stdout.readline().strip()
        if not answer or answer.startswith("error"):
            sys.exit("roce_icrc_tool refused: %s" % line[:100])
        return answer


def transport_headers(op, rng, payload_len):
    body = b""
    if has_reth(op):
        body += struct.pack("!QII", rng.getrandbits(64), rng.getrandbits(32), payload_len)
    if has_imm(op):
        body += struct.pack("!I", rng.getrandbits(32))
    return body


def scapy_packets(rng, v6):
    for op in OPCODES:
        for n in SIZES:
            pad = -n % 4
            payload = bytes(rng.getrandbits(8) for _ in range(n))
            bth = BTH(opcode=op, solicited=rng.getrandbits(1), migreq=rng.getrandbits(1), padcount=pad,
                      pkey=rng.choice([0xFFFF, 0x8001, 0x7FFF]), fecn=rng.getrandbits(1), becn=rng.getrandbits(1),
                      dqpn=rng.getrandbits(24), ackreq=rng.getrandbits(1), psn=rng.getrandbits(24))
            udp = UDP(sport=rng.randrange(49152, 65536), dport=4791, chksum=rng.choice([0, None, 0x1234]))
            if v6:
                ip = IPv6(src="fd00::1", dst="fd00::2", tc=rng.getrandbits(8), fl=rng.getrandbits(20),
                          hlim=rng.randrange(1, 256))
                bth.icrc = 0  # scapy has none for IPv6
            else:
                ip = IP(src="10.0.0.%d" % rng.randrange(1, 255), dst="10.0.0.2", id=rng.getrandbits(16), flags="DF",
                        tos=rng.getrandbits(8), ttl=rng.randrange(1, 256))
            pkt = ip / udp / bth / Raw(transport_headers(op, rng, n) + payload + b"\0" * pad)
            yield op, n, raw(pkt)


def check_scapy_icrc(tool, rng):
    count = 0
    for v6 in (False, True):
        for op, n, b in scapy_packets(rng, v6):
            what = "%s opcode 0x%02x, %d bytes" % ("IPv6" if v6 else "IPv4", op, n)
            want = kernel_icrc(b[:-4]) if v6 else b[-4:]
            if not v6 and kernel_icrc(b[:-4]) != want:
                failures.append("%s: scapy %s, rxe's masking %s" % (what, want.hex(), kernel_icrc(b[:-4]).hex()))
            got = tool.ask("icrc " + b[:-4].hex() + want.hex())
            if got != want.hex():
                failures.append("%s: netdaq %s, %s %s" % (what, got, "rxe's masking" if v6 else "scapy", want.hex()))
            count += 1
    # The comparison can fail: a payload byte changed after scapy's ICRC.
    _, _, b = next(scapy_packets(random.Random(7), False))
    changed = bytearray(b)
    changed[-5] ^= 0x01
    if tool.ask("icrc " + bytes(changed).hex()) == b[-4:].hex():
        failures.append("a changed byte kept scapy's ICRC")
    print("scapy -> netdaq: %d packets (IPv4: scapy's ICRC; IPv6: rxe's masking), same ICRC" % count)


def check_netdaq_frames(tool, rng):
    count = 0
    for op in OPCODES:
        for n in SIZES:
            qp, psn, pkey = rng.getrandbits(24), rng.getrandbits(24), rng.choice([0, 0x8001])
            va, rkey, imm, flags = rng.getrandbits(64), rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(5)
            payload = bytes(rng.getrandbits(8) for _ in range(n))
            frame = bytes.fromhex(tool.ask("build %x %x %x %x %x %x %x %x %x %s" % (
                op, qp, psn, va, rkey, n, imm, pkey, flags, payload.hex() or "-")))
            what = "netdaq frame, opcode 0x%02x, %d bytes" % (op, n)
            pkt = Ether(frame)
            if BTH not in pkt:
                failures.append("%s: scapy found no BTH" % what)
                continue
            b = pkt[BTH]
            fields = (b.opcode, b.dqpn, b.psn, b.padcount, b.version, b.pkey,
                      b.solicited, b.migreq, b.fecn, b.becn, b.ackreq)
            want = (op, qp, psn, -n % 4, 0, pkey or 0xFFFF,
                    flags & 1, flags >> 1 & 1, flags >> 2 & 1, flags >> 3 & 1, flags >> 4 & 1)
            if fields != want:
                failures.append("%s: scapy read %s, asked %s" % (what, fields, want))
            body = raw(b.payload)
            if body[len(body) - n - (-n % 4):len(body) - (-n % 4)] != payload:
                failures.append("%s: payload differs" % what)
            if pkt[IP].flags != "DF" or pkt[UDP].dport != 4791 or pkt[UDP].chksum != 0:
                failures.append("%s: IP flags %s, UDP %s" % (what, pkt[IP].flags, pkt[UDP].summary()))
            rebuilt = pkt.copy()
            rebuilt[IP].chksum = None
            rebuilt[BTH].icrc = None
            again = raw(rebuilt)
            if again[14:34] != frame[14:34]:
                failures.append("%s: IPv4 header (checksum) %s, scapy's %s" % (what, frame[14:34].hex(), again[14:34].hex()))
            if again[-4:] != frame[-4:]:
                failures.append("%s: ICRC netdaq %s, scapy %s" % (what, frame[-4:].hex(), again[-4:].hex()))
            if again != frame:
                failures.append("%s: scapy's rebuild differs from netdaq's frame" % what)
            count += 1
    print("netdaq -> scapy: %d frames dissected, fields and ICRC as scapy computes them" % count)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tool = Tool(sys.argv[1])
    rng = random.Random(4791)
    check_scapy_icrc(tool, rng)
    check_netdaq_frames(tool, rng)
    tool.p.stdin.close()
    tool.p.wait()
    for f in failures[:20]:
        print("FAIL", f)
    if failures:
        sys.exit("%d mismatches" % len(failures))
    print("all agree")


if __name__ == "__main__":
    main()
