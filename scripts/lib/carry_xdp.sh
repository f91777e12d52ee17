# libxdp, libbpf and ip on the GPU machine (the afxdp engine, the namespaced tests and benches):
# .carry/xdp from scripts/make-carry.sh; the eBPF objects come compiled (no clang there).
# Sourced from the repository root by scripts/gpu-check.sh and bench/gpu/device_steps.sh; adds
# the cmake option to the caller's `prefix` array.
if [ -d .carry/xdp ]; then
  export PKG_CONFIG_PATH=$PWD/.carry/xdp/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=$PWD/.carry/xdp-root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PATH=$PWD/.carry/xdp/bin:$PATH
  prefix+=(-DNETDAQ_BPF_CLANG=$PWD/.carry/xdp/bin/bpf-object)
fi
