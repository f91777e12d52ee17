#!/usr/bin/env bash
# Installs the Debian 12 packages netdaq needs to build, test and benchmark.
# Idempotent and quiet when everything is already there. Run as root (or with sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  iproute2 iperf3 socat python3 clang libclang-rt-14-dev valgrind procps linux-perf
  libxdp-dev libbpf-dev linux-libc-dev libpcap-dev          # afxdp engine, netdaq capture
  dpdk libdpdk-dev dpdk-dev tcpreplay iputils-ping ethtool util-linux  # the dpdk engine; real peers of the afxdp and dpdk tests (dpdk-testpmd is in dpdk-dev)
  sockperf                                                  # the peer of the ping-pong test and bench/pingpong_vs_peers.sh
  # The dpdk tap-flow tests in a QEMU guest with Debian's stock kernel (tests/guest/). Its
  # kernel and busybox-static are fetched with apt-get download into the build directory, not
  # installed (busybox-static would replace busybox).
  qemu-system-x86 cpio
  # RDMA over Soft-RoCE (rdma_rxe) in that guest (tests/guest/rdma-lab.sh, rdma-peers-check.sh):
  # rdma-core's verbs and rdma_cm tools and perftest as independent peers, pyverbs, the verbs
  # and rdma_cm headers; ibverbs-providers has rxe's user-space driver (iproute2 has `rdma`).
  ibverbs-providers ibverbs-utils rdmacm-utils perftest python3-pyverbs libibverbs-dev librdmacm-dev
  # DRM's uapi headers: the rdma GPU-memory tests get a real dma-buf from the guest's vgem
  libdrm-dev
  libucx-dev ucx-utils                                      # fleet: frames between processes over UCX (src/fleet)
  # The Python module (python/, tests/python): pybind11 and DLPack headers, NumPy, pytest, and
  # what `pip install .` needs offline (setuptools, wheel, venv)
  python3-dev pybind11-dev libdlpack-dev python3-numpy python3-pytest python3-setuptools python3-wheel
  python3-venv python3-pip
  # Packaging (tests/install): CPack's DEB generator needs dpkg-shlibdeps (dpkg-dev) and file;
  # the packages are installed into a fresh Debian 12 root made with debootstrap
  dpkg-dev file debootstrap
  # Operations (issue 17): the Prometheus endpoint is served with cpp-httplib; tests check the
  # exposition with promtool and scrape it with a real Prometheus server (both in prometheus)
  libcpp-httplib-dev prometheus
  # Wire formats (issue 31): Wireshark's own VITA-49 dissector (tshark's vrt) checks the
  # fields the test generators write
  tshark
  # RoCEv2 (issue 32): the ICRC is ISA-L's CRC-32; scapy's RoCE layer (scapy.contrib.roce)
  # checks netdaq's ICRC and frames (tests/protocols/roce_scapy_check.py)
  libisal-dev python3-scapy
  # The fleet's deployment (issue 36, tests/deploy): the Kubernetes API's types check deploy/k8s
  # offline (kubectl itself: below)
  python3-kubernetes
  # Video over RTP (issue 33): GStreamer sends and depayloads RFC 4175 (rtpvrawpay/depay in
  # -good, videotestsrc in -base) as the independent implementation netdaq is checked against
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
)

# kubectl renders and decodes deploy/k8s offline (tests/deploy). Debian's kubernetes-client only
# where no kubectl is on PATH: a kubectl from another package (e.g. a cloud SDK's) conflicts with it.
command -v kubectl >/dev/null || packages+=(kubernetes-client)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "netdaq: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
