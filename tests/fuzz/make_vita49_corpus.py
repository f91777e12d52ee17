#!/usr/bin/env python3
"""Writes the seed corpus of the VITA-49 fuzzer (tests/fuzz/vita49_corpus/*.bin).

Each file is one UDP payload, a VRT packet (VITA-49.2, 32-bit big-endian words): signal and
extension data with and without stream id, class id, trailer, every TSI and TSF, packets
that cross frame boundaries, context and command packets, and packets the decoder must
reject (truncated, a size beyond the datagram or smaller than its headers, a reserved type,
a real-time timestamp, payloads that are not whole samples, too many frames, timestamps
whose sample index overflows).

    tests/fuzz/make_vita49_corpus.py          # (re)write the corpus
    tests/fuzz/make_vita49_corpus.py --check  # exit 1 if the committed files differ
"""
import pathlib
import struct

import corpus_dir

OUT = pathlib.Path(__file__).resolve().parent / "vita49_corpus"

TSI_NONE, TSI_UTC, TSI_GPS, TSI_OTHER = 0, 1, 2, 3
TSF_NONE, TSF_SAMPLES, TSF_REAL_TIME, TSF_FREE_RUNNING = 0, 1, 2, 3


def has_stream_id(ptype):
    return ptype in (1, 3) or 4 <= ptype <= 7


def vrt(ptype=1, sid=0x1000, class_id=False, trailer=False, tsi=TSI_NONE, tsf=TSF_SAMPLES,
        ts_int=0, ts_frac=0, count=0, payload=b"", size=None, extra=b""):
    """One VRT packet; size overrides the header's size in words, extra follows the packet."""
    body = b""
    if has_stream_id(ptype):
        body += struct.pack("!I", sid)
    if class_id:
        body += struct.pack("!II", 0x0012A2, 0x00010002)
    if tsi:
        body += struct.pack("!I", ts_int)
    if tsf:
        body += struct.pack("!Q", ts_frac)
    payload += b"\0" * (-len(payload) % 4)
    body += payload
    if trailer:
        body += struct.pack("!I", 0x000C0005)
    words = 1 + len(body) // 4 if size is None else size
    header = (ptype << 28 | class_id << 27 | trailer << 26 | tsi << 22 | tsf << 20
              | (count & 15) << 16 | (words & 0xFFFF))
    return struct.pack("!I", header) + body + extra


def samples(n, sample_bytes=4, seed=1):
    return bytes((seed * 37 + i * 11) & 0xFF for i in range(n * sample_bytes))


def corpus():
    c = {}
    c["signal_sid_one_frame"] = vrt(payload=samples(8))
    c["signal_no_sid"] = vrt(ptype=0, payload=samples(8))
    c["extension_data_sid"] = vrt(ptype=3, payload=samples(4))
    c["extension_data_no_sid"] = vrt(ptype=2, payload=samples(4))
    c["class_id_trailer"] = vrt(class_id=True, trailer=True, payload=samples(16))
    c["utc_sample_count"] = vrt(tsi=TSI_UTC, ts_int=1700000000, ts_frac=999, payload=samples(12))
    c["gps_sample_count_all"] = vrt(class_id=True, trailer=True, tsi=TSI_GPS, ts_int=1400000000,
                                    ts_frac=12, count=15, payload=samples(30))
    c["other_free_running"] = vrt(tsi=TSI_OTHER, tsf=TSF_FREE_RUNNING, ts_int=5, ts_frac=1 << 40,
                                  payload=samples(10))
    c["free_running_no_tsi"] = vrt(tsf=TSF_FREE_RUNNING, ts_frac=123456789, payload=samples(20))
    c["crosses_two_frames"] = vrt(ts_frac=10, payload=samples(12))
    c["crosses_four_frames"] = vrt(ts_frac=0, payload=samples(64))
    c["crosses_five_frames"] = vrt(ts_frac=10, payload=samples(64))
    c["eight_byte_samples"] = vrt(ts_frac=3, payload=samples(20, 8))
    c["twelve_byte_samples"] = vrt(ts_frac=5, payload=samples(7, 12))
    c["not_whole_samples"] = vrt(payload=samples(3))  # 12 bytes: 1.5 samples of 8
    c["empty_payload"] = vrt()
    c["header_only_no_sid"] = vrt(ptype=0, tsf=TSF_NONE)
    c["padding_after_packet"] = vrt(payload=samples(4), extra=b"\xee" * 12)
    c["context"] = vrt(ptype=4, sid=0x80001000, tsi=TSI_UTC, ts_int=1700000000,
                       payload=struct.pack("!IQ", 1 << 21, 1000 << 20))
    c["extension_context_class_id"] = vrt(ptype=5, class_id=True, payload=struct.pack("!I", 0))
    c["command"] = vrt(ptype=6, tsf=TSF_REAL_TIME, payload=struct.pack("!II", 0, 0))
    c["extension_command"] = vrt(ptype=7, payload=struct.pack("!I", 0))
    c["reserved_type"] = vrt(ptype=8, payload=samples(4))
    c["real_time_timestamp"] = vrt(tsf=TSF_REAL_TIME, ts_frac=500000000000, payload=samples(4))
    c["no_fractional_timestamp"] = vrt(tsi=TSI_UTC, tsf=TSF_NONE, payload=samples(4))
    c["size_beyond_datagram"] = vrt(payload=samples(4), size=0xFFFF)
    c["size_zero"] = vrt(payload=samples(4), size=0)
    c["size_smaller_than_headers"] = vrt(class_id=True, trailer=True, tsi=TSI_UTC, size=5)
    c["truncated_in_headers"] = vrt(class_id=True, tsi=TSI_UTC, payload=samples(4))[:14]
    c["truncated_in_payload"] = vrt(payload=samples(16))[:40]
    c["three_bytes"] = vrt(payload=samples(1))[:3]
    c["empty"] = b""
    c["seconds_overflow"] = vrt(tsi=TSI_UTC, ts_int=0xFFFFFFFF, ts_frac=0, payload=samples(2))
    c["sample_index_overflow"] = vrt(ts_frac=(1 << 64) - 1, payload=samples(2))
    c["trailer_bit_in_context"] = vrt(ptype=4, trailer=True, payload=struct.pack("!I", 0))
    c["max_size_packet"] = vrt(payload=samples(16000))
    return c


def main():
    corpus_dir.main(OUT, {name + ".bin": data for name, data in corpus().items()}, __doc__)


if __name__ == "__main__":
    main()
