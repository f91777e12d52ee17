"""The afxdp engine from Python, as root: a veth pair between two namespaces this test
creates; a socket-engine sender in one, an AF_XDP receiver in the other (its eBPF program
steers the flow), every byte checked and every packet accounted. The lab is removed even
when the test fails."""
import contextlib
import ctypes
import os
import shutil
import subprocess
import time

import numpy as np
import pytest

import netdaq
from conftest import pattern, require

CLONE_NEWNET = 0x40000000
PORT = 47123
SIZE = 800
COUNT = 4000


def ip(*args, ns=None):
    """`ip` (in namespace ns through nsenter: `ip -n` remounts /sys, which a chroot refuses)."""
    enter = ["nsenter", f"--net=/run/netns/{ns}", "--"] if ns else []
    subprocess.run([*enter, "ip", *args], check=True, capture_output=True, text=True)


@contextlib.contextmanager
def in_netns(name):
    """Runs the block's calls in namespace `name`; sockets made there stay in it."""
    libc = ctypes.CDLL(None, use_errno=True)
    with open("/proc/self/ns/net") as home, open(f"/run/netns/{name}") as target:
        if libc.setns(target.fileno(), CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {name}")
        try:
            yield
        finally:
            if libc.setns(home.fileno(), CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back home")


@pytest.fixture
def lab():
    require(os.geteuid() == 0, "needs root (namespaces, XDP)")
    require(shutil.which("ip"), "needs ip (iproute2)")
    require("afxdp" in netdaq.engines(), "netdaq was built without the afxdp engine (libxdp-dev, libbpf-dev, clang)")
    pid = os.getpid()
    a, b = f"ndpy{pid}a", f"ndpy{pid}b"
    net = pid % 250
    try:
        ip("netns", "add", a)
        ip("netns", "add", b)
        ip("link", "add", f"vp{pid}a", "netns", a, "type", "veth", "peer", "name", f"vp{pid}b", "netns", b)
        for ns, side, host in ((a, "a", 1), (b, "b", 2)):
            ip("link", "set", "lo", "up", ns=ns)
            ip("addr", "add", f"10.198.{net}.{host}/24", "dev", f"vp{pid}{side}", ns=ns)
            ip("link", "set", f"vp{pid}{side}", "up", ns=ns)
        yield {"a": a, "b": b, "veth_b": f"vp{pid}b", "ip_b": f"10.198.{net}.2"}
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def receiver_config(dev):
    return {
        "memory_regions": [{"name": "umem", "kind": "host", "buf_size": 2048, "num_bufs": 8192}],
        "interfaces": [{
            "name": "sensor", "engine": "afxdp", "address": dev,
            "rx": {"queues": [{"id": 0, "batch_size": 64, "memory_regions": ["umem"]}],
                   "flows": [{"id": 7, "queue": 0, "match": {"udp_dst": PORT}}]},
            "afxdp": {"fill_ring": 2048, "rx_ring": 2048},
        }],
        "log": {"level": "warn"},
    }


def sender_config(ip_b):
    return {
        "memory_regions": [{"name": "tx", "kind": "host", "buf_size": 2048, "num_bufs": 1024}],
        "interfaces": [{"name": "sender", "engine": "socket",
                        "tx": {"destination": f"udp://{ip_b}:{PORT}", "rate_pps": 40000,
                               "queues": [{"id": 0, "batch_size": 32, "ring_depth": 8, "memory_regions": ["tx"]}]}}],
        "log": {"level": "warn"},
    }


def test_afxdp_receiver_gets_every_byte(lab):
    with in_netns(lab["b"]):
        rx_session = netdaq.Session(netdaq.Config.from_dict(receiver_config(lab["veth_b"])))
    with in_netns(lab["a"]):
        tx_session = netdaq.Session(netdaq.Config.from_dict(sender_config(lab["ip_b"])))
    with rx_session, tx_session:
        rxq, txq = rx_session.rx_queue("sensor"), tx_session.tx_queue("sender")
        assert "afxdp" in rxq.stats()["mode"]
        got = []  # (sequence, payload) of every packet received, duplicates kept
        sent = 0
        deadline = time.monotonic() + 30
        while (sent < COUNT or len(got) < COUNT) and time.monotonic() < deadline:
            if sent < COUNT:
                n = min(32, COUNT - sent)
                sent += txq.send(np.stack([pattern(s, SIZE) for s in range(sent, sent + n)]))
            with rxq.poll() as burst:
                for p in burst:
                    assert p.flow == 7 and len(p.frame) == p.size + 42  # Ethernet + IPv4 + UDP
                    got.append((int.from_bytes(bytes(p.payload[:8]), "little"), bytes(p.payload)))
        time.sleep(0.2)  # anything arriving late (a duplicate) is received too
        with rxq.poll() as burst:
            got.extend((int.from_bytes(bytes(p.payload[:8]), "little"), bytes(p.payload)) for p in burst)
        assert sent == COUNT
        assert sorted(seq for seq, _ in got) == list(range(COUNT)), "each sequence number once, none missing"
        for seq, data in got:
            assert data == pattern(seq, SIZE).tobytes(), f"packet {seq} differs"
        stats = rx_session.stats()
        rx = [q for q in stats if q["is_rx"]]
        assert sum(q["packets"] for q in rx) == len(got), f"the queue counted other than what was received: {rx}"
        drops = sum(q["total_drops"] for q in rx)
        assert len(got) + drops == COUNT, f"sent {COUNT}, received {len(got)}, drops {drops}: {rx}"
        flows = [f for f in rx_session.flow_stats() if not f["unmatched"]]
        assert flows and flows[0]["flow"] == 7 and flows[0]["packets"] == COUNT
