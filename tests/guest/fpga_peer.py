#!/usr/bin/python3
"""fpga_peer.py: an RDMA peer that behaves like an FPGA sensor with hand-set queue pairs.

Independent of netdaq (python3-pyverbs only, so run it with Debian's /usr/bin/python3): the
Holoscan-Sensor-Bridge pattern, no rdma_cm; queue pair numbers, PSNs and GIDs travel out of
band through JSON files. Used in the QEMU guest's Soft-RoCE lab (tests/guest/rdma-lab.sh):

  fpga_peer.py send --device DEV --gid-index N --local FILE --peer FILE --transport uc|rc
                    --op write_imm|send --count N --size BYTES [--queues Q] [--mtu 1024]
                    [--psn 0] [--gap K] [--timeout 30]
  fpga_peer.py recv (same options) [--slots 64]

Exit 0 when every message went (send) or arrived with every byte as expected (recv), 1 with
a message otherwise; every run is bounded by --timeout seconds (the file exchange included).

The out-of-band files. Each side writes its own "local" file and reads the other's ("peer"),
always through a temporary file and a rename, so a reader never sees half a file:

  {"gid": "::ffff:10.77.0.1",
   "rx": [{"qpn": 17, "psn": 0, "ring": {"addr": 140000000, "rkey": 1234, "slots": 64,
                                         "stride": 2048, "slot_size": 2048}}],
   "tx": [{"qpn": 18, "psn": 0, "credit": {"addr": 140001000, "rkey": 99}}]}

- gid: this side's RoCEv2 GID in IPv6 text form (inet_ntop of the 16 bytes).
- rx: the receiving QPs, tx: the sending ones. The peer's tx[i] sends to my rx[i]; my tx[i]
  sends to the peer's rx[i].
- psn: the PSN this QP starts sending with (its sq_psn); the other end of the pair sets its
  rq_psn to it.
- ring (rx, RDMA WRITE with immediate only): message seq goes to slot seq % slots at
  addr + slot * stride, at most slot_size bytes; the immediate is seq mod 2^32, big-endian on
  the wire (imm_data is __be32: htonl() it when posting, ntohl() it from the completion).
- credit (tx, optional): a word the receiver may RDMA-WRITE its credit into. This peer never
  offers one and, as a sender, never reads one (an FPGA has no credits).
- Numbers are JSON integers.

Order of publication (so that no message reaches a QP that is not in RTR yet, where it would
be dropped: lost for good on UC): a sender publishes its tx entries as soon as its QPs are in
INIT; a receiver waits for the peer's tx entries, moves its QPs to RTR with receives posted,
and only then publishes its rx entries; a sender starts when the peer's file has enough rx
entries. (A side with both kinds may rewrite its file: tx first, rx added when ready.) Remove
stale files before a run; this script removes its own local file when it starts.

Payload (netdaq's test pattern): message seq has --size bytes, byte k < 8 is
(seq >> 8k) & 0xff, byte k >= 8 is (seq*131 + k*7 + (k>>8)*13) & 0xff. Queue q's message i
(0-based) has seq = q*count + i; with write_imm its immediate is i and it goes to slot
i % slots of the peer's rx[q] ring. --gap K leaves out message index K on every queue (the
receiver sees a gap; `recv --gap K` expects it).
"""
import argparse
import json
import os
import socket
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import GID, AHAttr, GlobalRoute
from pyverbs.cq import CQ, cqe_status_to_str
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

PORT = 1
MTUS = {256: e.IBV_MTU_256, 512: e.IBV_MTU_512, 1024: e.IBV_MTU_1024, 2048: e.IBV_MTU_2048,
        4096: e.IBV_MTU_4096}


class Fail(Exception):
    pass


def log(msg):
    print("fpga_peer: " + msg, flush=True)


class Pattern:
    """netdaq's test payload, built with bytes.translate (a TCG guest is slow)."""

    def __init__(self, size):
        self.size = size
        self.base = bytes((k * 7 + (k >> 8) * 13) & 0xff for k in range(size))

    def message(self, seq):
        add = (seq * 131) & 0xff
        table = bytes((b + add) & 0xff for b in range(256))
        head = (seq & (2**64 - 1)).to_bytes(8, "little")
        return (head + self.base[8:].translate(table))[:self.size]


def check_bytes(got, want, what):
    if got == want:
        return
    if len(got) != len(want):
        raise Fail("%s: %d bytes, expected %d" % (what, len(got), len(want)))
    k = next(i for i in range(len(want)) if got[i] != want[i])
    bad = sum(1 for i in range(len(want)) if got[i] != want[i])
    raise Fail("%s: byte %d is 0x%02x, expected 0x%02x (%d of %d bytes differ)"
               % (what, k, got[k], want[k], bad, len(want)))


def write_json(path, obj):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def wait_peer(path, key, n, deadline):
    """The peer's file once it has at least n entries in `key`."""
    while True:
        try:
            with open(path) as f:
                doc = json.load(f)
            if len(doc.get(key, [])) >= n and doc.get("gid"):
                return doc
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise Fail("timeout: %s has no %d %r entries" % (path, n, key))
        time.sleep(0.05)


def gid_text(gid):
    return socket.inet_ntop(socket.AF_INET6, bytes.fromhex(str(gid).replace(":", "")))


def gid_from_text(text):
    raw = socket.inet_pton(socket.AF_INET6, text).hex()
    return GID(":".join(raw[i:i + 4] for i in range(0, 32, 4)))


class Peer:
    def __init__(self, a, depth):
        self.a = a
        self.deadline = time.monotonic() + a.timeout
        self.ctx = Context(name=a.device)
        self.gid = gid_text(self.ctx.query_gid(PORT, a.gid_index))
        if self.gid == "::":
            raise Fail("%s port %d has no GID at index %d" % (a.device, PORT, a.gid_index))
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, depth * a.queues + 16)
        self.rc = a.transport == "rc"
        qpt = e.IBV_QPT_RC if self.rc else e.IBV_QPT_UC
        self.qps = []
        for _ in range(a.queues):
            cap = QPCap(max_send_wr=depth, max_recv_wr=depth, max_send_sge=1, max_recv_sge=1)
            qp = QP(self.pd, QPInitAttr(qp_type=qpt, scq=self.cq, rcq=self.cq, cap=cap))
            attr = QPAttr()
            attr.qp_state = e.IBV_QPS_INIT
            attr.pkey_index = 0
            attr.port_num = PORT
            attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
            qp.modify(attr, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT
                      | e.IBV_QP_ACCESS_FLAGS)
            self.qps.append(qp)

    def connect(self, qp, peer_gid, remote):
        """INIT -> RTR -> RTS towards the peer's entry `remote` ({qpn, psn})."""
        a = self.a
        gr = GlobalRoute(dgid=gid_from_text(peer_gid), sgid_index=a.gid_index, hop_limit=64)
        attr = QPAttr()
        attr.qp_state = e.IBV_QPS_RTR
        attr.ah_attr = AHAttr(port_num=PORT, is_global=1, gr=gr)
        attr.path_mtu = MTUS[a.mtu]
        attr.dest_qp_num = remote["qpn"]
        attr.rq_psn = remote["psn"]
        mask = (e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN
                | e.IBV_QP_RQ_PSN)
        if self.rc:
            attr.max_dest_rd_atomic = 0
            attr.min_rnr_timer = 12
            mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
        qp.modify(attr, mask)
        attr = QPAttr()
        attr.qp_state = e.IBV_QPS_RTS
        attr.sq_psn = a.psn
        mask = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
        if self.rc:
            attr.timeout, attr.retry_cnt, attr.rnr_retry, attr.max_rd_atomic = 14, 7, 7, 0
            mask |= (e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY
                     | e.IBV_QP_MAX_QP_RD_ATOMIC)
        qp.modify(attr, mask)

    def poll(self, what):
        """Completions, or [] after a short sleep; raises on an error completion or timeout."""
        n, wcs = self.cq.poll(16)
        for wc in wcs[:n]:
            if wc.status != e.IBV_WC_SUCCESS:
                raise Fail("%s: completion error on QP %d: %s (status %d, vendor_err %d)"
                           % (what(), wc.qp_num, cqe_status_to_str(wc.status), wc.status,
                              wc.vendor_err))
        if n == 0:
            if time.monotonic() > self.deadline:
                raise Fail("timeout after %g s: %s" % (self.a.timeout, what()))
            time.sleep(0.0005)
        return wcs[:n]

    def describe(self):
        a = self.a
        return "%s %s, %d B" % (a.transport.upper(), a.op, a.size)


def expected_indices(a):
    return [i for i in range(a.count) if i != a.gap]


def run_send(a):
    depth = max(1, min(a.count, 128))
    p = Peer(a, depth)
    write_json(a.local, {"gid": p.gid, "tx": [{"qpn": qp.qp_num, "psn": a.psn} for qp in p.qps]})
    peer = wait_peer(a.peer, "rx", a.queues, p.deadline)
    rings = []
    for q, qp in enumerate(p.qps):
        rx = peer["rx"][q]
        ring = rx.get("ring")
        if a.op == "write_imm":
            if not ring:
                raise Fail("%s: rx[%d] offers no ring (needed for write_imm)" % (a.peer, q))
            if a.size > ring["slot_size"]:
                raise Fail("%d-byte messages do not fit rx[%d]'s %d-byte slots"
                           % (a.size, q, ring["slot_size"]))
        rings.append(ring)
        p.connect(qp, peer["gid"], rx)
    mr = MR(p.pd, depth * a.queues * a.size, e.IBV_ACCESS_LOCAL_WRITE)
    pat = Pattern(a.size)
    todo = [expected_indices(a) for _ in range(a.queues)]
    nxt = [0] * a.queues
    inflight = [0] * a.queues
    done = [0] * a.queues
    what = lambda: "sent %s of %d per queue" % (done, len(todo[0]))
    while sum(done) < sum(len(t) for t in todo):
        for q, qp in enumerate(p.qps):
            while nxt[q] < len(todo[q]) and inflight[q] < depth:
                i = todo[q][nxt[q]]
                off = (q * depth + nxt[q] % depth) * a.size
                mr.write(pat.message(q * a.count + i), a.size, off)
                sge = SGE(mr.buf + off, a.size, mr.lkey)
                if a.op == "write_imm":
                    wr = SendWR(wr_id=q, opcode=e.IBV_WR_RDMA_WRITE_WITH_IMM, num_sge=1, sg=[sge],
                                send_flags=e.IBV_SEND_SIGNALED)
                    wr.imm_data = socket.htonl(i & 0xffffffff)  # imm_data is __be32
                    ring = rings[q]
                    wr.set_wr_rdma(ring["rkey"], ring["addr"] + (i % ring["slots"]) * ring["stride"])
                else:
                    wr = SendWR(wr_id=q, opcode=e.IBV_WR_SEND, num_sge=1, sg=[sge],
                                send_flags=e.IBV_SEND_SIGNALED)
                qp.post_send(wr)
                nxt[q] += 1
                inflight[q] += 1
        for wc in p.poll(what):
            inflight[wc.wr_id] -= 1
            done[wc.wr_id] += 1
    log("sent %d messages on %d queue pairs (%s)" % (sum(done), a.queues, p.describe()))


def run_recv(a):
    todo = [expected_indices(a) for _ in range(a.queues)]
    depth = max(1, min(len(todo[0]), 256))
    p = Peer(a, depth)
    stride = (a.size + 63) // 64 * 64
    bufs = []  # per queue: (MR, number of buffers, stride)
    for q, qp in enumerate(p.qps):
        if a.op == "write_imm":
            mr = MR(p.pd, a.slots * stride, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
            mr.write(b"\0" * (a.slots * stride), a.slots * stride)
            bufs.append(mr)
        else:
            bufs.append(MR(p.pd, depth * a.size, e.IBV_ACCESS_LOCAL_WRITE))

    def post(q, k):  # receive k (write_imm: zero-length, its data lands in the ring)
        mr = bufs[q]
        if a.op == "write_imm":
            sge = SGE(mr.buf, 0, mr.lkey)
        else:
            sge = SGE(mr.buf + k * a.size, a.size, mr.lkey)
        p.qps[q].post_recv(RecvWR(wr_id=(q << 32) | k, num_sge=1, sg=[sge]))

    posted = [0] * a.queues
    for q in range(a.queues):
        for k in range(min(depth, len(todo[q]))):
            post(q, k)
            posted[q] += 1
    # Publish only once in RTR with receives posted (see the header), so wait for the sender.
    peer = wait_peer(a.peer, "tx", a.queues, p.deadline)
    for q, qp in enumerate(p.qps):
        p.connect(qp, peer["gid"], peer["tx"][q])
    rx = []
    for q, qp in enumerate(p.qps):
        entry = {"qpn": qp.qp_num, "psn": a.psn}
        if a.op == "write_imm":
            entry["ring"] = {"addr": bufs[q].buf, "rkey": bufs[q].rkey, "slots": a.slots,
                             "stride": stride, "slot_size": stride}
        rx.append(entry)
    write_json(a.local, {"gid": p.gid, "rx": rx})
    pat = Pattern(a.size)
    got = [0] * a.queues
    qp_index = {qp.qp_num: q for q, qp in enumerate(p.qps)}
    want_op = e.IBV_WC_RECV_RDMA_WITH_IMM if a.op == "write_imm" else e.IBV_WC_RECV
    what = lambda: "received %s of %d per queue" % (got, len(todo[0]))
    while sum(got) < sum(len(t) for t in todo):
        for wc in p.poll(what):
            q, k = wc.wr_id >> 32, wc.wr_id & 0xffffffff
            if qp_index.get(wc.qp_num) != q:
                raise Fail("completion of queue %d's receive on QP %d" % (q, wc.qp_num))
            if got[q] >= len(todo[q]):
                raise Fail("queue %d: more than %d messages" % (q, len(todo[q])))
            i = todo[q][got[q]]
            where = "queue %d message %d (seq %d)" % (q, i, q * a.count + i)
            if wc.opcode != want_op:
                raise Fail("%s: completion opcode %d, expected %d" % (where, wc.opcode, want_op))
            if wc.byte_len != a.size:
                raise Fail("%s: %d bytes, expected %d" % (where, wc.byte_len, a.size))
            if a.op == "write_imm":
                if not wc.wc_flags & e.IBV_WC_WITH_IMM:
                    raise Fail("%s: no immediate" % where)
                imm = socket.ntohl(wc.imm_data)  # imm_data is __be32
                if imm != i & 0xffffffff:
                    raise Fail("%s: immediate %d, expected %d" % (where, imm, i))
                data = bufs[q].read(a.size, (imm % a.slots) * stride)
            else:
                data = bufs[q].read(a.size, k * a.size)
            check_bytes(data, pat.message(q * a.count + i), where)
            got[q] += 1
            if posted[q] < len(todo[q]):
                post(q, k)
                posted[q] += 1
    log("received %d messages on %d queue pairs (%s), all bytes checked"
        % (sum(got), a.queues, p.describe()))


def main():
    ap = argparse.ArgumentParser(description="FPGA-style RDMA peer with hand-set QPs")
    ap.add_argument("mode", choices=["send", "recv"])
    ap.add_argument("--device", required=True)
    ap.add_argument("--gid-index", type=int, required=True)
    ap.add_argument("--local", required=True, help="this side's JSON file (written)")
    ap.add_argument("--peer", required=True, help="the other side's JSON file (read)")
    ap.add_argument("--transport", choices=["uc", "rc"], required=True)
    ap.add_argument("--op", choices=["write_imm", "send"], required=True)
    ap.add_argument("--count", type=int, required=True, help="messages per queue pair")
    ap.add_argument("--size", type=int, required=True, help="bytes per message")
    ap.add_argument("--queues", type=int, default=1)
    ap.add_argument("--mtu", type=int, default=1024, choices=sorted(MTUS))
    ap.add_argument("--psn", type=int, default=0, help="starting send PSN (24 bits)")
    ap.add_argument("--gap", type=int, default=None, help="message index left out")
    ap.add_argument("--slots", type=int, default=64, help="recv write_imm: ring slots")
    ap.add_argument("--timeout", type=float, default=30)
    a = ap.parse_args()
    if a.count < 1 or a.size < 1 or a.queues < 1 or a.slots < 1 or not 0 <= a.psn < 2**24:
        ap.error("count, size, queues and slots must be >= 1, psn within 24 bits")
    if a.gap is not None and not 0 <= a.gap < a.count or a.gap == 0 and a.count == 1:
        ap.error("--gap must be a message index below --count, and leave a message")
    try:
        os.remove(a.local)
    except FileNotFoundError:
        pass
    try:
        (run_send if a.mode == "send" else run_recv)(a)
    except (Fail, PyverbsError, OSError, KeyError, ValueError, TypeError) as err:
        log("%s failed: %s: %s" % (a.mode, type(err).__name__, err))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
