"""Shared pieces of the Python tests: the CI rule (with CI=true a missing requirement fails,
only GPU tests skip), free ports and loopback configs."""
import os
import socket

import pytest

# The CI rule of scripts/lib/ci.sh: "true", "1" or "yes", any case.
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


REQUIRE_GPU = os.environ.get("NETDAQ_REQUIRE_GPU") == "1"


def require(condition, why, strict=CI, rule="CI=true"):
    """Skips the test when `condition` is false, saying why; when `strict` it fails instead."""
    if condition:
        return
    if strict:
        pytest.fail(f"{rule}: this test must run here, but {why}")
    pytest.skip(why)


def require_gpu(condition, why):
    """GPU tests skip anywhere (CI has no GPU) but on the GPU machine (NETDAQ_REQUIRE_GPU=1)."""
    require(condition, why, strict=REQUIRE_GPU, rule="NETDAQ_REQUIRE_GPU=1")


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loopback_config(port, batch=64, rx_bufs=4096, tx_bufs=1024, buf_size=2048, rate_pps=0, gro=True):
    """A receiver and a sender interface of the socket engine on 127.0.0.1:port."""
    tx = {"destination": f"udp://127.0.0.1:{port}",
          "queues": [{"id": 0, "batch_size": batch, "ring_depth": 8, "memory_regions": ["tx_bufs"]}]}
    if rate_pps:
        tx["rate_pps"] = rate_pps
    return {
        "memory_regions": [
            {"name": "rx_bufs", "kind": "host", "buf_size": buf_size, "num_bufs": rx_bufs},
            {"name": "tx_bufs", "kind": "host", "buf_size": buf_size, "num_bufs": tx_bufs},
        ],
        "interfaces": [
            {"name": "receiver", "engine": "socket", "address": f"udp://127.0.0.1:{port}",
             "rx": {"queues": [{"id": 0, "batch_size": batch, "memory_regions": ["rx_bufs"]}]},
             "socket": {"rcvbuf": 16 * 1024 * 1024, "gro": gro}},
            {"name": "sender", "engine": "socket", "tx": tx},
        ],
        "log": {"level": "warn"},
    }


def pattern(seq, size):
    """Packet `seq`'s bytes: its sequence number (8 bytes, little endian), then seq + i."""
    import numpy as np
    body = (np.arange(size, dtype=np.uint64) + seq).astype(np.uint8)
    body[:8] = np.frombuffer(int(seq).to_bytes(8, "little"), dtype=np.uint8)
    return body


def accounted(stats, sent):
    """sent == received + every drop of the receiving queues (the netdaq invariant)."""
    rx = [q for q in stats if q["is_rx"]]
    received = sum(q["packets"] for q in rx)
    drops = sum(q["total_drops"] for q in rx)
    return received + drops == sent, f"sent {sent}, received {received}, drops {drops}: {rx}"


# Exit status 77 (ctest's SKIP_RETURN_CODE) only when every test of the run skipped and none
# failed or errored; a run with any failure keeps pytest's own non-zero status, and a run with
# any pass exits 0, so a skip can never hide a failure.
SKIPPED_EXIT_STATUS = 77
_outcomes = {"passed": 0, "failed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if report.failed:
        _outcomes["failed"] += 1
    elif report.skipped:
        _outcomes["skipped"] += 1
    elif report.passed and report.when == "call":
        _outcomes["passed"] += 1


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == 0 and _outcomes["skipped"] and not _outcomes["passed"] and not _outcomes["failed"]:
        session.exitstatus = SKIPPED_EXIT_STATUS
