#!/usr/bin/env bash
# netdaq's software RoCE path against the kernel's own RoCE implementation (rdma_rxe), in the
# QEMU guest (tests/guest/guest-tests.sh --roce-sw). The lab (roce-sw-lab.sh): rxe on one end
# of a veth pair, netdaq on the other end, in a namespace of its own.
#
#   roce-sw-check.sh CLI
#
# 1. rxe sends: tests/guest/fpga_peer.py (pyverbs, a UC queue pair on rxe) posts RDMA WRITE
#    with immediate messages (several packets each at MTU 1024) to the queue pair netdaq's
#    software receiver owns (`CLI roce-recv`, afxdp engine, the QP file written like the rdma
#    engine's). Every frame arrives byte-identical, its immediate kept, nothing counted lost.
# 2. The same with packets lost on the wire (netem): netdaq's psn_lost equals the drops netem
#    counted, frames miss exactly those bytes (zero-filled,
#    presence bits clear), every byte present is right.
# 3. rxe receives: `CLI roce-send` (the sensor emulator, afxdp raw frames) writes messages
#    into a UC queue pair fpga_peer.py made on rxe; rxe checks every ICRC, fpga_peer.py checks
#    every byte and immediate. One packet (a message's FIRST) goes with a wrong ICRC: rxe
#    refuses it (so, UC, that whole message: the one gap fpga_peer.py expects), and its
#    rcvd_pkts (counted after the ICRC check) counts every packet but that one, the veth having
#    delivered all.
# Exit 0 when all passed; each part prints PASS/FAIL lines. Every run is bounded.
. "$(dirname "$0")/../../scripts/lib/ci.sh"  # netdaq_in_ci
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cli=${1:?usage: roce-sw-check.sh CLI}
lab=$here/roce-sw-lab.sh
py=/usr/bin/python3  # Debian's: pyverbs
peer=$here/fpga_peer.py
limit=${NDQ_ROCE_CHECK_TIMEOUT:-120}
frames=24       # messages per run
size=3000       # bytes per message: 3 packets at MTU 1024 (FIRST, MIDDLE, LAST with immediate)
drop_percent=15  # of the packets rxe sends, lost on the wire (netem)

work=$(mktemp -d /tmp/roce-sw-check.XXXXXX)
teardown() {
  "$lab" down || echo "roce-sw-check: FAIL teardown (roce-sw-lab.sh down)"
  rm -rf "$work"
}
trap teardown EXIT
trap 'exit 130' INT TERM
failed=()
fail() { echo "roce-sw-check: FAIL $*"; failed+=("$1"); }
pass() { echo "roce-sw-check: PASS $*"; }

lab_out=$("$lab" up) || { echo "roce-sw-check: FAIL roce-sw-lab.sh up"; exit 1; }
eval "$lab_out"
echo "roce-sw-check: lab up:" $lab_out

# netdaq's side: the afxdp engine on the namespace's veth end, reorder mode roce. Queue pair
# 0x100, rkey 0x1234, a window of 8 slots of 4 KiB at 0x10000000: what fpga_peer.py reads
# from the QP file roce-recv writes (the rdma engine's manual format).
write_config() {  # FILE
  cat > "$1" <<EOF
memory_regions:
  - {name: umem, kind: host, buf_size: 2048, num_bufs: 4096}
interfaces:
  - name: sensor
    engine: afxdp
    address: $NDQ_ROCE_NETDEV_B
    rx:
      queues:
        - {id: 0, mode: direct, batch_size: 64, ring_depth: 16, memory_regions: [umem]}
      flows:
        - {id: 0, queue: 0, match: {udp_dst: 4791}}
      reorder:
        - queue: 0
          mode: roce
          frames: host            # no GPU in the guest
          roce:
            queue_pairs:
              - {qpn: 0x100, rkey: 0x1234, base_va: 0x10000000, slots: 8, stride: 4096, slot_size: 4096, psn: 0}
            mtu: 1024
          max_open_frames: 4
          frame_buffers: 32       # a burst of 64 packets holds up to 21 frames of 3 packets
          frame_timeout_us: 2000000
    afxdp: {attach: auto, mode: auto, fill_ring: 2048, rx_ring: 2048}
EOF
}
write_config "$work/rx.yaml"

# JSON field of a file, by a dotted path (Debian's python3: no jq in the guest).
field() { "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d=d[int(k)] if isinstance(d,list) else d[k]
print(d)' "$1" "$2"; }

# rxe -> netdaq, with PERCENT % of the packets lost on the wire (0: none).
rxe_sends() {  # NAME PERCENT
  local name=$1 every=$2 rc_recv rc_send d=$work/$1
  mkdir -p "$d"
  "$lab" drop "$every" || { fail "$name: drop rule"; return; }
  timeout "$limit" ip netns exec "$NDQ_ROCE_NS" "$cli" roce-recv "$work/rx.yaml" --local-file "$d/netdaq-qp.json" \
    --gid "::ffff:$NDQ_ROCE_IP_B" --frames "$frames" --idle-ms 3000 --check-pattern --json > "$d/recv.json" 2> "$d/recv.log" &
  local recv_pid=$!
  timeout "$limit" "$py" "$peer" send --device "$NDQ_ROCE_DEV" --gid-index "$NDQ_ROCE_GID_INDEX" --local "$d/fpga.json" \
    --peer "$d/netdaq-qp.json" --transport uc --op write_imm --count "$frames" --size "$size" --timeout "$limit"
  rc_send=$?
  wait "$recv_pid"
  rc_recv=$?
  cat "$d/recv.log"
  cat "$d/recv.json"
  [ "$rc_send" = 0 ] || { fail "$name: fpga_peer.py send exit status $rc_send"; return; }
  # (2: fewer frames than sent, as it must be when a frame lost all its bytes)
  [ "$rc_recv" = 0 ] || { [ "$every" != 0 ] && [ "$rc_recv" = 2 ]; } || { fail "$name: roce-recv exit status $rc_recv"; return; }
  local dropped=0
  [ "$every" = 0 ] || dropped=$("$lab" dropped)
  "$lab" drop 0
  # What the receiver must have seen: all frames, pattern right, losses exactly the drops
  # (a drop at the very end leaves no later packet to show the gap: next_psn tells it).
  if ! "$py" - "$d/recv.json" "$frames" "$size" "$dropped" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); frames, size, dropped = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
packets = frames * ((size + 1023) // 1024)
qp = r["queue_pairs"][0]
errors = []
def want(what, got, expected):
    if got != expected: errors.append("%s: %s, expected %s" % (what, got, expected))
want("pattern errors", r["pattern_errors"], 0)
tail = packets - qp["next_psn"]
want("psn_lost + lost at the end", qp["psn_lost"] + tail, dropped)
for k in ("bad_icrc", "unknown_qp", "bad_rkey", "out_of_window", "malformed", "psn_duplicate", "psn_stale"):
    want(k, qp.get(k, r["counters"].get(k)), 0)
if dropped == 0:
    want("complete frames", r["complete"], frames)
    want("bytes missing", r["bytes_missing"], 0)
    want("immediates", r["immediates"], list(range(frames)))
else:
    # A lost FIRST takes its MIDDLE and LAST with it (no_first, as UC on an RDMA NIC); a frame
    # that lost every byte never shows. The bytes that came are the packets that were placed.
    if r["incomplete"] == 0 and r["frames"] == frames:
        errors.append("every frame complete although %d packets were dropped" % dropped)
    if qp["no_first"] > 2 * dropped: errors.append("no_first %d > 2 x %d drops" % (qp["no_first"], dropped))
    want("packets", qp["packets"], packets - dropped)
    want("placed", qp["placed"], packets - dropped - qp["no_first"])
    if dropped == 0 or dropped > packets // 2: errors.append("netem dropped %d of %d packets: not a useful run" % (dropped, packets))
if errors:
    print("; ".join(errors)); sys.exit(1)
EOF
  then
    fail "$name: netdaq's frames and counters"
    return
  fi
  pass "$name: $frames frames of $size B from rxe, $dropped packets dropped on the wire and counted"
}

# rdma statistic counter of rxe's port.
rxe_counter() { local out; out=$(rdma statistic show link "$NDQ_ROCE_DEV/1"); [[ $out =~ \ $1\ ([0-9]+) ]] && echo "${BASH_REMATCH[1]}"; }
veth_rx() { local n; read -r n < "/sys/class/net/$NDQ_ROCE_NETDEV_A/statistics/rx_packets"; echo "$n"; }

# netdaq's emulator -> rxe. Packet 37 (message 12's FIRST) goes with a wrong ICRC: rxe must
# refuse it, and with it (UC) the rest of message 12; fpga_peer.py expects exactly that gap.
rxe_receives() {
  local name=emulator-to-rxe d=$work/emulator rc_recv rc_send n
  local bad_every=37 gap=12
  mkdir -p "$d"
  cat > "$d/tx.yaml" <<EOF
memory_regions:
  - {name: umem, kind: host, buf_size: 2048, num_bufs: 8192}
interfaces:
  - name: sensor
    engine: afxdp
    address: $NDQ_ROCE_NETDEV_B
    tx:
      queues:
        - {id: 0, memory_regions: [umem]}
    afxdp: {tx_raw_frames: true}
EOF
  # (32 slots: a slot for every message, as the sensor does not wait for the receiver's checks.)
  # The sender's side of the QP file for fpga_peer.py: its GID and PSN (a UC sender's QPN is
  # not on the wire).
  echo "{\"gid\": \"::ffff:$NDQ_ROCE_IP_B\", \"tx\": [{\"qpn\": 512, \"psn\": 0}]}" > "$d/netdaq-qp.json"
  local rcvd0 veth0
  rcvd0=$(rxe_counter rcvd_pkts) veth0=$(veth_rx)
  timeout "$limit" "$py" "$peer" recv --device "$NDQ_ROCE_DEV" --gid-index "$NDQ_ROCE_GID_INDEX" --local "$d/fpga.json" \
    --peer "$d/netdaq-qp.json" --transport uc --op write_imm --count "$frames" --size "$size" --slots 32 \
    --gap "$gap" --timeout "$limit" &
  local recv_pid=$!
  # fpga_peer.py publishes its ring once its QP is ready to receive.
  for ((n = 0; n < 600; n++)); do
    [ -s "$d/fpga.json" ] && [[ $(< "$d/fpga.json") == *'"rx"'* ]] && break
    sleep 0.1
  done
  timeout "$limit" ip netns exec "$NDQ_ROCE_NS" "$cli" roce-send "$d/tx.yaml" --peer "$d/fpga.json" \
    --frames "$frames" --frame-bytes "$size" --op message --mtu 1024 --corrupt-icrc-every "$bad_every" \
    --dst-mac "$NDQ_ROCE_MAC_A" --src-ip "$NDQ_ROCE_IP_B" --json > "$d/send.json"
  rc_send=$?
  wait "$recv_pid"
  rc_recv=$?
  cat "$d/send.json"
  [ "$rc_send" = 0 ] || { fail "$name: roce-send exit status $rc_send"; return; }
  [ "$rc_recv" = 0 ] || { fail "$name: fpga_peer.py recv exit status $rc_recv (bytes or immediates wrong, or not the one gap)"; return; }
  local packets=$((frames * ((size + 1023) / 1024))) bad rcvd veth
  bad=$(field "$d/send.json" corrupted_icrc)
  rcvd=$(($(rxe_counter rcvd_pkts) - rcvd0)) veth=$(($(veth_rx) - veth0))
  [ "$bad" = 1 ] || { fail "$name: the emulator sent $bad packets with a bad ICRC, 1 expected"; return; }
  # rxe counts a packet received once its ICRC is right (before its own PSN checks).
  [ "$rcvd" = $((packets - bad)) ] || { fail "$name: rxe took $rcvd packets of $packets ($bad with a bad ICRC)"; return; }
  [ "$veth" -ge "$packets" ] || { fail "$name: the veth delivered $veth packets, fewer than the $packets sent"; return; }
  # (Debian's 6.1 rxe drops it without a log line: its counters and the gap are the proof.)
  pass "$name: rxe took every message but the one whose FIRST had a bad ICRC ($((frames - 1)) of $frames, bytes and immediates checked by fpga_peer.py); rxe counted $rcvd of the $packets packets the veth delivered"
}

rxe_sends rxe-to-netdaq 0
rxe_sends rxe-to-netdaq-with-drops "$drop_percent"
rxe_receives

if [ ${#failed[@]} -gt 0 ]; then
  echo "roce-sw-check: FAILED: ${failed[*]}"
  exit 1
fi
echo "roce-sw-check: all passed"
