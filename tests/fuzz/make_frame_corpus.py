#!/usr/bin/env python3
"""Writes the seed corpus of the frame fuzzer (tests/fuzz/frame_corpus/*.bin).

Each file is one received Ethernet frame, as find_udp_payload sees it: frames it must accept
(IPv4/IPv6 UDP, VLAN tags, IP options, Ethernet padding, a frame longer than dpdk's 128-byte
first segment) and frames it must reject (truncated headers, UDP lengths beyond the frame,
fragments, TCP, ARP, IPv6 extension headers, a bad IHL, two VLAN tags). The addresses and
ports match the flow rules in frame_fuzz.cpp, so the seeds reach every rule.

    tests/fuzz/make_frame_corpus.py          # (re)write the corpus
    tests/fuzz/make_frame_corpus.py --check  # exit 1 if the committed files differ
"""
import pathlib
import socket
import struct

import corpus_dir

OUT = pathlib.Path(__file__).resolve().parent / "frame_corpus"

DST_MAC = bytes.fromhex("020000000002")
SRC_MAC = bytes.fromhex("020000000001")
IPV4, IPV6, VLAN, QINQ, ARP = 0x0800, 0x86DD, 0x8100, 0x88A8, 0x0806
UDP, TCP, HOP_BY_HOP = 17, 6, 0


def eth(ethertype, tags=()):
    """Ethernet header; tags: (tpid, vlan id) pairs, outermost first."""
    h = DST_MAC + SRC_MAC
    for tpid, vid in tags:
        h += struct.pack("!HH", tpid, vid & 0x0FFF)
    return h + struct.pack("!H", ethertype)


def checksum(data):
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(body, src="10.0.0.1", dst="10.0.0.2", proto=UDP, options=b"", frag=0x4000, ihl=None):
    """IPv4 header (+ options) followed by body; frag is the flags/fragment-offset field."""
    if ihl is None:
        ihl = 5 + len(options) // 4
    total = 20 + len(options) + len(body)
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total, 1, frag, 64, proto, 0,
                    socket.inet_pton(socket.AF_INET, src), socket.inet_pton(socket.AF_INET, dst)) + options
    h = h[:10] + struct.pack("!H", checksum(h)) + h[12:]
    return h + body


def ipv6(body, src="fd00::1", dst="fd00::2", next_header=UDP):
    return struct.pack("!IHBB16s16s", 0x60000000, len(body), next_header, 64,
                       socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)) + body


def udp(payload, sport=4000, dport=5000, length=None):
    """UDP header (checksum 0) + payload; length overrides the UDP length field."""
    return struct.pack("!HHHH", sport, dport, 8 + len(payload) if length is None else length, 0) + payload


def payload(n):
    return bytes(i & 0xFF for i in range(n))


def frames():
    ok_v4 = eth(IPV4) + ipv4(udp(payload(32)))
    yield "ipv4_udp", ok_v4
    yield "ipv4_udp_empty_payload", eth(IPV4) + ipv4(udp(b""))
    yield "ipv4_udp_ethernet_padding", (eth(IPV4) + ipv4(udp(payload(4)))).ljust(60, b"\0")
    yield "ipv4_udp_longer_than_first_segment", eth(IPV4) + ipv4(udp(payload(200), dport=5001))
    yield "ipv4_options_max_ihl", eth(IPV4) + ipv4(udp(payload(16), sport=9, dport=9), options=bytes([1]) * 40)
    yield "ipv4_vlan", eth(IPV4, [(VLAN, 100)]) + ipv4(udp(payload(16), dport=6050))
    yield "ipv4_8021ad_tag_vlan0", eth(IPV4, [(QINQ, 0)]) + ipv4(udp(payload(16), sport=1, dport=2), dst="10.9.9.9")
    yield "ipv4_two_vlan_tags", eth(IPV4, [(QINQ, 10), (VLAN, 100)]) + ipv4(udp(payload(16)))
    yield "ipv6_udp", eth(IPV6) + ipv6(udp(payload(32)))
    yield "ipv6_vlan", eth(IPV6, [(VLAN, 4095)]) + ipv6(udp(payload(16), dport=5000), src="fd00::7")
    hop_by_hop = struct.pack("!BB6s", UDP, 0, b"\1\4\0\0\0\0")
    yield "ipv6_hop_by_hop", eth(IPV6) + ipv6(hop_by_hop + udp(payload(16)), next_header=HOP_BY_HOP)
    yield "ipv4_more_fragments", eth(IPV4) + ipv4(udp(payload(32)), frag=0x2000)
    yield "ipv4_fragment_offset", eth(IPV4) + ipv4(payload(32), frag=0x0004)
    yield "ipv4_tcp", eth(IPV4) + ipv4(payload(40), proto=TCP)
    yield "ipv4_ihl_too_small", eth(IPV4) + ipv4(udp(payload(16)), ihl=4)
    yield "ipv4_udp_length_beyond_frame", eth(IPV4) + ipv4(udp(payload(16), length=200))
    yield "ipv4_udp_length_below_header", eth(IPV4) + ipv4(udp(payload(16), length=7))
    yield "ipv4_truncated_ip_header", ok_v4[:30]
    yield "ipv6_truncated_udp_header", (eth(IPV6) + ipv6(udp(payload(8))))[:14 + 40 + 5]
    arp = struct.pack("!HHBBH6s4s6s4s", 1, IPV4, 6, 4, 1, SRC_MAC, socket.inet_aton("10.0.0.1"),
                      bytes(6), socket.inet_aton("10.0.0.2"))
    yield "arp", (eth(ARP) + arp).ljust(60, b"\0")


def main():
    corpus_dir.main(OUT, {name + ".bin": data for name, data in frames()}, __doc__)


if __name__ == "__main__":
    main()
