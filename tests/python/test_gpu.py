"""GPU frames from Python: a socket loopback into pinned memory, reordered into frames in
GPU memory, handed to PyTorch and CuPy through DLPack without a copy (same device pointer),
values equal to the packets sent; a frame's buffer returns to the pipeline only when the last
tensor of it goes. Skips without a GPU, saying why (NETDAQ_REQUIRE_GPU=1: fails instead)."""
import gc
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
