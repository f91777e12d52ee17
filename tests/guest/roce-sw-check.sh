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
#    every byte and immediate. Before every 4th message the emulator sends a copy with a wrong
#    ICRC and other bytes under the same PSN: had rxe taken it, the good one would be a
#    duplicate and the bytes wrong. rxe's rcvd_pkts counts the good packets only, the veth
#    delivered the bad ones too, and the kernel log says "bad ICRC".
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

# netdaq's emulator -> rxe; every 4th message preceded by a copy with a bad ICRC.
rxe_receives() {
  local name=emulator-to-rxe d=$work/emulator rc_recv rc_send
  mkdir -p "$d"
  cat > "$d/tx.yaml" <<EOF
memory_regions:
  - {name: umem, kind: host, buf_size: 4096, num_bufs: 2048}
interfaces:
  - name: sensor
    engine: afxdp
    address: $NDQ_ROCE_NETDEV_B
    tx:
      queues:
        - {id: 0, batch_size: 32, ring_depth: 8, memory_regions: [umem]}
      destination: udp://$NDQ_ROCE_IP_A:4791
    afxdp: {attach: auto, mode: auto, raw_frames: true, dst_mac: "$NDQ_ROCE_MAC_A"}
EOF
  local rcvd0 veth0 bad
  rcvd0=$(rxe_counter rcvd_pkts) veth0=$(veth_rx)
  dmesg -c > /dev/null 2>&1
  timeout "$limit" "$py" "$peer" recv --device "$NDQ_ROCE_DEV" --gid-index "$NDQ_ROCE_GID_INDEX" --local "$d/fpga.json" \
    --peer "$d/netdaq-qp.json" --transport uc --op write_imm --count "$frames" --size "$size" --slots 8 --timeout "$limit" &
  local recv_pid=$!
  timeout "$limit" ip netns exec "$NDQ_ROCE_NS" "$cli" roce-send "$d/tx.yaml" --peer "$d/fpga.json" \
    --local-file "$d/netdaq-qp.json" --frames "$frames" --frame-bytes "$size" --op message --mtu 1024 \
    --bad-icrc-every 4 --json > "$d/send.json"
  rc_send=$?
  wait "$recv_pid"
  rc_recv=$?
  cat "$d/send.json"
  [ "$rc_send" = 0 ] || { fail "$name: roce-send exit status $rc_send"; return; }
  [ "$rc_recv" = 0 ] || { fail "$name: fpga_peer.py recv exit status $rc_recv (bytes or immediates wrong, or missing)"; return; }
  local packets=$((frames * ((size + 1023) / 1024))) rcvd veth
  bad=$(field "$d/send.json" bad_icrc_packets)
  rcvd=$(($(rxe_counter rcvd_pkts) - rcvd0)) veth=$(($(veth_rx) - veth0))
  [ "$bad" -ge 1 ] || { fail "$name: the emulator sent no packet with a bad ICRC"; return; }
  [ "$rcvd" = "$packets" ] || { fail "$name: rxe took $rcvd packets, $packets good ones were sent ($bad bad)"; return; }
  [ "$veth" -ge $((packets + bad)) ] || { fail "$name: the veth delivered $veth packets, fewer than $packets + $bad"; return; }
  dmesg | grep -q "bad ICRC" || { fail "$name: no 'bad ICRC' in the kernel log"; return; }
  pass "$name: rxe took all $packets packets of $frames messages (bytes and immediates checked by fpga_peer.py) and refused $bad with a bad ICRC"
}

rxe_sends rxe-to-netdaq 0
rxe_sends rxe-to-netdaq-with-drops "$drop_percent"
rxe_receives

if [ ${#failed[@]} -gt 0 ]; then
  echo "roce-sw-check: FAILED: ${failed[*]}"
  exit 1
fi
echo "roce-sw-check: all passed"
