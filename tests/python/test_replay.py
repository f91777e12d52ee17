"""A capture file as the source (the pcap engine) from Python: every UDP payload of a pcap
written here arrives in order, the queue says when the file has ended, and records that are not
UDP are counted as malformed drops (read == delivered + drops)."""
import struct
import time

import netdaq
from conftest import pattern

SIZE = 200
COUNT = 1000


def udp_frame(seq, port=46000):
    """An Ethernet/IPv4/UDP frame to 10.0.0.2:port whose payload is pattern(seq): it carries its
    whole sequence number, so a packet out of place or twice cannot match."""
    payload = pattern(seq, SIZE).tobytes()
    udp = struct.pack("!HHHH", 40000, port, 8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip + udp


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))  # microseconds, Ethernet
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1, i, len(fr), len(fr)) + fr)


def replay_config(path):
    return {
        "memory_regions": [{"name": "rx_bufs", "kind": "host", "buf_size": 2048, "num_bufs": 4096}],
        "interfaces": [{"name": "replay", "engine": "pcap", "address": "udp://0.0.0.0:46000",
                        "rx": {"queues": [{"id": 0, "batch_size": 64, "memory_regions": ["rx_bufs"]}]},
                        "pcap": {"file": str(path)}}],
    }


def test_a_capture_replays_in_order_and_the_queue_finishes(tmp_path):
    arp = b"\xff" * 6 + b"\x04" * 6 + b"\x08\x06" + bytes(28)  # not UDP: a malformed drop
    frames = [udp_frame(i) for i in range(COUNT // 2)] + [arp] + [udp_frame(i) for i in range(COUNT // 2, COUNT)]
    pcap = tmp_path / "capture.pcap"
    write_pcap(pcap, frames)
    with netdaq.Session(netdaq.Config.from_dict(replay_config(pcap))) as s:
        q = s.rx_queue("replay")
        got = []
        deadline = time.monotonic() + 10
        while not q.finished and time.monotonic() < deadline:
            with q.poll() as burst:
                got.extend(bytes(p.payload) for p in burst)
        assert q.finished, "the queue never said the file had ended"
        assert len(got) == COUNT
        for seq, data in enumerate(got):
            assert data == pattern(seq, SIZE).tobytes(), f"payload {seq} differs (carries {int.from_bytes(data[:8], 'little')})"
        st = q.stats()
        assert st["packets"] == COUNT
        assert st["drops"]["malformed"] == 1
        assert st["packets"] + st["total_drops"] == len(frames)
