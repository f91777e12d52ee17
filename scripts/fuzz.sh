#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz: one per parser of untrusted bytes) with clang, ASan
# and UBSan into ./build-fuzz (or $NETDAQ_FUZZ_BUILD_DIR) and runs them through ctest (label
# fuzz):
#   netdaq_config_fuzz     the config loader (Config::parse)
#   netdaq_frame_fuzz      the received-frame parser and flow matcher (afxdp, dpdk rx)
#   netdaq_payload_fuzz    the netdaq payload format (parse/verify, pattern, round trip)
#   netdaq_sequence_fuzz   the GPU frame tracker's sequence-number bookkeeping (FrameTracker)
#   netdaq_span_fuzz       the placement model's frame tracker (SpanTracker: spans, presence, window)
#   netdaq_spead_fuzz      the SPEAD decoder (src/protocols/spead.h: header, item pointers, spans)
#   netdaq_vita49_fuzz     the VITA-49 decoder (src/protocols/vita49.h: VRT headers, sample spans)
#   netdaq_st2110_rtp_video_fuzz  the RTP video decoder (src/protocols/rtp_video.h: RTP, SRDs, pgroup spans)
#   netdaq_roce_sw_fuzz    the RoCEv2 wire format (src/protocols/roce.h: BTH/RETH/ImmDt, ICRC, frames)
#   netdaq_peer_file_fuzz  the rdma engine's JSON peer-file reader (read_params); only where
#                          the rdma engine is built (libibverbs-dev and librdmacm-dev)
#   netdaq_fleet_wire_fuzz the fleet's wire format (src/fleet/wire.h); only where UCX is found
#   netdaq_pcap_fuzz       the pcap engine's capture-file reader (PcapReader, libpcap)
# Each replays its seed corpus, then fuzzes for NETDAQ_FUZZ_SECONDS seconds (default 45; 0:
# replay only). 45 s, not more, because ctest runs the ten fuzz tests two at a time on CI's 2
# cores, about 5 x 45 s: with the build (warm ccache) the whole script stays under 6 minutes.
# Only the library and the fuzzers are compiled, not the rest of the test suite, and the
# library without the afxdp and dpdk engines: the parsers are core code (the config loader
# checks afxdp and dpdk options whether or not those engines are built) or the rdma engine's,
# and those two engines would double the build (about 430 s of CPU instead of 220 s).
# Exits non-zero when the build or any fuzz test fails; crashing inputs are kept in
# build-fuzz/tests/fuzz/artifacts/. Extra args go to ctest. Needs clang and libclang-rt-14-dev
# (libFuzzer), which scripts/install-deps.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${NETDAQ_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${NETDAQ_FUZZ_SECONDS:-45}

echo "== fuzz: build (clang, ASan + UBSan) in $build_dir =="
# -U LIBBPF_FOUND: src/engines/socket/sources.cmake looks libbpf up only while LIBBPF_FOUND is not
# cached, so with the afxdp engine off (which otherwise looks it up first) a second configure
# of the same build directory lacks the PkgConfig::LIBBPF target and fails; forgetting the
# cached result makes it look again.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -U LIBBPF_FOUND \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DNETDAQ_BUILD_FUZZ=ON -DNETDAQ_BUILD_BENCH=OFF -DNETDAQ_WITH_CUDA=OFF \
      -DNETDAQ_WITH_AFXDP=OFF -DNETDAQ_WITH_DPDK=OFF \
      -DNETDAQ_FUZZ_SECONDS="$seconds" >/dev/null
targets=(netdaq_config_fuzz netdaq_frame_fuzz netdaq_payload_fuzz netdaq_sequence_fuzz netdaq_span_fuzz netdaq_spead_fuzz netdaq_vita49_fuzz netdaq_st2110_rtp_video_fuzz netdaq_roce_sw_fuzz)
# Read whole, then searched: `cmake --build --target help | grep -q` would fail under pipefail
# when grep exits at its first match and the build tool dies of SIGPIPE.
known_targets=$(cmake --build "$build_dir" --target help)
# tests/fuzz/CMakeLists.txt adds the peer-file fuzzer only where the rdma engine is built.
if grep -q '^netdaq_peer_file_fuzz:' <<<"$known_targets"; then
  targets+=(netdaq_peer_file_fuzz)
else
  echo "fuzz: no rdma engine in this build (libibverbs-dev, librdmacm-dev): peer_file not fuzzed"
fi
if grep -q '^netdaq_pcap_fuzz:' <<<"$known_targets"; then
  targets+=(netdaq_pcap_fuzz)
fi
if grep -q '^netdaq_fleet_wire_fuzz:' <<<"$known_targets"; then
  targets+=(netdaq_fleet_wire_fuzz)
fi
cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}"

echo "== fuzz: seed corpora, then ${seconds} s per fuzzer (${targets[*]}) =="
artifacts_dir=$build_dir/tests/fuzz/artifacts
rm -rf "$artifacts_dir"  # only this run's failing inputs are listed below (ctest recreates it)
status=0
(cd "$build_dir" && ctest -L fuzz --output-on-failure -j"$(nproc)" "$@") || status=$?
if [ "$status" -ne 0 ]; then
  echo "fuzz: FAILED (ctest exit $status)" >&2
  artifacts=$(find "$artifacts_dir" -type f 2>/dev/null || true)
  if [ -n "$artifacts" ]; then
    echo "fuzz: failing inputs (rerun one: $build_dir/tests/fuzz/netdaq_<fuzzer>_fuzz FILE):" >&2
    echo "$artifacts" | sed 's/^/  /' >&2
  fi
  exit "$status"
fi
