#!/usr/bin/env python3
"""Writes the seed corpus of the RTP video fuzzer (tests/fuzz/rtp_video_corpus/*.bin).

Each file is a run of UDP payloads, each as a 16-bit big-endian length and its bytes: RTP
(RFC 3550) packets with the RFC 4175 payload header (extended sequence number, SRD headers
length | F row | C offset, then the segments) for the formats rtp_video_fuzz.cpp decodes
(1080p 10-bit 4:2:2, interlaced 64x16 8-bit 4:2:2 with payload type 96, 100x10 RGB 8-bit,
64x8 10-bit 4:4:4): whole frames, one to five segments a packet, CSRCs, extensions, padding,
timestamps across the 32-bit wrap and at 59.94, late and far-behind packets, two SSRCs, and
packets the decoder must reject (short, version 1, another payload type, SRDs past the
payload, segments not on pixel groups or outside the line or frame).

    tests/fuzz/make_rtp_video_corpus.py          # (re)write the corpus
    tests/fuzz/make_rtp_video_corpus.py --check  # exit 1 if the committed files differ
"""
import pathlib
import struct

import corpus_dir

OUT = pathlib.Path(__file__).resolve().parent / "rtp_video_corpus"


def rtp(segs, ts=0, seq=0, ssrc=0x5EED, pt=96, marker=False, version=2, csrcs=0, ext_words=None,
        padding=0, ext_seq=0, data=None):
    """One packet; segs: (row, offset, length[, field]); data: the segments' bytes (else a pattern)."""
    b0 = version << 6 | (0x20 if padding else 0) | (0x10 if ext_words is not None else 0) | csrcs
    p = struct.pack("!BBHII", b0, (0x80 if marker else 0) | pt, seq & 0xFFFF, ts & 0xFFFFFFFF, ssrc)
    p += b"".join(struct.pack("!I", 0xC0000000 + i) for i in range(csrcs))
    if ext_words is not None:
        p += struct.pack("!HH", 0xBEDE, ext_words) + b"\xe0" * (4 * ext_words)
    p += struct.pack("!H", ext_seq)
    for k, s in enumerate(segs):
        row, offset, length = s[:3]
        field = s[3] if len(s) > 3 else False
        more = k + 1 < len(segs)
        p += struct.pack("!HHH", length, (0x8000 if field else 0) | row, (0x8000 if more else 0) | offset)
    if data is None:
        data = bytes((0x40 + i) & 0xFF for i in range(sum(s[2] for s in segs)))
    p += data
    if padding:
        p += b"\0" * (padding - 1) + bytes([padding])
    return p


def run(*packets):
    return b"".join(struct.pack("!H", len(p)) + p for p in packets)


def frame(width, height, pg_bytes, pg_pixels, ts, per_packet=3, interlaced=False, seq=0, ssrc=0x5EED,
          field_ticks=0):
    """A whole frame: each line one segment, per_packet lines a packet, the marker on each field's last."""
    line = width // pg_pixels * pg_bytes
    fields = 2 if interlaced else 1
    rows = height // fields
    out = []
    for f in range(fields):
        for r0 in range(0, rows, per_packet):
            segs = [(r, 0, line, f == 1) for r in range(r0, min(rows, r0 + per_packet))]
            out.append(rtp(segs, ts=ts + f * field_ticks, seq=seq, ssrc=ssrc,
                           marker=r0 + per_packet >= rows))
            seq += 1
    return out


def corpus():
    c = {}
    # 1080p 10-bit 4:2:2 (4800 bytes a line): a line in four packets of 1200 bytes.
    c["p1080_one_segment"] = run(rtp([(7, 480, 1200)], ts=90000))
    c["p1080_line_in_four"] = run(*(rtp([(3, 480 * k, 1200)], ts=1501, seq=k, marker=k == 3) for k in range(4)))
    c["p1080_three_segments"] = run(rtp([(0, 1600, 400), (1, 0, 200), (1, 1600, 100)], ts=3003))
    c["p1080_last_line_marker"] = run(rtp([(1079, 1440, 1200)], ts=3003, marker=True))
    c["p1080_wrap_5994"] = run(*(rtp([(k, 0, 1200)], ts=0xFFFFFFFF - 2000 + k * 1501 + k // 2, seq=k)
                                 for k in range(6)))
    c["p1080_late_and_far"] = run(rtp([(0, 0, 5)], ts=1501500), rtp([(1, 0, 5)], ts=1503001),
                                  rtp([(2, 0, 5)], ts=1501500), rtp([(3, 0, 5)], ts=1000),
                                  *(rtp([(4, 0, 5)], ts=900 + k) for k in range(17)))
    c["p1080_two_ssrcs"] = run(rtp([(0, 0, 10)], ts=100, ssrc=1), rtp([(0, 0, 10)], ts=9000000, ssrc=2),
                               rtp([(1, 0, 10)], ts=1601, ssrc=1), rtp([(0, 0, 10)], ts=5, ssrc=3))
    c["csrcs_extension_padding"] = run(rtp([(2, 0, 100)], csrcs=3, ext_words=2, padding=4))
    c["extension_empty"] = run(rtp([(2, 0, 100)], ext_words=0))
    # Interlaced 64x16 8-bit 4:2:2 (128 bytes a line, 8 rows a field), fields stamped apart.
    c["i16_whole_frame"] = run(*frame(64, 16, 4, 2, ts=3003 * 50, per_packet=3, interlaced=True,
                                      field_ticks=1502))
    c["i16_field_bits"] = run(rtp([(7, 0, 128, True)], ts=3003, marker=True), rtp([(0, 32, 64)], ts=6006))
    # RGB 100x10 8-bit (300 bytes a line): five whole lines joined, five apart.
    c["rgb_five_lines_joined"] = run(rtp([(r, 0, 300) for r in range(5)], ts=1800))
    c["rgb_five_apart"] = run(rtp([(2 * r, 0, 30) for r in range(5)], ts=1800))
    c["rgb_whole_frame"] = run(*frame(100, 10, 3, 1, ts=7200, per_packet=4))
    # 10-bit 4:4:4 64x8 (240 bytes a line, pgroups of 15 bytes / 4 pixels).
    c["yuv444_pgroups"] = run(rtp([(1, 4, 45), (5, 60, 15)], ts=3600))
    # Rejected.
    c["short"] = run(rtp([(0, 0, 10)])[:11])
    c["version_1"] = run(rtp([(0, 0, 10)], version=1))
    c["payload_type_97"] = run(rtp([(0, 0, 10)], pt=97))
    c["no_srd"] = run(rtp([]))
    c["srd_continues_past_payload"] = run(rtp([(0, 0, 10)])[:20] + b"\x80\x00\x00\x00")
    c["segment_beyond_payload"] = run(rtp([(0, 0, 10), (1, 0, 10)])[:-1])
    c["length_not_pgroups"] = run(rtp([(0, 0, 12)]))
    c["offset_not_pgroup"] = run(rtp([(0, 3, 10)]))
    c["beyond_width"] = run(rtp([(0, 1916, 15)]))
    c["beyond_rows"] = run(rtp([(1080, 0, 10)]))
    c["field_in_progressive"] = run(rtp([(0, 0, 10, True)]))
    c["padding_zero"] = run(rtp([(0, 0, 10)], padding=4)[:-1] + b"\0")
    c["csrcs_beyond"] = run(rtp([], csrcs=15)[:40])
    c["empty"] = b""
    return c


def main():
    corpus_dir.main(OUT, {name + ".bin": data for name, data in corpus().items()}, __doc__)


if __name__ == "__main__":
    main()
