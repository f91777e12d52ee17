"""GPU frames from Python: a socket loopback into pinned memory, reordered into frames in
GPU memory, handed to PyTorch and CuPy through DLPack without a copy (same device pointer),
values equal to the packets sent; a frame's buffer returns to the pipeline only when the last
tensor of it goes; SPEAD heaps (a span mode) as frames of their own size with their stream,
items and per-stream counters. Skips without a GPU, saying why (NETDAQ_REQUIRE_GPU=1: fails
instead); the names of the frame metadata and counters are checked without one."""
import gc
import struct
import time

import numpy as np
import pytest

import netdaq
from conftest import REQUIRE_GPU, free_udp_port, loopback_config, require_gpu

PPF = 64         # packets per frame
SAMPLES = 1024   # sample bytes per packet
HEADER = 8       # the sequence number in front of the samples
@pytest.fixture
def session():
    require_gpu(netdaq.gpu.device_count() > 0, netdaq.gpu.unavailable_reason() or "no GPU")
    d = loopback_config(free_udp_port(), batch=64, rx_bufs=8192)  # ring + bursts the GPU holds
    d["memory_regions"][0].update(kind="pinned", gpu=0)
    d["interfaces"][0]["rx"]["reorder"] = [{
        "queue": 0, "gpu": 0, "seq_offset": 0, "seq_bits": 64, "seq_byte_order": "little",
        "payload_offset": HEADER, "payload_size": SAMPLES, "packets_per_frame": PPF,
        "max_open_frames": 2, "frame_buffers": 4, "staging": "copy"}]
    with netdaq.Session(netdaq.Config.from_dict(d)) as s:
        yield s


def packet(seq):
    body = ((np.arange(SAMPLES, dtype=np.uint64) * 7 + seq) & 0xFF).astype(np.uint8)
    return np.concatenate([np.frombuffer(int(seq).to_bytes(8, "little"), np.uint8), body])


def send_frames(session, first_frame, frames):
    txq = session.tx_queue("sender")
    seqs = range(first_frame * PPF, (first_frame + frames) * PPF)
    rows = np.stack([packet(s) for s in seqs])
    sent, deadline = 0, time.monotonic() + 10
    while sent < len(rows) and time.monotonic() < deadline:
        sent += txq.send(rows[sent:sent + 32])
    assert sent == len(rows)


def expected(index):
    return np.stack([packet(index * PPF + j)[HEADER:] for j in range(PPF)])


def frames_of(pipe, rxq, n, timeout=10):
    out, deadline = [], time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        f = pipe.next_frame(rxq, timeout=0.2)
        if f is not None:
            out.append(f)
    return out


def test_frames_into_torch_and_cupy_without_a_copy(session):
    torch = pytest.importorskip("torch") if not REQUIRE_GPU else __import__("torch")
    cupy = pytest.importorskip("cupy") if not REQUIRE_GPU else __import__("cupy")
    rxq = session.rx_queue("receiver")
    pipe = netdaq.gpu.FramePipeline(session, "receiver")
    assert pipe.frame_bytes == PPF * SAMPLES
    send_frames(session, 0, 3)
    frames = frames_of(pipe, rxq, 2)  # frame 2 stays open until a newer frame or its timeout
    assert [f.index for f in frames] == [0, 1]
    for f in frames:
        assert f.complete and f.shape == (PPF, SAMPLES) and f.dtype == "raw" and not f.missing.any()
        assert f.__dlpack_device__() == (2, 0)
        t = torch.from_dlpack(f)
        assert t.is_cuda and t.dtype == torch.uint8 and tuple(t.shape) == (PPF, SAMPLES)
        assert t.data_ptr() == f.data_ptr  # the frame's memory, not a copy
        c = cupy.from_dlpack(f)
        assert c.data.ptr == f.data_ptr and c.dtype == cupy.uint8
        assert (t.cpu().numpy() == expected(f.index)).all()
        assert (cupy.asnumpy(c) == expected(f.index)).all()
        print(f"frame {f.index}: torch and cupy view device pointer {f.data_ptr:#x}, values equal")
    pipe.flush()
    last = frames_of(pipe, rxq, 1)
    assert last and last[0].index == 2 and (torch.from_dlpack(last[0]).cpu().numpy() == expected(2)).all()
    s = pipe.stats()
    assert s["packets_in"] == s["packets_placed"] + s["duplicate"] + s["late"] + s["malformed"] + s["no_buffer"]
    assert s["packets_placed"] == 3 * PPF and s["frames_complete"] == 3


def test_a_frame_buffer_returns_when_its_last_tensor_goes(session):
    torch = pytest.importorskip("torch") if not REQUIRE_GPU else __import__("torch")
    rxq = session.rx_queue("receiver")
    pipe = netdaq.gpu.FramePipeline(session, "receiver")
    send_frames(session, 0, 4)
    pipe_frames = frames_of(pipe, rxq, 3)
    pipe.flush()
    pipe_frames += frames_of(pipe, rxq, 1)
    assert [f.index for f in pipe_frames] == [0, 1, 2, 3]
    tensors = [torch.from_dlpack(f) for f in pipe_frames]
    for f in pipe_frames:
        f.release()
    with pytest.raises(netdaq.ReleasedError):
        pipe_frames[0].index
    del pipe_frames
    gc.collect()
    # The tensors hold all 4 frame buffers: the next frames find none (counted no_buffer).
    send_frames(session, 4, 2)
    assert frames_of(pipe, rxq, 1, timeout=1.5) == []
    held = pipe.stats()
    assert held["no_buffer"] > 0, held
    assert (tensors[3].cpu().numpy() == expected(3)).all()  # still the frame it was
    del tensors
    gc.collect()
    send_frames(session, 6, 3)
    got = frames_of(pipe, rxq, 2)
    assert [f.index for f in got] == [6, 7], pipe.stats()
    assert all((torch.from_dlpack(f).cpu().numpy() == expected(f.index)).all() for f in got)


def test_frames_need_a_gpu_or_say_why():
    if netdaq.gpu.device_count() > 0:
        assert netdaq.gpu.devices()[0]["index"] == 0
        return
    assert netdaq.gpu.unavailable_reason()
    cfg = netdaq.Config.from_dict(loopback_config(free_udp_port()))
    with netdaq.Session(cfg) as s:
        with pytest.raises(netdaq.Error) as e:
            netdaq.gpu.FramePipeline(s, "receiver", {"packets_per_frame": 8, "payload_size": 64})
        assert e.value.code in ("unsupported", "invalid_config", "resource", "not_found")


# SPEAD heaps (mode spead, docs/gpu.md): SPEAD-64-48 packets written from the spec, as
# tests/fuzz/make_spead_corpus.py does. Two senders, told apart by the immediate item 0x4200.
SPEAD_STREAM_ITEM = 0x4200
SPEAD_TIMESTAMP = 0x1600   # kept as frame metadata (frame.items)
SPEAD_FRAME_BYTES = 4096   # the largest heap; the heaps below are smaller
SPEAD_CHUNK = 1000         # payload bytes per packet (a multiple of the 8-byte granule)


def spead_packet(heap, size, offset, payload, stream, extra=()):
    items = [(1, heap), (2, size), (3, offset), (4, len(payload)), (SPEAD_STREAM_ITEM, stream)] + list(extra)
    head = struct.pack("!BBBBHH", 0x53, 4, 2, 6, 0, len(items))
    for item_id, value in items:
        head += struct.pack("!Q", (1 << 63) | (item_id << 48) | value)  # immediate, 48-bit values
    return head + payload


def heap_bytes(stream, heap, size):
    return ((np.arange(size, dtype=np.uint64) * 3 + heap * 11 + stream) & 0xFF).astype(np.uint8)


def heap_packets(stream, heap, size, only_first=False):
    body = heap_bytes(stream, heap, size).tobytes()
    out = []
    for offset in range(0, size, SPEAD_CHUNK):
        extra = [(SPEAD_TIMESTAMP, 1000 * heap + stream)] if offset == 0 else []
        out.append(spead_packet(heap, size, offset, body[offset:offset + SPEAD_CHUNK], stream, extra))
        if only_first:
            break
    return out


def send_packets(session, packets):
    txq = session.tx_queue("sender")
    width = max(len(p) for p in packets)
    rows = np.zeros((len(packets), width), np.uint8)
    for i, p in enumerate(packets):
        rows[i, :len(p)] = np.frombuffer(p, np.uint8)
    sizes = [len(p) for p in packets]
    sent, deadline = 0, time.monotonic() + 10
    while sent < len(rows) and time.monotonic() < deadline:
        sent += txq.send(rows[sent:sent + 32], sizes[sent:sent + 32])
    assert sent == len(rows)


@pytest.fixture
def spead_session():
    require_gpu(netdaq.gpu.device_count() > 0, netdaq.gpu.unavailable_reason() or "no GPU")
    d = loopback_config(free_udp_port(), batch=64, rx_bufs=8192)
    d["memory_regions"][0].update(kind="pinned", gpu=0)
    d["interfaces"][0]["rx"]["reorder"] = [{
        "queue": 0, "gpu": 0, "mode": "spead", "spead": {"stream_item": SPEAD_STREAM_ITEM},
        "frame_bytes": SPEAD_FRAME_BYTES, "max_streams": 2, "max_open_frames": 2, "frame_buffers": 8,
        "staging": "copy"}]
    with netdaq.Session(netdaq.Config.from_dict(d)) as s:
        yield s


def test_the_names_of_frame_metadata_and_counters():
    """Without a GPU too: every key of the C++ structs, and the Frame properties."""
    assert set(netdaq.gpu.PIPELINE_STATS_KEYS) >= {
        "packets_in", "packets_placed", "duplicate", "late", "malformed", "control", "no_stream", "no_buffer",
        "frames_complete", "frames_incomplete", "frames_skipped", "frames_dropped", "packets_missing",
        "bytes_missing", "bytes_to_gpu", "jobs", "waits", "wait_ns", "gpu_errors"}
    assert netdaq.gpu.STREAM_STATS_KEYS == (
        "stream", "packets", "packets_placed", "duplicate", "late", "no_buffer", "malformed", "frames_complete",
        "frames_incomplete", "frames_skipped", "frames_dropped", "bytes_missing")
    assert netdaq.gpu.FRAME_INFO_KEYS == (
        "index", "stream", "bytes", "bytes_expected", "bytes_received", "expected", "received", "granule",
        "has_timestamp", "timestamp", "timestamp_frac")
    for name in ("stream", "bytes_expected", "bytes_received", "granule", "timestamp", "timestamp_frac", "items",
                 "info", "shape", "missing", "nbytes"):
        assert isinstance(getattr(netdaq.gpu.Frame, name), property), name
    assert callable(netdaq.gpu.FramePipeline.stream_stats)


def test_spead_heaps_become_frames_of_their_own_size(spead_session):
    torch = pytest.importorskip("torch") if not REQUIRE_GPU else __import__("torch")
    rxq = spead_session.rx_queue("receiver")
    pipe = netdaq.gpu.FramePipeline(spead_session, "receiver")
    assert pipe.frame_bytes == SPEAD_FRAME_BYTES and pipe.config.mode == "spead"
    heaps = {(1, 1): 3000, (1, 2): 3000, (2, 7): 1504}  # (stream, heap): heap size
    packets = [p for (stream, heap), size in heaps.items() for p in heap_packets(stream, heap, size)]
    packets += heap_packets(1, 3, 3000, only_first=True)  # heap 3 of stream 1 stays incomplete
    packets.append(spead_packet(9, 0, 0, b"", 2, [(6, 2)]))  # stream 2 stops: control, no bytes
    packets.append(spead_packet(1, 64, 0, bytes(64), 5))  # a third stream: beyond max_streams
    send_packets(spead_session, packets)
    frames = frames_of(pipe, rxq, 3)
    pipe.flush()
    frames += frames_of(pipe, rxq, 1)
    by_key = {(f.stream, f.index): f for f in frames}
    assert sorted(by_key) == [(1, 1), (1, 2), (1, 3), (2, 7)], [(f.stream, f.index) for f in frames]
    for (stream, heap), size in heaps.items():
        f = by_key[(stream, heap)]
        # The frame is the heap: a 1-D tensor of its own bytes, not of the buffer's frame_bytes.
        assert f.complete and f.nbytes == size and f.shape == (size,) and f.granule == 8
        assert (f.bytes_expected, f.bytes_received) == (size, size)
        assert f.items == {SPEAD_TIMESTAMP: 1000 * heap + stream} and f.timestamp is None
        assert f.info["stream"] == stream and f.info["bytes"] == size and not f.info["has_timestamp"]
        t = torch.from_dlpack(f)
        assert tuple(t.shape) == (size,) and t.dtype == torch.uint8 and t.data_ptr() == f.data_ptr
        assert (t.cpu().numpy() == heap_bytes(stream, heap, size)).all()
    part = by_key[(1, 3)]
    assert not part.complete and (part.bytes_expected, part.bytes_received) == (3000, SPEAD_CHUNK)
    missing = part.missing
    assert len(missing) == 3000 // 8 and not missing[:SPEAD_CHUNK // 8].any() and missing[SPEAD_CHUNK // 8:].all()
    got = torch.from_dlpack(part).cpu().numpy()
    assert (got[:SPEAD_CHUNK] == heap_bytes(1, 3, 3000)[:SPEAD_CHUNK]).all() and not got[SPEAD_CHUNK:].any()

    s = pipe.stats()
    assert s["packets_in"] == len(packets)
    assert s["packets_in"] == (s["packets_placed"] + s["duplicate"] + s["late"] + s["malformed"] + s["no_buffer"]
                               + s["control"] + s["no_stream"]), s
    assert (s["control"], s["no_stream"], s["malformed"]) == (1, 1, 0), s
    assert pipe.last_malformed == ""
    assert (s["frames_complete"], s["frames_incomplete"], s["bytes_missing"]) == (3, 1, 3000 - SPEAD_CHUNK), s
    streams = {st["stream"]: st for st in pipe.stream_stats()}
    assert sorted(streams) == [1, 2] and all(tuple(st) == netdaq.gpu.STREAM_STATS_KEYS for st in streams.values())
    assert (streams[1]["frames_complete"], streams[1]["frames_incomplete"], streams[1]["bytes_missing"]) == (
        2, 1, 3000 - SPEAD_CHUNK)
    assert streams[2]["frames_complete"] == 1 and streams[2]["packets_placed"] == 2


def test_slot_mode_frames_keep_their_rows_and_no_stream_stats(session):
    rxq = session.rx_queue("receiver")
    pipe = netdaq.gpu.FramePipeline(session, "receiver")
    send_frames(session, 0, 2)
    f = frames_of(pipe, rxq, 1)[0]
    assert f.shape == (PPF, SAMPLES) and f.stream == 0 and f.items == {} and f.timestamp is None
    assert (f.granule, f.bytes_expected, f.bytes_received) == (SAMPLES, PPF * SAMPLES, PPF * SAMPLES)
    assert pipe.stream_stats() == []
    s = pipe.stats()
    assert (s["control"], s["no_stream"], s["bytes_missing"]) == (0, 0, 0)
