// Device code shared by every way of running a PlaceJob (kernel per burst, CUDA graph,
// persistent kernel): copy one packet's samples into its output slot, converting formats.
// Memory-bound: every thread issues up to 4 independent vector loads before its stores.
// __host__ __device__ so tests can run it on the CPU, one "thread" after another: threads
// never read what another wrote, so that order gives the same bytes as the GPU.
#pragma once

#include <cuda_runtime.h>

#include "gpu/place_job.h"
#include "gpu/sample_conversion.h"
#include "gpu/sample_convert.cuh"

namespace netdaq::gpu {
namespace detail {

constexpr unsigned kUnroll = 4;  // loads in flight per thread per step

template <unsigned V> struct VecOf;
template <> struct VecOf<16> { using type = uint4; };
template <> struct VecOf<8> { using type = uint2; };
template <> struct VecOf<4> { using type = uint32_t; };
template <> struct VecOf<2> { using type = uint16_t; };
template <> struct VecOf<1> { using type = uint8_t; };

// Byte swap of every E-byte sample inside a vector (E = 1: none).
template <unsigned E> NDQ_HD uint32_t swap_e(uint32_t w) {
  if constexpr (E == 2) return swap_halves(w);
  else if constexpr (E == 4) return swap_word(w);
  else return w;
}
template <unsigned E> NDQ_HD uint4 swap_e(uint4 v) { return {swap_e<E>(v.x), swap_e<E>(v.y), swap_e<E>(v.z), swap_e<E>(v.w)}; }
template <unsigned E> NDQ_HD uint2 swap_e(uint2 v) { return {swap_e<E>(v.x), swap_e<E>(v.y)}; }
template <unsigned E> NDQ_HD uint16_t swap_e(uint16_t v) {
  return E == 2 ? static_cast<uint16_t>((v >> 8) | (v << 8)) : v;
}
template <unsigned E> NDQ_HD uint8_t swap_e(uint8_t v) { return v; }

// nv vectors of V bytes, thread tid of nt taking tid, tid + nt, ...; loads kUnroll, then stores.
template <unsigned V, unsigned E>
NDQ_HD void copy_vectors(const std::byte* s, std::byte* d, uint32_t nv, unsigned tid, unsigned nt) {
  using T = typename VecOf<V>::type;
  const T* src = reinterpret_cast<const T*>(s);
  T* dst = reinterpret_cast<T*>(d);
  for (uint32_t i = tid; i < nv; i += kUnroll * nt) {
    T r[kUnroll];
NDQ_UNROLL
    for (unsigned u = 0; u < kUnroll; ++u)
      if (i + u * nt < nv) r[u] = load(src + i + u * nt);
NDQ_UNROLL
    for (unsigned u = 0; u < kUnroll; ++u)
      if (i + u * nt < nv) store(dst + i + u * nt, swap_e<E>(r[u]));
  }
}

// n bytes (a multiple of E; s and d E-aligned and equal modulo V): E-sized head until d is
// V-aligned, V-byte body, E-sized tail.
template <unsigned V, unsigned E>
NDQ_HD void copy_aligned(const std::byte* s, std::byte* d, uint32_t n, unsigned tid, unsigned nt) {
  uint32_t head = static_cast<uint32_t>((V - (addr(d) & (V - 1))) & (V - 1));
  if (head > n) head = n;
  if (head) copy_vectors<E, E>(s, d, head / E, tid, nt);
  const uint32_t nv = (n - head) / V;
  copy_vectors<V, E>(s + head, d + head, nv, tid, nt);
  const uint32_t done = head + nv * V;
  if (done < n) copy_vectors<E, E>(s + done, d + done, (n - done) / E, tid, nt);
}

// Word i (0..7) of the pair lo:hi, i = k + q with k known at compile time once unrolled:
// selects, not an indexed register array (which would go to local memory).
template <unsigned K>
NDQ_HD uint32_t word_at(const uint32_t (&w)[8], unsigned q) {
  return q == 0 ? w[K] : q == 1 ? w[K + 1] : q == 2 ? w[K + 2] : w[K + 3];
}

// Bytes m .. m + 15 (m = 1..15) of the 32 bytes lo:hi (little endian).
NDQ_HD uint4 funnel(const uint4& lo, const uint4& hi, unsigned m) {
  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const unsigned q = m / 4, r = 8 * (m % 4);
  uint32_t o[4];
  const uint32_t lo_w[4] = {word_at<0>(w, q), word_at<1>(w, q), word_at<2>(w, q), word_at<3>(w, q)};
  const uint32_t hi_w[4] = {word_at<1>(w, q), word_at<2>(w, q), word_at<3>(w, q), word_at<4>(w, q)};
NDQ_UNROLL
  for (unsigned k = 0; k < 4; ++k) {
#ifdef __CUDA_ARCH__
    o[k] = __funnelshift_r(lo_w[k], hi_w[k], r);
#else
    o[k] = r ? (lo_w[k] >> r) | (hi_w[k] << (32 - r)) : lo_w[k];
#endif
  }
  return {o[0], o[1], o[2], o[3]};
}

// Raw bytes from s to a 16-byte aligned d whose addresses differ modulo 16 (m = addr(s) & 15,
// not 0): nv 16-byte stores, each from the two aligned 16-byte vectors of s it straddles, so
// the reads stay 16 bytes wide whatever the payload's offset (over PCIe a narrower load costs
// a transaction of its own; a UDP payload is 42 bytes into its buffer). Each vector is loaded
// by two threads: passing it with a warp shuffle instead made ptxas spill (the kernel has 64
// registers). From device memory (staging, the staged launch's placement) the second load is
// an L2 hit; from host memory it is a second PCIe read (8 KB packets 42 bytes in, placed in
// place: 23 GB/s against 46 aligned, bench/gpu/README.md), which is why host packets go
// through the staged launch, whose gather keeps each packet's offset modulo 16. The last
// store reads vector nv, which holds bytes of the packet: in the same 16 aligned bytes, it
// cannot fault.
// U > 1: U vectors' loads in flight before their stores (a caller reading host memory over
// PCIe, one round trip per U vectors; the registers are the caller's to afford).
template <unsigned U = 1>
NDQ_HD void copy_shifted(const std::byte* s, std::byte* d, uint32_t nv, unsigned tid, unsigned nt) {
  const unsigned m = static_cast<unsigned>(addr(s) & 15);
  const uint4* src = reinterpret_cast<const uint4*>(s - m);
  uint4* dst = reinterpret_cast<uint4*>(d);
  for (uint32_t i = tid; i < nv; i += U * nt) {
    uint4 lo[U], hi[U];
NDQ_UNROLL
    for (unsigned u = 0; u < U; ++u)
      if (i + u * nt < nv) {
        lo[u] = load(src + i + u * nt);
        hi[u] = load(src + i + u * nt + 1);
      }
NDQ_UNROLL
    for (unsigned u = 0; u < U; ++u)
      if (i + u * nt < nv) store(dst + i + u * nt, funnel(lo[u], hi[u], m));
  }
}

// Copies n bytes, swapping the bytes of every E-byte sample when E > 1. The vector width is
// the widest that src and dst share modulo 16; pointers not E-aligned go byte by byte. Raw
// bytes that do not share it (a UDP payload 42 bytes into its buffer) go through
// copy_shifted<ShiftUnroll>.
template <unsigned E, unsigned ShiftUnroll = 1>
NDQ_HD void copy_samples(const std::byte* s, std::byte* d, uint32_t n, unsigned tid, unsigned nt) {
  if constexpr (E == 1) {
    if (((addr(s) ^ addr(d)) & 15) != 0) {
      uint32_t head = static_cast<uint32_t>((16 - (addr(d) & 15)) & 15);
      if (head > n) head = n;
      if (head) copy_vectors<1, 1>(s, d, head, tid, nt);
      const uint32_t nv = (n - head) / 16;
      if (nv) copy_shifted<ShiftUnroll>(s + head, d + head, nv, tid, nt);
      const uint32_t done = head + nv * 16;
      if (done < n) copy_vectors<1, 1>(s + done, d + done, n - done, tid, nt);
      return;
    }
  }
  if (((addr(s) | addr(d)) & (E - 1)) != 0) {
    for (uint32_t k = tid; k < n / E; k += nt)
      for (unsigned b = 0; b < E; ++b) d[k * E + b] = static_cast<std::byte>(load_byte(s + k * E + (E - 1 - b)));
    return;
  }
  const uint64_t mis = (addr(s) ^ addr(d)) & 15;
  if (mis == 0) copy_aligned<16, E>(s, d, n, tid, nt);
  else if ((mis & 7) == 0) copy_aligned<8, E>(s, d, n, tid, nt);
  else if ((mis & 3) == 0) copy_aligned<4, E>(s, d, n, tid, nt);
  else if constexpr (E <= 2) {
    if ((mis & 1) == 0) copy_aligned<2, E>(s, d, n, tid, nt);
    else if constexpr (E == 1) copy_aligned<1, 1>(s, d, n, tid, nt);
  }
}

NDQ_HD void zero_fill(std::byte* d, uint32_t n, unsigned tid, unsigned nt) {
  uint32_t head = static_cast<uint32_t>((16 - (addr(d) & 15)) & 15);
  if (head > n) head = n;
  for (uint32_t i = tid; i < head; i += nt) d[i] = std::byte{0};
  const uint32_t nv = (n - head) / 16;
  uint4* v = reinterpret_cast<uint4*>(d + head);
  for (uint32_t i = tid; i < nv; i += nt) store(v + i, uint4{0, 0, 0, 0});
  for (uint32_t i = head + nv * 16 + tid; i < n; i += nt) d[i] = std::byte{0};
}

// Widest power of two (4..cap) dividing p's address; 0 when p is not 4-aligned.
NDQ_HD unsigned piece_of(const void* p, unsigned cap) {
  const uint64_t a = addr(p);
  unsigned piece = 0;
  for (unsigned v = 4; v <= cap; v *= 2)
    if ((a & (v - 1)) == 0) piece = v;
  return piece;
}

template <unsigned NW>
NDQ_HD void load_words(const std::byte* p, unsigned piece, uint32_t (&w)[NW]) {
  if constexpr (NW % 4 == 0) {
    if (piece == 16) {
NDQ_UNROLL
      for (unsigned j = 0; j < NW / 4; ++j) {
        const uint4 v = load(reinterpret_cast<const uint4*>(p) + j);
        w[4 * j] = v.x, w[4 * j + 1] = v.y, w[4 * j + 2] = v.z, w[4 * j + 3] = v.w;
      }
      return;
    }
  }
  if constexpr (NW % 2 == 0) {
    if (piece >= 8) {
NDQ_UNROLL
      for (unsigned j = 0; j < NW / 2; ++j) {
        const uint2 v = load(reinterpret_cast<const uint2*>(p) + j);
        w[2 * j] = v.x, w[2 * j + 1] = v.y;
      }
      return;
    }
  }
NDQ_UNROLL
  for (unsigned j = 0; j < NW; ++j) w[j] = load(reinterpret_cast<const uint32_t*>(p) + j);
}

template <unsigned NW>
NDQ_HD void store_words(std::byte* p, unsigned piece, const uint32_t (&w)[NW]) {
  static_assert(NW % 4 == 0);
  if (piece == 16) {
NDQ_UNROLL
    for (unsigned j = 0; j < NW / 4; ++j)
      store(reinterpret_cast<uint4*>(p) + j, uint4{w[4 * j], w[4 * j + 1], w[4 * j + 2], w[4 * j + 3]});
  } else if (piece == 8) {
NDQ_UNROLL
    for (unsigned j = 0; j < NW / 2; ++j) store(reinterpret_cast<uint2*>(p) + j, uint2{w[2 * j], w[2 * j + 1]});
  } else {
NDQ_UNROLL
    for (unsigned j = 0; j < NW; ++j) store(reinterpret_cast<uint32_t*>(p) + j, w[j]);
  }
}

// Loads per thread per step of a conversion: enough for ~64 bytes of input in flight, at
// least 4 and at most 8 (8 x 16-byte output vectors; registers stay under the 64 that
// __launch_bounds__(256, 4) allows).
template <SampleFormat In, SampleFormat Out>
constexpr unsigned unit_unroll = 64 / unit_in_bytes<In, Out> < 4 ? 4 : 64 / unit_in_bytes<In, Out> > 8 ? 8
                                 : 64 / unit_in_bytes<In, Out>;

// The unit's input: 2 bytes (int4 -> fp32) or whole words, as wide as `piece` allows.
template <unsigned IB, unsigned NW>
NDQ_HD void load_unit(const std::byte* p, unsigned piece, uint32_t (&w)[NW]) {
  if constexpr (IB == 2) w[0] = load(reinterpret_cast<const uint16_t*>(p));
  else load_words(p, piece, w);
}

// n samples In -> Out. Whole units (the samples of one 16-byte output vector) when src is
// aligned to the unit's input word (4 bytes, 2 for a 2-byte unit) and dst to 4 bytes: thread
// tid of nt takes units tid, tid + nt, ..., so a warp's loads and its 16-byte stores are
// contiguous; it issues all its U loads before converting and storing. The rest (or
// everything, when misaligned) goes sample by sample.
template <SampleFormat In, SampleFormat Out, bool Big>
NDQ_HD void convert_samples(const std::byte* s, std::byte* d, uint32_t n, unsigned tid, unsigned nt) {
  constexpr unsigned S = unit_samples<Out>, IB = unit_in_bytes<In, Out>, IW = unit_in_words<In, Out>;
  constexpr unsigned U = unit_unroll<In, Out>, in_align = IB < 4 ? IB : 4;
  const unsigned pin = IB < 4 ? IB : piece_of(s, IB < 16 ? IB : 16), pout = piece_of(d, 16);
  uint32_t first = 0;  // first sample of the sample-by-sample part
  if ((addr(s) & (in_align - 1)) == 0 && pin && pout) {
    const uint32_t nu = n / S;
    for (uint32_t i = tid; i < nu; i += U * nt) {
      uint32_t w[U][IW];
NDQ_UNROLL
      for (unsigned u = 0; u < U; ++u)
        if (i + u * nt < nu) load_unit<IB>(s + uint64_t{i + u * nt} * IB, pin, w[u]);
NDQ_UNROLL
      for (unsigned u = 0; u < U; ++u) {
        if (i + u * nt < nu) {
          float f[S];
          uint32_t o[4];
          decode_unit<In, Big>(w[u], f);
          encode_unit<Out>(f, o);
          store_words(d + uint64_t{i + u * nt} * 16, pout, o);
        }
      }
    }
    first = nu * S;
  }
  const bool aligned = (addr(d) & (bits_of(Out) / 8 - 1)) == 0;
  for (uint32_t k = first + tid; k < n; k += nt) store_sample<Out>(d, k, decode_sample<In, Big>(s, k), aligned);
}

// The per-packet work of one conversion, its sizes fixed for the whole job.
// threads(): how many threads one packet keeps busy with kUnroll loads each.
template <unsigned E>
struct CopyPath {
  uint32_t n;  // bytes
  NDQ_HD uint32_t threads() const { return (n + 16 * kUnroll - 1) / (16 * kUnroll); }
  // The same path for a span of in_bytes (span jobs: every entry its own length).
  NDQ_HD CopyPath for_bytes(uint32_t in_bytes) const { return {in_bytes & ~(E - 1)}; }
  NDQ_HD void operator()(const std::byte* s, std::byte* d, unsigned tid, unsigned nt) const {
    copy_samples<E>(s, d, n, tid, nt);
  }
};
template <SampleFormat In, SampleFormat Out, bool Big>
struct ConvertPath {
  uint32_t n;  // samples
  // Sized by the output: one thread per U output vectors of 16 bytes.
  static constexpr uint32_t kPerThread = unit_samples<Out> * unit_unroll<In, Out>;
  NDQ_HD ConvertPath for_bytes(uint32_t in_bytes) const { return {static_cast<uint32_t>(uint64_t{in_bytes} * 8 / bits_of(In))}; }
  NDQ_HD uint32_t threads() const { return (n + kPerThread - 1) / kPerThread; }
  NDQ_HD void operator()(const std::byte* s, std::byte* d, unsigned tid, unsigned nt) const {
    convert_samples<In, Out, Big>(s, d, n, tid, nt);
  }
};
struct ZeroPath {  // unsupported pair: every slot zero-filled
  uint32_t n;
  NDQ_HD ZeroPath for_bytes(uint32_t in_bytes) const { return {in_bytes}; }  // (never for spans: refused by config)
  NDQ_HD uint32_t threads() const { return (n + 16 * kUnroll - 1) / (16 * kUnroll); }
  NDQ_HD void operator()(const std::byte*, std::byte* d, unsigned tid, unsigned nt) const { zero_fill(d, n, tid, nt); }
};

// Calls run(path) with the path object for the job's formats (one switch per job, not per packet).
template <class Run>
NDQ_HD void with_path(const PlaceJob& job, Run&& run) {
  const Conversion c = conversion_of(job.in_format, job.out_format, job.in_order);
  const uint64_t conv = converted_size(job.in_bytes, job.in_format, job.out_format);
  const uint32_t n = static_cast<uint32_t>(conv < job.out_slot_bytes ? conv : job.out_slot_bytes);
  if (c == Conversion::copy) return run(CopyPath<1>{n});
  if (c == Conversion::swap16) return run(CopyPath<2>{n & ~1u});
  if (c == Conversion::swap32) return run(CopyPath<4>{n & ~3u});
  if (c == Conversion::unsupported) return run(ZeroPath{job.out_slot_bytes});
  const uint64_t in_n = uint64_t{job.in_bytes} * 8 / bits_of(job.in_format);
  const uint64_t out_n = uint64_t{job.out_slot_bytes} * 8 / bits_of(job.out_format);
  const uint32_t ns = static_cast<uint32_t>(in_n < out_n ? in_n : out_n);
  using F = SampleFormat;
  const bool big = job.in_order == ByteOrder::big;
#define NDQ_OUTS(IN, BIG)                                                    \
  switch (job.out_format) {                                                  \
    case F::fp16: return run(ConvertPath<IN, F::fp16, BIG>{ns});             \
    case F::bf16: return run(ConvertPath<IN, F::bf16, BIG>{ns});             \
    default: return run(ConvertPath<IN, F::fp32, BIG>{ns});                  \
  }
  if (job.in_format == F::int4) NDQ_OUTS(F::int4, false)
  if (job.in_format == F::int8) NDQ_OUTS(F::int8, false)
  if (big) NDQ_OUTS(F::int16, true)
  NDQ_OUTS(F::int16, false)
#undef NDQ_OUTS
}

// Where entry e's samples are read from: src, or its staging place in a staged launch.
NDQ_HD const std::byte* samples_at(uint64_t src, uint32_t index, std::byte* stage, uint32_t place_bytes) {
  if (stage && index) return stage + staged_at(index - 1, src, place_bytes);
  return reinterpret_cast<const std::byte*>(src);
}
NDQ_HD const std::byte* samples_of(const PlacementEntry& e, std::byte* stage, uint32_t in_bytes) {
  return samples_at(e.src, e.stage, stage, in_bytes);
}

template <class Path>
NDQ_HD void place_with(const PlaceJob& job, const PlacementEntry& e, const Path& path, unsigned tid, unsigned nt,
                       std::byte* stage = nullptr) {
  std::byte* dst = job.out + static_cast<uint64_t>(e.dst_slot) * job.out_slot_bytes;
  if (e.src == 0) zero_fill(dst, job.out_slot_bytes, tid, nt);
  else path(samples_of(e, stage, job.in_bytes), dst, tid, nt);
}

// A staged launch's first pass: entry e's packet from host memory into its staging place, as
// whole aligned 16-byte vectors: the place keeps src's offset modulo 16 and has room for the
// vectors that hold the packet's first and last bytes, so no byte is read alone over PCIe.
// Those two vectors' other bytes are read too; being in the same 16 aligned bytes as bytes
// of the packet, they cannot fault.
// n bytes at src into staging place `index` (1-based; 0: not staged) of places sized for
// place_bytes (the job's in_bytes: a slot, or the largest span).
NDQ_HD void gather_bytes(uint64_t src, uint32_t n, uint32_t index, std::byte* stage, uint32_t place_bytes, unsigned tid,
                         unsigned nt) {
  if (src == 0 || index == 0) return;
  const uint64_t first = src & ~uint64_t{15}, end = (src + n + 15) & ~uint64_t{15};
  std::byte* to = stage + staged_at(index - 1, src, place_bytes) - (src & 15);
  copy_vectors<16, 1>(reinterpret_cast<const std::byte*>(first), to, static_cast<uint32_t>((end - first) / 16), tid, nt);
}

// The threads of a block split into groups of `size` (a power of two), one entry per group at
// a time: group g of block b takes entries b * groups + g, then every `stride` further.
struct EntryGroups {
  unsigned size = 1, g = 0;
  uint64_t first = 0, stride = 0;
  bool idle = false;  // threads left over when size does not divide nthreads
  NDQ_HD unsigned rank(unsigned tid) const { return tid - g * size; }
};
// want_threads: the threads one entry keeps busy with kUnroll loads each (path.threads()).
NDQ_HD EntryGroups entry_groups(uint32_t count, uint32_t want_threads, unsigned block, unsigned nblocks, unsigned tid,
                                unsigned nthreads) {
  const uint64_t spare = count ? uint64_t{nblocks} * nthreads / count : nthreads;  // threads per entry if all at once
  const uint64_t want = spare > want_threads ? spare : want_threads;
  EntryGroups e;
  while (e.size * 2 <= want && e.size * 2 <= nthreads) e.size *= 2;
  const unsigned groups = nthreads / e.size;
  e.g = tid / e.size;
  e.idle = e.g >= groups;
  e.first = uint64_t{block} * groups + e.g;
  e.stride = uint64_t{nblocks} * groups;
  return e;
}

// Threads per packet: enough that each has about kUnroll loads (path.threads()), more when
// the job is small enough for every packet to get more threads at once (a whole block per
// packet for a burst of up to nblocks packets), never more than a block. Groups are powers
// of two; group g of block b takes entries b * groups + g, then every nblocks * groups further.
// Staged launches (stage set) run twice with the same grouping: gather, a block barrier,
// place; a block places exactly the entries it gathered.
struct JobRun {
  const PlaceJob& job;
  unsigned block, nblocks, tid, nthreads;
  std::byte* stage = nullptr;
  bool gather = false;
  template <class Path>
  NDQ_HD void operator()(const Path& path) const {
    const EntryGroups eg = entry_groups(job.count, path.threads(), block, nblocks, tid, nthreads);
    if (eg.idle) return;
    const unsigned t = eg.rank(tid);
    for (uint64_t i = eg.first; i < job.count; i += eg.stride) {
      const PlacementEntry& e = job.entries[i];
      if (gather) gather_bytes(e.src, job.in_bytes, e.stage, stage, job.in_bytes, t, eg.size);
      else place_with(job, e, path, t, eg.size, stage);
    }
  }
};

// JobRun for span jobs (PlaceJob::spans): the same grouping, threads per entry sized by the
// job's largest span (in_bytes); each entry's path resized to its own length (for_bytes), the
// format switch staying outside the entry loop (inside it, every path's code in one loop body
// spilled registers and halved the bandwidth).
struct SpanRun {
  const PlaceJob& job;
  unsigned block, nblocks, tid, nthreads;
  std::byte* stage = nullptr;
  bool gather = false;
  template <class Path>
  NDQ_HD void operator()(const Path& path) const {
    const EntryGroups eg = entry_groups(job.count, path.threads(), block, nblocks, tid, nthreads);
    if (eg.idle) return;
    const unsigned t = eg.rank(tid);
    for (uint64_t i = eg.first; i < job.count; i += eg.stride) {
      const SpanEntry& e = job.span_entries[i];
      std::byte* dst = job.out + e.dst;
      if (gather) gather_bytes(e.src, e.bytes, e.stage, stage, job.in_bytes, t, eg.size);
      else if (e.src == 0) zero_fill(dst, e.bytes, t, eg.size);
      else path.for_bytes(e.bytes)(samples_at(e.src, e.stage, stage, job.in_bytes), dst, t, eg.size);
    }
  }
};

struct EntryOnce {
  const PlaceJob& job;
  const PlacementEntry& e;
  unsigned tid, nthreads;
  template <class Path>
  NDQ_HD void operator()(const Path& path) const { place_with(job, e, path, tid, nthreads); }
};

}  // namespace detail

// Places entry e with the threads tid = 0..nthreads-1 of the calling group (a warp, a block
// or part of one). src == 0, or a pair conversion_of() calls unsupported, zero-fills the
// slot. Otherwise it writes min(converted size, out_slot_bytes) bytes, in whole samples.
NDQ_HD void place_entry(const PlaceJob& job, const PlacementEntry& e, unsigned tid, unsigned nthreads) {
  detail::with_path(job, detail::EntryOnce{job, e, tid, nthreads});
}

// The whole job by nblocks blocks of nthreads threads, each block splitting into groups of
// threads, one packet per group at a time (see JobRun). The format switch is outside the entry loop: each path's
// loop is compiled on its own, which keeps registers low.
NDQ_HD void place_job_threads(const PlaceJob& job, unsigned block, unsigned nblocks, unsigned tid, unsigned nthreads) {
  if (job.spans) return detail::with_path(job, detail::SpanRun{job, block, nblocks, tid, nthreads});
  detail::with_path(job, detail::JobRun{job, block, nblocks, tid, nthreads});
}

__device__ __forceinline__ void place_job(const PlaceJob& job, unsigned block, unsigned nblocks) {
  place_job_threads(job, block, nblocks, threadIdx.x, blockDim.x);
}

// A staged launch, one pass (gather: entries with a stage index copy their packet into
// `stage`; else place, reading those from `stage`). Every thread of a block must finish the
// gather pass before any starts placing (place_staged_job: a block barrier between them).
NDQ_HD void staged_job_threads(const PlaceJob& job, std::byte* stage, bool gather, unsigned block, unsigned nblocks,
                               unsigned tid, unsigned nthreads) {
  if (job.spans) return detail::with_path(job, detail::SpanRun{job, block, nblocks, tid, nthreads, stage, gather});
  detail::with_path(job, detail::JobRun{job, block, nblocks, tid, nthreads, stage, gather});
}

// Gather and placement in one launch: a staging copy without a kernel, an event and a
// stream wait of its own per job.
__device__ __forceinline__ void place_staged_job(const PlaceJob& job, std::byte* stage, unsigned block,
                                                 unsigned nblocks) {
  staged_job_threads(job, stage, true, block, nblocks, threadIdx.x, blockDim.x);
  __syncthreads();
  staged_job_threads(job, stage, false, block, nblocks, threadIdx.x, blockDim.x);
}

}  // namespace netdaq::gpu
