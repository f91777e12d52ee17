"""Loopback traffic through the socket engine, sent and received from Python: every byte
checked, zero copy shown, release and use-after-release, TX accounting."""
import gc
import time

import numpy as np
import pytest

import netdaq
from conftest import accounted, free_udp_port, loopback_config, pattern

SIZE = 1000
COUNT = 3000


@pytest.fixture
def session():
    cfg = netdaq.Config.from_dict(loopback_config(free_udp_port()))
    with netdaq.Session(cfg) as s:
        yield s


def receive(rxq, want, seconds=10):
    """Polls until `want` packets came or `seconds` passed; returns each payload's bytes."""
    got = []
    deadline = time.monotonic() + seconds
    while len(got) < want and time.monotonic() < deadline:
        with rxq.poll() as burst:
            got.extend(bytes(p.payload) for p in burst)
    return got


def send_rows(txq, rows):
    """Sends every row, retrying what the engine did not take yet; returns packets sent."""
    sent = 0
    deadline = time.monotonic() + 10
    while sent < len(rows) and time.monotonic() < deadline:
        sent += txq.send(rows[sent:sent + 64])
    return sent


def test_every_byte_arrives_in_order(session):
    rxq, txq = session.rx_queue("receiver"), session.tx_queue("sender")
    got = []
    for first in range(0, COUNT, 256):  # a window at a time: no drop on a busy machine
        rows = np.stack([pattern(s, SIZE) for s in range(first, min(first + 256, COUNT))])
        assert send_rows(txq, rows) == len(rows)
        got.extend(receive(rxq, len(rows)))
    assert len(got) == COUNT
    for seq, data in enumerate(got):
        assert data == pattern(seq, SIZE).tobytes(), f"packet {seq} differs"
    stats = session.stats()
    ok, why = accounted(stats, COUNT)
    assert ok, why
    rx = next(q for q in stats if q["is_rx"])
    assert rx["packets"] == COUNT and rx["bytes"] == COUNT * SIZE and rx["total_drops"] == 0
    tx = next(q for q in stats if not q["is_rx"])
    assert tx["packets"] == COUNT and tx["total_drops"] == 0


def first_burst(session, n=64, size=SIZE):
    rxq, txq = session.rx_queue("receiver"), session.tx_queue("sender")
    rows = np.stack([pattern(s, size) for s in range(n)])
    assert send_rows(txq, rows) == n
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        b = rxq.poll()
        if b:
            return rxq, b
    pytest.fail("nothing received in 5 s")


def test_payloads_are_views_of_the_pool_buffers(session):
    rxq, b = first_burst(session)
    addresses = b.addresses()
    for i, p in enumerate(b):
        view = p.payload
        assert view.__array_interface__["data"][0] == p.address == addresses[i]
        assert not view.flags.writeable and not view.flags.owndata
        with pytest.raises(ValueError):
            view[0] = 1
    # a second view of a packet is the same memory, not a copy
    assert np.shares_memory(b[0].payload, b[0].payload)
    sizes = b.sizes()
    assert sizes.dtype == np.uint32 and (sizes == SIZE).all() and b.bytes == SIZE * len(b)
    assert (b.field(0, "<u8") == np.arange(len(b))).all()  # every sequence number at once
    assert (b.field(0, ">u8") == np.arange(len(b)).astype(">u8").view("<u8")).all()
    with pytest.raises(ValueError, match=f"has only {SIZE} bytes"):
        b.field(SIZE - 2, "<u4")
    rows = b.gather()
    assert rows.shape == (len(b), SIZE)
    for i, p in enumerate(b):
        assert (rows[i] == p.payload).all()
    try:
        block = b.payloads()
    except BufferError as e:  # the pool handed out buffers out of order: said, not guessed
        assert "gather()" in str(e)
    else:
        assert block.shape == (len(b), SIZE)
        assert block.__array_interface__["data"][0] == addresses[0]
        for i, p in enumerate(b):
            assert np.shares_memory(block[i], p.payload) and (block[i] == p.payload).all()
    b.release()


def test_first_burst_of_a_fresh_pool_is_one_2d_view():
    # A fresh pool hands out buffers in order and, without GRO, datagrams land straight in
    # them (with GRO the segments of a coalesced datagram are copied into later buffers).
    cfg = netdaq.Config.from_dict(loopback_config(free_udp_port(), gro=False))
    with netdaq.Session(cfg) as session:
        _, b = first_burst(session, n=32)
        check_one_2d_view(b)


def check_one_2d_view(b):
    block = b.payloads()
    assert block.shape == (len(b), SIZE) and block.strides[1] == 1 and block.strides[0] >= SIZE
    seqs = block[:, :8].copy().view("<u8").ravel()
    assert (seqs == np.arange(len(b))).all()
    b.release()


def test_use_after_release_raises_and_views_keep_their_buffers(session):
    rxq, b = first_burst(session)
    n = len(b)
    pkt = b[0]
    kept = b[1].payload
    expected = bytes(kept)
    in_use = rxq.stats()["pool_in_use"]
    assert in_use >= n
    with b:
        pass
    assert b.released
    with pytest.raises(netdaq.ReleasedError):
        b[0]
    with pytest.raises(netdaq.ReleasedError):
        b.payloads()
    with pytest.raises(netdaq.ReleasedError):
        pkt.payload
    assert bytes(kept) == expected  # a view taken before the release still holds its buffer
    assert rxq.stats()["pool_in_use"] == in_use
    del pkt, kept
    gc.collect()
    assert rxq.stats()["pool_in_use"] == in_use - n  # the last view gone: the buffers are back
    b.release()  # idempotent


def test_tx_bursts_fill_send_and_release_accounting(session):
    txq = session.tx_queue("sender")
    assert txq.buffer_size == 2048
    held = []
    while len(held) < 100:  # until the application holds all ring_depth (8) bursts of the queue
        b = txq.allocate(64)
        if not b:
            break
        assert len(b) == 64
        held.append(b)
    assert len(held) == 8
    with txq.allocate(64) as empty:  # none left (not a loss: nothing was taken from the caller)
        assert len(empty) == 0 and not empty
    with pytest.raises(ValueError, match="do not fit its buffer of 2048"):
        held[0].set(0, np.zeros(4096, np.uint8))
    held[0].set(0, np.arange(100, dtype=np.uint8))
    held[1].fill(np.zeros((64, 300), np.uint8), sizes=[200] * 64)
    assert held[1].send() == 64 and held[1].released and len(held[1]) == 0
    with pytest.raises(netdaq.ReleasedError):
        held[1].set(0, b"x")
    for b in held:
        b.release()  # unsent: counted tx_unsent
    tx = next(q for q in session.stats() if not q["is_rx"])
    assert tx["drops"]["pool_empty"] == 0
    assert tx["drops"]["tx_unsent"] == (len(held) - 1) * 64
    assert tx["packets"] == 64 and tx["bytes"] == 64 * 200


def test_stats_are_plain_dicts(session):
    stats = session.stats()
    assert {q["queue"] for q in stats} == {"receiver/rx0", "sender/tx0"}
    for q in stats:
        assert set(q["drops"]) >= {"ring_full", "pool_empty", "kernel", "malformed", "tx_full"}
        assert isinstance(q["engine_counters"], dict) and isinstance(q["mode"], str)
    assert session.flow_stats() == []
    text = session.prometheus_text()  # docs/metrics.md
    assert "# TYPE netdaq_rx_packets_total counter\n" in text
    assert 'netdaq_tx_drops_total{interface="sender",queue="sender/tx0",reason="tx_unsent"} ' in text
    with pytest.raises(netdaq.Error) as e:
        session.rx_queue("nope")
    assert e.value.code == "not_found"
