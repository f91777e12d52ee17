#!/usr/bin/env python3
"""Writes the seed corpus of the span fuzzer (tests/fuzz/span_corpus/*.bin).

Each file is a SpanTracker config and a stream of actions in span_fuzz.cpp's encoding (its
header comment): packets of one span on granules in order (place_hot's case), spans straddling
frames, markers, said frame sizes (and a said size beyond the config's), reordered and
duplicated spans, late and skipped frames, several streams and more than max_streams, narrow
frame counters wrapping, absolute frame numbers and offsets, zero-length and unaligned spans,
granules that are not powers of two with a short last granule, timeouts, no free buffer,
releases and close_all before more packets; and the bugs span_fuzz.cpp found and src fixed
(known_bug_*.bin: their regressions).

    tests/fuzz/make_span_corpus.py          # (re)write the corpus
    tests/fuzz/make_span_corpus.py --check  # exit 1 if the committed files differ
"""
import pathlib
import struct

import corpus_dir

OUT = pathlib.Path(__file__).resolve().parent / "span_corpus"

GRANULES = [1, 2, 3, 4, 5, 7, 8, 12, 16, 24, 32, 64, 100, 128, 256, 1000]
BITS = {8: 0, 16: 1, 32: 2, 64: 3}


def config(frame_bytes_byte, granule, max_open=4, max_streams=1, extra_buffers=0, timeout_byte=9, big=False, bits=64):
    """frame_bytes = (frame_bytes_byte + 1) (x 37 when big)."""
    return bytes([frame_bytes_byte, (0x80 if big else 0) | GRANULES.index(granule),
                  (max_open - 1) | ((max_streams - 1) << 3) | (BITS[bits] << 5), extra_buffers, timeout_byte])


def span(delta=0, granule_at=0, granules=1, frame=None, offset=None, raw_bytes=None, bytes32=None):
    """A frame byte (previous + delta, -4..11, or an absolute frame), an offset byte (a granule
    index, or an absolute offset) and a length byte (1..8 granules, raw 0..111 bytes, or 32 bits)."""
    out = bytes([delta + 4]) if frame is None else b"\xf0" + struct.pack("<Q", frame)
    out += bytes([granule_at]) if offset is None else b"\xf0" + struct.pack("<Q", offset)
    if bytes32 is not None:
        out += b"\xf0" + struct.pack("<I", bytes32)
    elif raw_bytes is not None:
        out += bytes([0x80 + raw_bytes])
    else:
        out += bytes([granules - 1])
    return out


def packet(spans, stream=0, marker=False, timestamp=False, items=None, said=None):
    """said: the packet's frame_bytes in granules (0..255)."""
    h = len(spans) | (0x20 if marker else 0) | (0x40 if timestamp else 0) | (0x80 if items else 0)
    out = bytes([0x00, h])
    if items:
        out += bytes([items])
    out += bytes([stream | (0x80 if said is not None else 0)])
    if said is not None:
        out += bytes([said])
    return out + b"".join(spans)


def advance(n):  # time passes, expire
    return bytes([0xa0 + n])


def release(n=0):
    return bytes([0xc0 + n])


RELEASE_ALL = b"\xe0"
CLOSE_ALL = b"\xf0"


def in_order(frames, granules_per_frame, per_packet=1, **kw):
    out = b""
    for f in range(frames):
        for g in range(0, granules_per_frame, per_packet):
            out += packet([span(1 if (g == 0 and f) else 0, g, per_packet)], **kw)
    return out


def corpus():
    # 64 bytes, granule 8: 8 granules per frame.
    yield "hot_in_order", config(63, 8) + in_order(3, 8) + RELEASE_ALL
    yield "hot_two_granules", config(63, 8) + in_order(4, 8, 2, timestamp=True) + RELEASE_ALL
    yield "one_granule_frames", config(7, 8, max_open=2) + in_order(6, 1) + RELEASE_ALL
    yield "granule_one", config(15, 1, max_open=2) + in_order(2, 16, 4)
    yield "big_frame", config(255, 64, big=True) + in_order(1, 148, 8) + packet([span(1, 0, 8)])
    # Granules that are not powers of two: 100 bytes of granule 3 (a short last granule).
    yield "granule_3_short_last", config(99, 3) + in_order(2, 34, 8)
    yield "granule_100", config(249, 100) + in_order(3, 3) + RELEASE_ALL
    yield "granule_7_tail", config(20, 7) + packet([span(0, 2, 1)]) + packet([span(0, 0, 2)])
    yield "granule_1000_frame_smaller", config(99, 1000) + packet([span(0, 0, 1)]) + packet([span(1, 0, 1)])
    # Several spans per packet, straddling frames (VITA-49 style).
    yield "straddle", config(63, 8) + b"".join(
        packet([span(0, 6, 2), span(1, 0, 6)]) + packet([span(0, 6, 2), span(1, 0, 6)]) for _ in range(4))
    yield "four_spans", config(63, 8) + packet([span(0, 0), span(0, 1), span(0, 2), span(0, 3)]) + \
        packet([span(0, 4, 4), span(1, 0, 4), span(0, 4, 4), span(1, 0, 8)])
    yield "no_spans", config(63, 8) + packet([]) + packet([], stream=1) + packet([span(0, 0, 8)])
    # Markers end a frame (its size from the last span when not said).
    yield "marker_ends_frame", config(63, 8) + packet([span(0, 0, 2)]) + packet([span(0, 2, 2)], marker=True) + \
        packet([span(1, 0, 2)]) + packet([span(0, 2, 1)], marker=True) + packet([span(0, 3, 1)])
    yield "marker_out_of_order", config(63, 8) + packet([span(0, 3, 1)], marker=True) + packet([span(0, 0, 3)]) + \
        packet([span(0, 1, 1)])
    yield "marker_mid_packet", config(63, 8) + packet([span(0, 0, 2), span(1, 0, 2)], marker=True) + \
        packet([span(0, 2, 6)])
    # Said frame sizes (SPEAD heap size): consistent, changing, beyond the config's, zero.
    yield "said_size", config(63, 8) + packet([span(0, 0, 2)], said=4) + packet([span(0, 2, 2)], said=4) + \
        packet([span(1, 0, 2)], said=6)
    yield "said_size_changes", config(63, 8) + packet([span(0, 0, 2)], said=4) + packet([span(0, 2, 2)], said=5)
    yield "said_size_too_big", config(63, 8) + packet([span(0, 0, 2)], said=9) + packet([span(1, 0, 2)], said=255)
    yield "said_size_after_spans", config(63, 8) + packet([span(0, 4, 2)]) + packet([span(0, 0, 2)], said=4)
    yield "items_and_timestamps", config(63, 8) + packet([span(0, 2, 2)], timestamp=True, items=0x13) + \
        packet([span(0, 0, 2)], timestamp=True, items=0xfe) + packet([span(0, 4, 4)], timestamp=True, items=0x40)
    # Reordered, duplicated, late, skipped.
    yield "reorder_dup", config(63, 8) + packet([span(0, 3)]) + packet([span(0, 1)]) + packet([span(0, 3)]) + \
        packet([span(0, 0, 2)]) + packet([span(0, 1, 3)]) + packet([span(1, 0)]) + packet([span(-1, 4, 4)])
    yield "late", config(63, 8, max_open=2) + packet([span(0, 0)]) + packet([span(5, 0)]) + \
        packet([span(-4, 1)]) + packet([span(-1, 1)])
    yield "skip_far", config(63, 8, max_open=3) + packet([span(0, 0)]) + packet([span(0, 0)]) + \
        packet([span(frame=1000, granule_at=0)]) + packet([span(frame=999, granule_at=0)]) + \
        packet([span(frame=5000, granule_at=7)])
    yield "start_out_of_order", config(63, 8, max_open=4) + packet([span(frame=10, granule_at=0)]) + \
        packet([span(-3, 0)]) + packet([span(-1, 0)]) + packet([span(frame=7, granule_at=1)])
    # Narrow frame counters wrap.
    yield "wrap_8bit", config(15, 4, bits=8) + packet([span(frame=250, granule_at=0)]) + b"".join(
        packet([span(1, 0, 4)]) for _ in range(10)) + packet([span(-2, 1)])
    yield "wrap_16bit", config(15, 4, bits=16) + packet([span(frame=0xfffe, granule_at=0)]) + \
        packet([span(1, 0)]) + packet([span(1, 0)]) + packet([span(1, 0)])
    yield "narrow_before_first", config(15, 4, bits=8) + packet([span(frame=3, granule_at=0)]) + \
        packet([span(frame=200, granule_at=0)])
    yield "huge_frames", config(15, 4) + packet([span(frame=(1 << 63) + 5, granule_at=0)]) + \
        packet([span(1, 1)]) + packet([span(frame=(1 << 62), granule_at=0)])
    yield "frames_32bit", config(31, 4, bits=32) + packet([span(frame=0xfffffffe, granule_at=0)]) + \
        packet([span(1, 0, 8)]) + packet([span(1, 0, 8)]) + packet([span(-2, 3)])
    # Bad spans: past the frame, unaligned, zero bytes, offsets near 2^64, 32-bit lengths.
    yield "bad_spans", config(63, 8) + packet([span(0, 8)]) + packet([span(0, 0, raw_bytes=0)]) + \
        packet([span(0, 0, raw_bytes=5)]) + packet([span(0, offset=3, raw_bytes=8)]) + \
        packet([span(0, 0, bytes32=0xffffffff)]) + packet([span(0, offset=60, raw_bytes=4)])
    yield "offset_near_2_64", config(63, 8) + packet([span(0, 0)]) + \
        packet([span(0, offset=(1 << 64) - 8, bytes32=16)]) + packet([span(0, offset=(1 << 64) - 8, raw_bytes=8)])
    # Streams: several, and more than max_streams (no_stream).
    yield "two_streams", config(63, 8, max_streams=2) + b"".join(
        packet([span(0, g)], stream=0) + packet([span(0, g)], stream=1) for g in range(8))
    yield "too_many_streams", config(63, 8, max_streams=2) + b"".join(
        packet([span(0, 0)], stream=s) for s in range(6)) + packet([span(1, 0)], stream=1)
    yield "four_streams_interleaved", config(31, 4, max_open=2, max_streams=4, extra_buffers=3) + b"".join(
        packet([span(1 if g == 0 else 0, g, 2)], stream=s) for f in range(3) for g in (0, 2) for s in range(4))
    # Time: timeouts close old frames.
    yield "timeouts", config(63, 8, timeout_byte=0) + packet([span(0, 0)]) + advance(9) + packet([span(1, 0)]) + \
        packet([span(1, 0)]) + advance(31) + advance(31) + packet([span(-2, 3)])
    yield "expire_partial", config(63, 8, timeout_byte=3) + packet([span(0, 0)]) + advance(4) + packet([span(1, 0)]) + \
        advance(5) + packet([span(1, 0)]) + advance(31)
    # Buffers: the application holds frames; none free; releases; close_all mid-stream.
    yield "no_free_buffer", config(7, 8, max_open=2) + b"".join(packet([span(1, 0)]) for _ in range(5)) + \
        release(1) + packet([span(1, 0)]) + RELEASE_ALL + packet([span(1, 0)])
    yield "hold_and_release", config(15, 8, max_open=2, extra_buffers=2) + b"".join(
        packet([span(1, 0, 2)]) + release(k) for k in range(6))
    yield "release_none_held", config(15, 8) + release(5) + packet([span(0, 0)]) + release(31)
    # The bugs span_fuzz.cpp found (fixed in SpanTracker): regressions.
    yield "known_bug_offset_wraps", config(63, 8) + packet([span(0, 0)]) + \
        packet([span(0, offset=(1 << 64) - 8, bytes32=16)])
    yield "known_bug_offset_wraps_hot", config(63, 1) + packet([span(0, 0, 8)]) + \
        packet([span(0, offset=(1 << 64) - 8, bytes32=16)])
    yield "known_bug_marker_shrinks", config(63, 8) + packet([span(0, 4)]) + packet([span(0, 1)], marker=True)
    yield "known_bug_said_shrinks", config(63, 8) + packet([span(0, 4)]) + packet([span(0, 1)], said=2)
    yield "known_bug_marker_shrinks_in_packet", config(63, 8) + packet([span(0, 4), span(0, 0)], marker=True)
    yield "known_bug_frame_wraps", config(63, 8) + packet([span(frame=(1 << 64) - 1, granule_at=0)])
    yield "close_all_then_more", config(63, 8) + packet([span(0, 0)]) + packet([span(1, 2)]) + CLOSE_ALL + \
        packet([span(0, 1)]) + packet([span(1, 0)]) + CLOSE_ALL + CLOSE_ALL + packet([span(1, 3)])


def main():
    corpus_dir.main(OUT, {name + ".bin": data for name, data in corpus()}, __doc__)


if __name__ == "__main__":
    main()
