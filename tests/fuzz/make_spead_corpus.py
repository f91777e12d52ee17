#!/usr/bin/env python3
"""Writes the seed corpus of the SPEAD fuzzer (tests/fuzz/spead_corpus/*.bin).

Each file is one UDP payload, written from the SPEAD protocol document (rev. 1, 2012): an
8-byte header (magic 0x53, version 4, ItemPointerWidth, HeapAddrWidth, 2 reserved bytes, the
number of items), 64-bit big-endian item pointers (top bit immediate, then the item id, then
HeapAddrWidth bytes of value or heap address), then the payload. Packets the decoder must
place (SPEAD-64-48 and -64-40, first / middle / last packets of a heap, pointers in any order,
the stream item 0x4200 that spead_fuzz.cpp configures, metadata items, more items than it
keeps, no heap size, padding after the payload, a stream stop, an empty heap) and packets it
must reject (each malformed case of src/protocols/spead.cpp).

    tests/fuzz/make_spead_corpus.py          # (re)write the corpus
    tests/fuzz/make_spead_corpus.py --check  # exit 1 if the committed files differ
"""
import pathlib
import random
import struct

import corpus_dir

OUT = pathlib.Path(__file__).resolve().parent / "spead_corpus"

HEAP_COUNTER, HEAP_SIZE, HEAP_OFFSET, PAYLOAD_LENGTH, STREAM_CONTROL = 1, 2, 3, 4, 6
STREAM_STOP = 2
STREAM_ITEM = 0x4200  # spead_fuzz.cpp's
TIMESTAMP = 0x1600


def imm(item_id, value):
    return (True, item_id, value)


def addr(item_id, address):
    return (False, item_id, address)


def packet(pointers, payload=b"", address_bits=48, magic=0x53, version=4, widths=None, count=None):
    heap_width = address_bits // 8
    widths = widths or (8 - heap_width, heap_width)
    count = len(pointers) if count is None else count
    out = struct.pack("!BBBBHH", magic, version, widths[0], widths[1], 0, count)
    mask = (1 << address_bits) - 1
    for immediate, item_id, value in pointers:
        word = (int(immediate) << 63) | ((item_id << address_bits) & ((1 << 63) - 1)) | (value & mask)
        out += struct.pack("!Q", word)
    return out + payload


def heap_packet(heap, size, offset, length, extra=(), address_bits=48, heap_size=True, padding=0, rng=None):
    pointers = [imm(HEAP_COUNTER, heap)]
    if heap_size:
        pointers.append(imm(HEAP_SIZE, size))
    pointers += [imm(HEAP_OFFSET, offset), imm(PAYLOAD_LENGTH, length)] + list(extra)
    rng = rng or random.Random(heap * 7919 + offset)
    payload = bytes(rng.randrange(256) for _ in range(length))
    return packet(pointers, payload + bytes(padding), address_bits)


def valid():
    for bits in (48, 40):
        flavour = "64_%d" % bits
        yield flavour + "_first_of_heap", heap_packet(1, 3000, 0, 1400, [imm(STREAM_ITEM, 0), imm(TIMESTAMP, 123456789),
                                                                       addr(0x1800, 0)], bits)
        yield flavour + "_middle_of_heap", heap_packet(1, 3000, 1400, 1400, [imm(STREAM_ITEM, 0)], bits)
        yield flavour + "_last_of_heap", heap_packet(1, 3000, 2800, 200, [imm(STREAM_ITEM, 0)], bits)
        yield flavour + "_widest_values", heap_packet((1 << bits) - 1, (1 << bits) - 1, (1 << bits) - 101, 100,
                                                      [imm((1 << (63 - bits)) - 1, (1 << bits) - 1)], bits)
    yield "shuffled_pointers", packet([imm(PAYLOAD_LENGTH, 64), imm(STREAM_ITEM, 2), imm(HEAP_OFFSET, 64),
                                       imm(TIMESTAMP, 99), imm(HEAP_COUNTER, 42), imm(HEAP_SIZE, 333)], bytes(range(64)))
    yield "no_heap_size", heap_packet(5, 0, 4096, 512, [imm(STREAM_ITEM, 1)], heap_size=False)
    yield "padding_after_payload", heap_packet(6, 1000, 0, 100, padding=28)
    yield "many_items", heap_packet(7, 256, 0, 256, [imm(0x1000 + k, k) for k in range(20)])
    yield "null_and_descriptor_items", heap_packet(8, 64, 0, 64, [imm(0, 0), addr(5, 0), imm(5, 1)])
    yield "stream_stop", packet([imm(HEAP_COUNTER, 9), imm(HEAP_SIZE, 0), imm(HEAP_OFFSET, 0), imm(PAYLOAD_LENGTH, 0),
                                 imm(STREAM_CONTROL, STREAM_STOP), imm(STREAM_ITEM, 3)])
    yield "empty_heap", heap_packet(10, 0, 0, 0)
    yield "odd_sizes", heap_packet(11, 7919, 4099, 1427, [imm(STREAM_ITEM, 2), imm(TIMESTAMP, 1 << 40)])
    yield "heap_counter_zero", heap_packet(0, 17, 0, 17)


def malformed():
    good = heap_packet(3, 1000, 100, 64)
    yield "empty", b""
    yield "seven_bytes", good[:7]
    yield "header_only", good[:8]
    yield "bad_magic", b"\x54" + good[1:]
    yield "bad_version", good[:1] + b"\x03" + good[2:]
    yield "widths_not_8", packet([imm(HEAP_COUNTER, 1)], widths=(3, 6))
    yield "flavour_64_32", packet([imm(HEAP_COUNTER, 1)], widths=(4, 4))
    yield "count_beyond_packet", packet([imm(HEAP_COUNTER, 1), imm(HEAP_OFFSET, 0), imm(PAYLOAD_LENGTH, 0)], count=9)
    yield "count_65535", packet([imm(HEAP_COUNTER, 1)], count=0xFFFF)
    yield "truncated_pointer", good[:8 + 8 * 3 + 5]
    yield "no_heap_counter", packet([imm(HEAP_OFFSET, 0), imm(PAYLOAD_LENGTH, 4)], b"abcd")
    yield "heap_counter_absolute", packet([addr(HEAP_COUNTER, 1), imm(HEAP_OFFSET, 0), imm(PAYLOAD_LENGTH, 4)], b"abcd")
    yield "no_heap_offset", packet([imm(HEAP_COUNTER, 1), imm(PAYLOAD_LENGTH, 4)], b"abcd")
    yield "no_payload_length", packet([imm(HEAP_COUNTER, 1), imm(HEAP_OFFSET, 0)], b"abcd")
    yield "payload_length_beyond_packet", packet([imm(HEAP_COUNTER, 1), imm(HEAP_OFFSET, 0), imm(PAYLOAD_LENGTH, 5)],
                                                 b"abcd")
    yield "payload_outside_heap", heap_packet(4, 1000, 990, 64)
    yield "offset_outside_heap", heap_packet(4, 1000, (1 << 48) - 1, 1)


def corpus():
    yield from valid()
    yield from malformed()


def main():
    corpus_dir.main(OUT, {name + ".bin": data for name, data in corpus()}, __doc__)


if __name__ == "__main__":
    main()
