"""ST 2110-20 video frames from Python: RFC 4175 packets built here (one line a packet, 8-bit
YCbCr-4:2:2), sent over socket loopback into a GPU pipeline of mode rtp_video that unpacks
each frame (rx.reorder.video.unpack): the frame's tensor (torch) has the video's shape (height,
width / 2, 4) and holds the bytes sent, frame.planes are Y, Cb, Cr arrays (cupy) equal to the
samples sent, and frame.lines_missing marks exactly the line dropped. GPU tests skip
without a GPU, saying why (NETDAQ_REQUIRE_GPU=1: fails instead); the config key is checked
without one."""
import struct
import time

import numpy as np
import pytest

import netdaq
from conftest import REQUIRE_GPU, free_udp_port, loopback_config, require_gpu

WIDTH, HEIGHT = 64, 8
LINE = WIDTH // 2 * 4  # 8-bit 4:2:2: 4-byte pgroups of 2 pixels
DROPPED = (1, 3)       # frame 1 loses line 3


def frame_bytes(index):
    rng = np.random.default_rng(2110 + index)
    return rng.integers(0, 256, size=(HEIGHT, LINE), dtype=np.uint8)


def rtp_packets(frames):
    """One packet per line (RFC 4175: RTP header, extended sequence, one SRD), marker on the last."""
    rows, seq = [], 0
    for f in range(frames):
        data = frame_bytes(f)
        for line in range(HEIGHT):
            seq += 1
            if (f, line) == DROPPED:
                continue
            marker = 0x80 if line == HEIGHT - 1 else 0
            head = struct.pack("!BBHII", 0x80, marker | 96, seq & 0xFFFF, f * 1500, 0x2110)
            head += struct.pack("!HHHH", seq >> 16, LINE, line & 0x7FFF, 0)  # ext seq, SRD
            rows.append(np.concatenate([np.frombuffer(head, np.uint8), data[line]]))
    return np.stack(rows)


def test_unpack_key_from_python_without_a_gpu():
    v = netdaq.VideoOptions(width=WIDTH, height=HEIGHT, depth=8, exactframerate="60", unpack="fp16")
    assert v.unpack == "fp16"
    assert netdaq.VideoOptions().unpack == "none"
    with pytest.raises(ValueError, match="none, uint16, fp16"):
        netdaq.VideoOptions(unpack="float32")
    r = netdaq.ReorderConfig(mode="rtp_video", video={"width": WIDTH, "height": HEIGHT, "unpack": "uint16"})
    assert r.video.unpack == "uint16"


@pytest.fixture
def session():
    require_gpu(netdaq.gpu.device_count() > 0, netdaq.gpu.unavailable_reason() or "no GPU")
    d = loopback_config(free_udp_port(), batch=64, rx_bufs=8192)
    d["memory_regions"][0].update(kind="pinned", gpu=0)
    d["interfaces"][0]["rx"]["reorder"] = [{
        "queue": 0, "gpu": 0, "mode": "rtp_video", "max_open_frames": 2, "frame_buffers": 4,
        "staging": "copy", "frame_timeout_us": 200000,
        "video": {"width": WIDTH, "height": HEIGHT, "sampling": "YCbCr-4:2:2", "depth": 8,
                  "exactframerate": "60", "unpack": "uint16"}}]
    with netdaq.Session(netdaq.Config.from_dict(d)) as s:
        yield s


def test_video_frames_planes_and_missing_lines(session):
    torch = pytest.importorskip("torch") if not REQUIRE_GPU else __import__("torch")
    cupy = pytest.importorskip("cupy") if not REQUIRE_GPU else __import__("cupy")  # uint16 planes
    rxq = session.rx_queue("receiver")
    pipe = netdaq.gpu.FramePipeline(session, "receiver")
    rows = rtp_packets(3)
    txq, sent, deadline = session.tx_queue("sender"), 0, time.monotonic() + 10
    while sent < len(rows) and time.monotonic() < deadline:
        sent += txq.send(rows[sent:sent + 32])
    assert sent == len(rows)
    frames, deadline = [], time.monotonic() + 10
    while len(frames) < 3 and time.monotonic() < deadline:
        f = pipe.next_frame(rxq, timeout=0.2)
        if f is not None:
            frames.append(f)
    assert len(frames) == 3, pipe.stats()
    for i, f in enumerate(frames):
        want = frame_bytes(i)
        lost = np.zeros(HEIGHT, bool)
        if i == DROPPED[0]:
            want[DROPPED[1]] = 0
            lost[DROPPED[1]] = True
        assert f.complete == (i != DROPPED[0])
        assert f.shape == (HEIGHT, WIDTH // 2, 4)
        assert f.lines_missing.dtype == np.bool_ and (f.lines_missing == lost).all(), f.lines_missing
        t = torch.from_dlpack(f)
        assert t.dtype == torch.uint8 and tuple(t.shape) == (HEIGHT, WIDTH // 2, 4) and t.data_ptr() == f.data_ptr
        got = t.cpu().numpy()
        assert (got.reshape(HEIGHT, LINE) == want).all()
        y, cb, cr = f.planes
        assert y.shape == (HEIGHT, WIDTH) and cb.shape == cr.shape == (HEIGHT, WIDTH // 2) and y.dtype == "uint16"
        pg = want.reshape(HEIGHT, WIDTH // 2, 4).astype(np.uint16)  # Cb Y0 Cr Y1
        want_y = np.stack([pg[:, :, 1], pg[:, :, 3]], axis=2).reshape(HEIGHT, WIDTH)
        cy, ccb, ccr = (cupy.from_dlpack(p) for p in (y, cb, cr))
        assert cy.dtype == cupy.uint16 and cy.data.ptr == y.data_ptr and cy.strides == (y.pitch, 2)
        assert (cupy.asnumpy(cy) == want_y).all()
        assert (cupy.asnumpy(ccb) == pg[:, :, 0]).all() and (cupy.asnumpy(ccr) == pg[:, :, 2]).all()
        print(f"frame {i}: shape {f.shape}, planes equal the samples sent, lines missing {np.flatnonzero(lost)}")
    s = pipe.stats()
    assert s["frames_complete"] == 2 and s["frames_incomplete"] == 1 and s["gpu_errors"] == 0, s
