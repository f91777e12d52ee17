#!/usr/bin/env python3
"""Writes the seed corpora of the payload, sequence, peer_file and pcap fuzzers (tests/fuzz/<name>_corpus/).

payload_corpus: netdaq payloads as receivers get them (include/netdaq/payload.h; the pattern is
  computed here from the format the header documents): valid ones of several sizes (header
  only, partial pattern words, several words), one with a flipped pattern byte, a header
  without its pattern, a bad magic, a truncated header.
sequence_corpus: FrameTracker configs and action streams in sequence_fuzz.cpp's encoding (in
  order, reordered with duplicates, late, skipped frames, timeouts, no free buffer, 8-bit
  counters wrapping, arrival order, an absolute sequence number, an impossible config), and
  the known bug sequence_fuzz.cpp describes.
peer_file_corpus: rdma peer files (docs/rdma-engine.md): netdaq's own, an FPGA's (no credits), tx
  only, blank, a few it must reject, among them a float out of range (once a bug, now an Error).
pcap_corpus: capture files for the pcap engine's reader: pcap (nanosecond and microsecond) and
  pcapng with IPv4 and IPv6 UDP, an ARP record and a record cut short, a file truncated inside a
  record and inside its header, a bad magic, a caplen past the snaplen, a non-Ethernet link type.

    tests/fuzz/make_corpora.py          # (re)write the corpora
    tests/fuzz/make_corpora.py --check  # exit 1 if the committed files differ
"""
import json
import pathlib
import struct
import sys

HERE = pathlib.Path(__file__).resolve().parent
M64 = (1 << 64) - 1

# ---- payload ----
MAGIC = 0x3151444E
GOLDEN = 0x9E3779B97F4A7C15


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def payload(size, stream, seq, send_ns):
    seed = mix64((seq + mix64(stream)) & M64)
    out = bytearray(struct.pack("<IIQQ", MAGIC, stream, seq, send_ns))
    k = 0
    while len(out) < size:
        x = (seed + (k + 1) * GOLDEN) & M64
        out += struct.pack("<Q", x ^ (x >> 31))
        k += 1
    return bytes(out[:size])


def payloads():
    yield "header_only", payload(24, 0, 0, 0)
    yield "one_byte_pattern", payload(25, 1, 1, 1000)
    yield "partial_word", payload(37, 7, 42, 123456789)
    yield "words", payload(96, 3, 12345, 1_700_000_000_000_000_000)
    yield "longer_than_64_bytes_of_pattern", payload(160, 0xFFFFFFFF, M64, M64)
    bad = bytearray(payload(64, 2, 99, 5))
    bad[40] ^= 0x10
    yield "flipped_pattern_byte", bytes(bad)
    yield "header_without_pattern", payload(24, 5, 6, 7) + bytes(16)
    yield "bad_magic", b"NDQ2" + payload(48, 0, 0, 0)[4:]
    yield "truncated_header", payload(24, 9, 9, 9)[:13]


# ---- sequence (the encoding of sequence_fuzz.cpp) ----


def config(ppf_byte, open_frames, extra_buffers, seq_bits=64, arrival=False, timeout_us=10):
    """ppf_byte as sequence_fuzz.cpp reads byte 0 (< 200: % 20); frame_buffers = open + extra."""
    bits = {8: 0, 16: 1, 32: 2, 64: 3}[seq_bits]
    return bytes([ppf_byte, open_frames, extra_buffers + 1, bits | (4 if arrival else 0), timeout_us])


def step(delta):
    """place(previous + delta), -32 <= delta <= 95."""
    assert -32 <= delta <= 95
    return bytes([delta + 32])


START, NEXT, REPEAT, BACK = step(0), step(1), step(0), step(-1)
POP, POP_RELEASE, RELEASE0 = b"\xc0", b"\xc1", b"\xe0"


def skip(windows):
    return bytes([0x80 + windows - 1])


def late(windows):
    return bytes([0x90 + windows - 1])


def wait(eighths):
    return bytes([0xA0 + eighths])


def absolute(seq):
    return b"\x98" + struct.pack("<Q", seq)


def sequences():
    yield "in_order", config(4, 2, 2) + START + NEXT * 11 + POP_RELEASE
    yield "reordered_duplicates", config(4, 3, 1) + START + step(3) + BACK * 2 + REPEAT + step(5) + BACK * 4 + POP + RELEASE0
    yield "late_and_skipped", config(2, 2, 2) + START + NEXT * 3 + skip(3) + late(2) + NEXT + POP_RELEASE
    yield "timeout", config(3, 2, 2, timeout_us=8) + START + NEXT + wait(9) + NEXT + wait(31) + POP + RELEASE0 + RELEASE0
    yield "no_free_buffer", config(1, 2, 0) + START + NEXT * 6 + POP + NEXT * 2 + RELEASE0 + NEXT + POP_RELEASE
    yield "wide_frames", config(235, 2, 1) + START + step(95) * 3 + step(-20) + NEXT * 8 + POP
    yield "seq_bits_8_wrap", config(5, 4, 2, seq_bits=8) + START + (step(90) + POP_RELEASE) * 6
    yield "seq_bits_16_absolute", config(4, 2, 1, seq_bits=16) + absolute(0xFFFE) + NEXT * 4 + absolute(0x1_0003) + POP
    yield "arrival_order", config(3, 2, 1, arrival=True) + START + REPEAT * 4 + wait(20) + REPEAT * 3 + POP_RELEASE
    yield "impossible_config", bytes([0, 1, 1, 3, 10]) + NEXT
    # The known bug (sequence_fuzz.cpp): reproduce it with NETDAQ_FUZZ_KNOWN_BUGS=1.
    yield "known_bug_fast_path_wraps_to_sequence_0", config(11, 1, 0) + step(-1) + NEXT
    yield "known_bug_frame_2_64_minus_1_never_closed", config(1, 2, 2) + step(-1)


# ---- peer_file ----


def peer(gid, rx=(), tx=()):
    return {"gid": gid, "rx": list(rx), "tx": list(tx)}


def peer_files():
    ring = {"addr": 140245331775488, "rkey": 4660, "slots": 4096, "stride": 8192, "slot_size": 8192}
    netdaq = peer("::ffff:10.77.0.2", [{"qpn": 17, "psn": 0, "ring": ring, "credits": True}],
                  [{"qpn": 18, "psn": 0, "credit": {"addr": 94311268925440, "rkey": 99}}])
    yield "netdaq", (json.dumps(netdaq, indent=1) + "\n").encode()
    fpga = peer("fe80::1", [{"qpn": 0xFFFFFF, "psn": 0xFFFFFF,
                             "ring": {"addr": 0, "rkey": 0, "slots": 1, "stride": 64, "slot_size": 64}}])
    yield "fpga_rx_no_credits", json.dumps(fpga).encode()
    yield "tx_only", json.dumps({"gid": "::ffff:10.0.0.1", "tx": [{"qpn": 5}, {"qpn": 6, "psn": 1}]}).encode()
    yield "blank", b" \n\t\r\n"
    yield "qpn_zero", b'{"gid": "::1", "rx": [{"qpn": 0}]}'
    yield "stride_below_slot_size", json.dumps(peer("::1", [{"qpn": 1, "ring": dict(ring, stride=1)}])).encode()
    yield "bad_gid", b'{"gid": "10.0.0.1", "tx": []}'
    yield "truncated", (json.dumps(netdaq) + "\n").encode()[:70]
    # Once undefined behaviour (a cast of 1e300 into 32 bits), now an Error (peer_file_fuzz.cpp).
    yield "float_out_of_range", b'{"gid": "::1", "rx": [{"qpn": 1e300}]}'


# ---- pcap ----
def udp_frame(payload_bytes, dport=46000, ipv6=False):
    eth = bytes(6) + bytes(6) + (b"\x86\xdd" if ipv6 else b"\x08\x00")
    udp = struct.pack(">HHHH", 40000, dport, 8 + len(payload_bytes), 0) + payload_bytes
    if ipv6:
        ip = struct.pack(">IHBB", 6 << 28, len(udp), 17, 64) + bytes(15) + b"\x01" + bytes(15) + b"\x01"
    else:
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0, b"\x7f\0\0\x01", b"\x7f\0\0\x01")
    return eth + ip + udp


def pcap_file(records, nano=True, linktype=1):
    out = struct.pack("<IHHiIII", 0xA1B23C4D if nano else 0xA1B2C3D4, 2, 4, 0, 0, 262144, linktype)
    for ts, data, wire_len in records:
        out += struct.pack("<IIII", ts // 10**9, ts % 10**9 if nano else ts % 10**9 // 1000, len(data), wire_len)
        out += data
    return out


def pcapng_file(records):
    def block(kind, body):
        body += bytes(-len(body) % 4)
        n = 12 + len(body)
        return struct.pack("<II", kind, n) + body + struct.pack("<I", n)
    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += block(1, struct.pack("<HHI", 1, 0, 262144) + struct.pack("<HHB3x", 9, 1, 9) + bytes(4))  # if_tsresol 1e-9
    for ts, data, wire_len in records:
        out += block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(data), wire_len) + data)
    return out


def pcaps():
    two = [(1_700_000_000_000_000_000, udp_frame(payload(64, 0, 0, 0)), 0),
           (1_700_000_000_000_500_000, udp_frame(payload(64, 0, 1, 0), ipv6=True), 0)]
    two = [(ts, d, len(d)) for ts, d, _ in two]
    yield "two_udp_nanosecond", pcap_file(two)
    yield "two_udp_microsecond", pcap_file(two, nano=False)
    yield "pcapng_two_udp", pcapng_file(two)
    arp = bytes(12) + b"\x08\x06" + bytes(28)
    cut = udp_frame(payload(64, 0, 2, 0))
    yield "arp_and_cut_short", pcap_file([(0, arp, len(arp)), (1000, cut[:40], len(cut))])
    yield "truncated_record", pcap_file(two)[:-10]
    yield "truncated_header", pcap_file(two)[:20]
    yield "bad_magic", b"\0\0\0\0" + pcap_file(two)[4:]
    yield "caplen_beyond_snaplen", pcap_file([(0, bytes(16), 16)])[:32] + struct.pack("<I", 0x7FFFFFFF) + bytes(12)
    yield "linux_cooked", pcap_file(two, linktype=113)


CORPORA = {"payload_corpus": payloads, "sequence_corpus": sequences, "peer_file_corpus": peer_files,
           "pcap_corpus": pcaps}


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] and not check:
        sys.exit(__doc__)
    stale = []
    for corpus, make in CORPORA.items():
        out = HERE / corpus
        want = {name + ".bin": data for name, data in make()}
        have = {p.name: p.read_bytes() for p in out.glob("*.bin")} if out.is_dir() else {}
        if check:
            stale += [corpus + "/" + n for n in sorted(want.keys() | have.keys()) if want.get(n) != have.get(n)]
            continue
        out.mkdir(exist_ok=True)
        for name in have.keys() - want.keys():
            (out / name).unlink()
        for name, data in want.items():
            (out / name).write_bytes(data)
        print("wrote %d files to %s" % (len(want), out))
    if check:
        if stale:
            sys.exit("fuzz corpora out of date (run tests/fuzz/make_corpora.py): " + ", ".join(stale))
        print("fuzz corpora: %d files up to date" % sum(len(list(make())) for make in CORPORA.values()))


if __name__ == "__main__":
    main()
