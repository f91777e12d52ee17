"""netdaq.fleet from Python over real UCX on the loopback (TCP and shared memory): a Python
FrameSink feeds a Python FrameReceiver or EventBuilder; bytes, metadata and presence arrive as
sent, frames are read in place (NumPy views, DLPack) and held until their last view goes, and
every fragment is counted under one fate at the sink. Every wait is bounded."""
import gc
import threading
import time
import weakref

import numpy as np
import pytest

import netdaq

from conftest import CI, require

# ctest runs this file only where the library has the fleet; under CI a missing fleet fails.
if not hasattr(netdaq, "fleet"):
    why = "this build has no netdaq.fleet (the library was built without UCX: libucx-dev)"
    if CI:
        raise RuntimeError(f"CI=true: this test must run here, but {why}")
    pytest.skip(why, allow_module_level=True)
fleet = netdaq.fleet

TRANSPORTS = ["tcp", "shm"]
FATES = ("acked", "refused", "no_credit", "peer_down", "in_flight_lost", "in_flight")


def pump_until(step, cond, timeout_s=5.0):
    """Calls step() until cond() is true or timeout_s passes; returns cond()'s last value."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        step()
    return cond()


def check_invariant(stats):
    """fragments == acked + refused + no_credit + peer_down + in_flight_lost + in_flight,
    for the total and for each destination; the total is the destinations' sum."""
    for d in [stats["total"]] + stats["destinations"]:
        assert d["fragments"] == sum(d[k] for k in FATES), d
    for k in ("fragments",) + FATES:
        assert stats["total"][k] == sum(d[k] for d in stats["destinations"]), (k, stats)


def connect(sinks, receivers):
    step = lambda: [x.progress() for x in list(sinks) + list(receivers)]  # noqa: E731
    # Every destination of every sink (the total's "connected" is true once any one is).
    assert pump_until(step, lambda: all(d["connected"] for s in sinks for d in s.stats()["destinations"])), \
        [s.stats() for s in sinks]
    return step


def pattern(seed, size):
    return ((np.arange(size, dtype=np.uint64) * 7 + seed) & 0xFF).astype(np.uint8)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_frames_arrive_with_bytes_meta_and_presence(transport):
    with fleet.FrameReceiver("127.0.0.1:0", max_bytes=1 << 20, buffers=4, transport=transport) as rx, \
            fleet.FrameSink([f"127.0.0.1:{rx.port}"], node=1, nodes=2, credits=4, transport=transport) as sink:
        assert rx.port != 0
        step = connect([sink], [rx])
        presence = np.array([0xF0F0F0F0F0F0F0F0, 0x1], dtype=np.uint64)
        sizes = [0, 1, 100, 4096, 65537, 1 << 20]  # eager and rendezvous
        for i, size in enumerate(sizes):
            data = pattern(i, size)
            if i == 3:  # 4096 / 64 = 64 granules: one presence word travels
                sink.send(data, stream=3, frame=100 + i, complete=False, presence=presence[:1], granule=64,
                          bytes_present=4000, first_ns=11 + i, last_ns=22 + i)
            else:
                sink.send(data, stream=3, frame=100 + i, first_ns=11 + i, last_ns=22 + i)
            f = pump_until(lambda: sink.progress(), lambda: rx.receive(0.01))
            assert f is not None, f"frame {i} did not arrive: {rx.stats()} {sink.stats()}"
            with f:
                assert (f.stream, f.frame, f.node, f.nbytes) == (3, 100 + i, 1, size)
                assert f.offset == size and f.built_bytes == 2 * size and f.frame_offset == 0  # node 1 of 2
                assert (f.first_ns, f.last_ns) == (11 + i, 22 + i)
                assert f.sent_ns > 0
                assert f.data.dtype == np.uint8 and f.data.shape == (size,)
                assert np.array_equal(f.data, data), f"frame {i}: bytes differ"
                assert f.meta["frame"] == 100 + i and f.meta["bytes"] == size
                if i == 3:
                    assert not f.complete and f.bytes_present == 4000 and f.granule == 64
                    assert f.presence.dtype == np.uint64 and list(f.presence) == [presence[0]]
                else:
                    assert f.complete and f.bytes_present == size and f.granule == 0
                    assert f.presence.shape == (0,)
            assert f.released
            # Its credit comes back before the next send (credits=4 would run out otherwise).
            assert pump_until(step, lambda: sink.stats()["total"]["acked"] == i + 1), sink.stats()
        assert sink.drain(3000)
        assert sink.pending == 0, "every sent buffer is let go once UCX is done with it"
        s = sink.stats()
        check_invariant(s)
        assert s["frames"] == len(sizes)
        assert s["total"]["acked"] == len(sizes)
        assert s["total"]["bytes_acked"] == sum(sizes)
        r = rx.stats()
        assert (r["connections"], r["senders"], r["fragments"], r["placed"]) == (1, 1, len(sizes), len(sizes))
        assert r["bytes"] == sum(sizes)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_views_are_zero_copy_and_hold_the_frame(transport):
    with fleet.FrameReceiver("127.0.0.1:0", max_bytes=1 << 16, buffers=4, transport=transport) as rx, \
            fleet.FrameSink(f"127.0.0.1:{rx.port}", credits=4, transport=transport) as sink:
        step = connect([sink], [rx])
        data = pattern(5, 50000)
        sink.send(data, stream=1, frame=9)
        f = pump_until(step, lambda: rx.pop())
        assert f is not None, rx.stats()
        a, b = f.data, f.data
        assert not a.flags.writeable, "the receiver's buffer is read-only from Python"
        assert np.shares_memory(a, b) and a.ctypes.data == b.ctypes.data, "two views, one buffer: no copy"
        d = np.from_dlpack(f)
        assert f.__dlpack_device__() == (1, 0)  # kDLCPU
        assert d.ctypes.data == a.ctypes.data and np.array_equal(d, data), "DLPack views the same bytes"
        try:
            import torch
        except ImportError:
            torch = None  # the torch part only runs where torch is installed
        if torch is not None:
            t = torch.from_dlpack(f)
            assert t.dtype == torch.uint8 and t.data_ptr() == a.ctypes.data
            assert bytes(t.numpy().tobytes()) == data.tobytes()
            del t
        # release() ends the frame object's hold; the views keep the buffer (and the credit).
        f.release()
        f.release()  # idempotent
        with pytest.raises(netdaq.ReleasedError):
            f.data
        assert np.array_equal(a, data) and np.array_equal(d, data), "views stay valid after release()"
        for _ in range(200):
            step()
        assert sink.stats()["total"]["acked"] == 0, "a live view holds the buffer: no credit back yet"
        del a, b, d
        assert pump_until(step, lambda: sink.stats()["total"]["acked"] == 1), sink.stats()
        check_invariant(sink.stats())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_sink_holds_the_sent_buffer_until_ucx_is_done(transport):
    size = 1 << 20  # rendezvous: UCX reads the bytes only when the receiver asks for them
    with fleet.FrameReceiver("127.0.0.1:0", max_bytes=size, buffers=2, transport=transport) as rx, \
            fleet.FrameSink(f"127.0.0.1:{rx.port}", credits=2, transport=transport) as sink:
        step = connect([sink], [rx])
        buf = bytearray(pattern(3, size).tobytes())
        sink.send(buf, frame=1)
        assert sink.pending == 1, "the receiver was not progressed: UCX still needs the bytes"
        with pytest.raises(BufferError):
            buf.extend(b"x")  # Python may not resize it under the send
        arr = pattern(4, size)
        arr_ref = weakref.ref(arr)
        sink.send(arr, frame=2)
        del arr
        gc.collect()
        assert arr_ref() is not None, "the sink holds the array Python let go of"
        got = [pump_until(step, rx.pop) for _ in range(2)]
        assert all(got), rx.stats()
        assert np.array_equal(got[0].data, pattern(3, size)) and np.array_equal(got[1].data, pattern(4, size))
        for g in got:
            g.release()
        assert sink.drain(3000) and sink.pending == 0
        gc.collect()
        assert arr_ref() is None, "let go once UCX is done with it"
        buf.extend(b"x")  # resizable again
        with pytest.raises((BufferError, ValueError), match="contiguous"):
            sink.send(np.arange(10, dtype=np.uint8)[::2])  # not C-contiguous: NumPy refuses the export
        assert sink.pending == 0
        check_invariant(sink.stats())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_unreleased_frames_count_no_credit_exactly(transport):
    with fleet.FrameReceiver("127.0.0.1:0", max_bytes=4096, buffers=16, transport=transport) as rx, \
            fleet.FrameSink(f"127.0.0.1:{rx.port}", credits=3, when_full="drop", transport=transport) as sink:
        step = connect([sink], [rx])
        data = pattern(0, 2048)
        for f in range(10):
            sink.send(data, frame=f)
            for _ in range(20):
                step()
        s = sink.stats()
        check_invariant(s)
        assert (s["total"]["fragments"], s["total"]["in_flight"], s["total"]["no_credit"]) == (10, 3, 7), s
        held = []  # the application pops but never releases

        def pop_into_held():
            f = rx.pop()
            if f is not None:
                held.append(f)
            return len(held) == 3

        assert pump_until(step, pop_into_held), rx.stats()
        assert sink.stats()["total"]["acked"] == 0
        for h in held:
            h.release()
        held.clear()
        assert sink.drain(3000)
        s = sink.stats()
        check_invariant(s)
        assert (s["total"]["acked"], s["total"]["no_credit"], s["total"]["in_flight"]) == (3, 7, 0), s
        assert rx.stats()["placed"] == 3


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_two_sinks_build_frames_byte_identical(transport):
    size = 40000  # rendezvous-sized fragments
    with fleet.EventBuilder("127.0.0.1:0", nodes=2, max_bytes=2 * size, buffers=8, timeout_ms=1000,
                            transport=transport) as eb:
        sinks = [fleet.FrameSink(f"127.0.0.1:{eb.port}", node=n, nodes=2, credits=8, transport=transport)
                 for n in range(2)]
        step = connect(sinks, [eb])
        for fr in range(5):
            parts = [pattern(10 * fr + n, size) for n in range(2)]
            for n in range(2):
                sinks[n].send(parts[n], stream=7, frame=fr, first_ns=100 + n, last_ns=200 + n)
            b = pump_until(step, lambda: eb.pop())
            assert b is not None, f"frame {fr}: {eb.stats()}"
            with b:
                assert (b.stream, b.frame, b.complete, b.nodes_present) == (7, fr, True, 0b11)
                assert (b.first_ns, b.last_ns) == (100, 201)
                assert np.array_equal(b.data, np.concatenate(parts)), f"frame {fr}: built bytes differ"
                assert np.array_equal(np.from_dlpack(b), np.concatenate(parts))
                assert [m["node"] for m in b.fragments] == [0, 1]
                assert [m["offset"] for m in b.fragments] == [0, size]
                assert all(m["complete"] and m["bytes"] == size for m in b.fragments)
        # Node 1 stays silent for frame 5: handed out incomplete at the timeout, node 1 missing.
        sinks[0].send(pattern(99, size), stream=7, frame=5)
        b = pump_until(step, lambda: eb.pop())
        assert b is not None
        assert (b.frame, b.complete, b.nodes_present) == (5, False, 0b01)
        assert b.fragments[1] is None
        assert not b.data[size:].any(), "a missing fragment's bytes are zero"
        b.release()
        for s in sinks:
            assert s.drain(3000)
            st = s.stats()
            check_invariant(st)
        st = eb.stats()
        assert (st["frames"], st["frames_complete"], st["frames_incomplete"], st["frames_timed_out"]) == (6, 5, 1, 1)
        assert [n["missing"] for n in st["nodes"]] == [0, 1]
        assert [sinks[n].stats()["total"]["acked"] for n in range(2)] == [6, 5]
        for s in sinks:
            s.close()


def test_route_bytes_splits_a_frame_across_receivers():
    rxs = [fleet.FrameReceiver("127.0.0.1:0", max_bytes=1 << 16, buffers=4, transport="tcp") for _ in range(2)]
    sink = fleet.FrameSink(",".join(f"127.0.0.1:{r.port}" for r in rxs), route="bytes", transport="tcp")
    step = connect([sink], rxs)
    data = pattern(1, 1001)
    sink.send(data, frame=4)
    got = [pump_until(step, r.pop) for r in rxs]
    assert all(got), [r.stats() for r in rxs]
    assert [g.frame_offset for g in got] == [0, 501]
    assert np.array_equal(np.concatenate([g.data for g in got]), data)
    for g in got:
        g.release()
    assert sink.drain(3000)
    s = sink.stats()
    check_invariant(s)
    assert [d["acked"] for d in s["destinations"]] == [1, 1]
    sink.close()
    for r in rxs:
        r.close()
    with pytest.raises(netdaq.Error):
        sink.progress()
    with pytest.raises(netdaq.Error):
        rxs[0].pop()


def test_bad_settings_raise_value_error_with_the_cpp_message():
    with pytest.raises(ValueError, match="fleet address 'nohost'"):
        fleet.FrameSink("nohost")
    with pytest.raises(ValueError, match="fleet route 'corner': not one of frame, stream, bytes"):
        fleet.FrameSink("127.0.0.1:9", route="corner")
    with pytest.raises(ValueError, match="fleet transport 'ib': not one of auto, tcp, shm"):
        fleet.FrameReceiver("127.0.0.1:0", transport="ib")
    with pytest.raises(ValueError, match="buffers and max_bytes must be at least 1"):
        fleet.FrameReceiver("127.0.0.1:0", buffers=0)
    with pytest.raises(ValueError, match="credits must be at least 1"):
        fleet.FrameSink(["127.0.0.1:9"], credits=0)
    with pytest.raises(ValueError, match="nodes"):
        fleet.EventBuilder("127.0.0.1:0", nodes=65)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_wait_mode_sender_and_receiver_in_two_threads(transport):
    """send(when_full='wait') and receive() release the GIL: a receiver thread's releases hand
    credits back to a sender waiting in the main thread, so nothing is dropped."""
    frames, size = 40, 8192
    with fleet.FrameReceiver("127.0.0.1:0", max_bytes=size, buffers=4, transport=transport) as rx, \
            fleet.FrameSink(f"127.0.0.1:{rx.port}", credits=2, when_full="wait", wait_ms=3000,
                            transport=transport) as sink:
        connect([sink], [rx])
        got, errors = [], []

        def receive_all():
            try:
                deadline = time.monotonic() + 8
                while len(got) < frames and time.monotonic() < deadline:
                    f = rx.receive(0.05)
                    if f is not None:
                        with f:
                            got.append((f.frame, bool(np.array_equal(f.data, pattern(f.frame, size)))))
            except Exception as e:  # noqa: BLE001  (reported by the main thread)
                errors.append(e)

        t = threading.Thread(target=receive_all)
        t.start()
        for n in range(frames):
            sink.send(pattern(n, size), frame=n)
        # The sink is progressed by its own thread too (shared-memory rendezvous needs the sender).
        assert pump_until(sink.progress, lambda: not t.is_alive(), timeout_s=10)
        t.join(1)
        assert not errors, errors
        assert got == [(n, True) for n in range(frames)]
        assert pump_until(lambda: (sink.progress(), rx.progress()), lambda: sink.stats()["total"]["in_flight"] == 0)
        s = sink.stats()
        check_invariant(s)
        assert (s["total"]["acked"], s["total"]["no_credit"]) == (frames, 0), s


RECEIVER_PROCESS = """
import sys, time
from netdaq import fleet
rx = fleet.FrameReceiver("127.0.0.1:0", max_bytes=1 << 22, buffers=4, transport=sys.argv[1])
print(rx.port, flush=True)
deadline = time.monotonic() + 8
while time.monotonic() < deadline:
    f = rx.receive(0.05)
    if f is not None:
        print(f.frame, f.nbytes, int(f.data[-1]), flush=True)
        f.release()
        break
end = time.monotonic() + 0.5
while time.monotonic() < end:
    rx.progress()  # the credit goes out
"""


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_closing_a_sink_mid_send_lets_the_send_finish(transport):
    """close() right after a 4 MiB send to a receiver in another process: the sink waits for UCX
    to finish reading (the C++ sink destroyed mid-send crashes), and the frame arrives whole."""
    import subprocess
    import sys
    p = subprocess.Popen([sys.executable, "-c", RECEIVER_PROCESS, transport], stdout=subprocess.PIPE, text=True)
    try:
        port = int(p.stdout.readline())
        sink = fleet.FrameSink(f"127.0.0.1:{port}", credits=2, transport=transport)
        assert pump_until(sink.progress, lambda: sink.stats()["total"]["connected"]), sink.stats()
        data = np.full(1 << 22, 7, dtype=np.uint8)
        sink.send(data, frame=42)
        assert sink.pending == 1, "a 4 MiB rendezvous is still under way right after send()"
        t0 = time.monotonic()
        sink.close()
        assert time.monotonic() - t0 < 1.5
        assert sink.pending == 0
        out, _ = p.communicate(timeout=10)
        assert out.split() == ["42", str(1 << 22), "7"], out
        assert p.returncode == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_netdaq_build_cli_builds_frames_from_python_sinks(tmp_path):
    """Interop: two Python FrameSinks (nodes 0 and 1) feed the CLI's event builder (`netdaq
    build`, C++), which builds every frame complete and counts each node's bytes."""
    import json
    import os
    import socket
    import subprocess
    cli = os.environ.get("NETDAQ_CLI")
    require(cli and os.path.exists(cli), "NETDAQ_CLI (the netdaq executable) is not set: run through ctest")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = tmp_path / "builder.yaml"
    cfg.write_text("fleet:\n  nodes: 2\n  listen: \"127.0.0.1:%d\"\n  transport: tcp\n  buffers: 8\n"
                   "  max_bytes: 80000\n  timeout_ms: 2000\n" % port)
    frames, size = 5, 40000
    result = tmp_path / "build.json"
    p = subprocess.Popen([cli, "build", str(cfg), "-n", str(frames), "-d", "8", "--expect-complete", "--json", str(result)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        sinks = [fleet.FrameSink(f"127.0.0.1:{port}", node=n, nodes=2, credits=8, transport="tcp", reconnect_ms=50)
                 for n in range(2)]
        step = lambda: [s.progress() for s in sinks]  # noqa: E731
        assert pump_until(step, lambda: all(s.stats()["total"]["connected"] for s in sinks)), \
            [s.stats() for s in sinks]
        for f in range(frames):
            for n, s in enumerate(sinks):
                s.send(pattern(2 * f + n, size), stream=1, frame=f)
        assert pump_until(step, lambda: all(s.stats()["total"]["acked"] == frames for s in sinks)), \
            [s.stats() for s in sinks]
        out, err = p.communicate(timeout=10)
        assert p.returncode == 0, out + err
        r = json.loads(result.read_text())
        assert (r["frames"]["built"], r["frames"]["complete"], r["frames"]["incomplete"]) == (frames, frames, 0), r
        assert [(n["node"], n["fragments"], n["bytes"], n["missing"]) for n in r["nodes"]] == \
            [(0, frames, frames * size, 0), (1, frames, frames * size, 0)]
        for s in sinks:
            check_invariant(s.stats())
            s.close()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
