// libFuzzer target: read_params (src/engines/rdma/qp_params.h), the rdma engine's reader of
// the JSON peer file (rdma.peer_file) that a remote peer or FPGA tool writes, with connect:
// manual.
//
// Each input is the file's contents; it is written to one file per process (in a fresh
// directory under $TMPDIR or /tmp, removed at exit) and read back with read_params, which must
//   - return nullopt exactly when the file holds nothing but whitespace;
//   - or throw netdaq::Error whose message names the file;
//   - or return parameters within the ranges the engine relies on: every queue's qpn in
//     1..2^24-1 and psn below 2^24, a ring with slots > 0 and stride >= slot_size > 0, credits
//     only with a ring;
// never crash, never throw anything else (an escaping exception aborts: libFuzzer reports it).
// Parameters it returns round-trip: write_params to a second file, read_params of that file
// gives the same fields (gid bytes, every queue's qpn, psn, ring, credits, credit), and the
// second file reads back the same again.
// Any violation prints what failed and aborts, which libFuzzer reports as a crash.
//
// A number with a fraction or exponent, a negative number or a bool in an integer field is an
// Error (the format's numbers are JSON integers; the seed float_out_of_range.bin is such a file:
// it once was converted with a cast, undefined behaviour that this fuzzer found).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engines/rdma/qp_params.h"
#include "netdaq/status.h"

namespace {

using netdaq::detail::rdma::LinkParams;
using netdaq::detail::rdma::QueueParams;

std::string g_dir, g_peer, g_local;

[[noreturn]] void fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "peer_file_fuzz: %s%s%s\n", what, detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}
#define CHECK(cond)               \
  do {                            \
    if (!(cond)) fail(#cond);     \
  } while (0)

void remove_files() {
  std::remove(g_peer.c_str());
  std::remove(g_local.c_str());
  std::remove((g_local + ".tmp").c_str());
  ::rmdir(g_dir.c_str());
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) fail("cannot create", path);
  if (size && std::fwrite(data, 1, size, f) != size) fail("cannot write", path);
  if (std::fclose(f) != 0) fail("cannot write", path);
}

bool blank(const uint8_t* data, size_t size) {
  for (size_t i = 0; i < size; ++i)
    if (!std::strchr(" \t\r\n", data[i]) || data[i] == 0) return false;
  return true;
}

void check_ranges(const LinkParams& p) {
  for (const auto* queues : {&p.rx, &p.tx}) {
    for (const QueueParams& q : *queues) {
      CHECK(q.qpn >= 1 && q.qpn <= 0xffffff);
      CHECK(q.psn <= 0xffffff);
      if (q.ring) CHECK(q.ring->slots > 0 && q.ring->slot_size > 0 && q.ring->stride >= q.ring->slot_size);
      CHECK(!q.credits || q.ring);
    }
  }
}

bool same(const QueueParams& a, const QueueParams& b) {
  if (a.qpn != b.qpn || a.psn != b.psn || a.credits != b.credits) return false;
  if (a.ring.has_value() != b.ring.has_value() || a.credit.has_value() != b.credit.has_value()) return false;
  if (a.ring && (a.ring->magic != b.ring->magic || a.ring->version != b.ring->version || a.ring->addr != b.ring->addr ||
                 a.ring->rkey != b.ring->rkey || a.ring->slots != b.ring->slots || a.ring->stride != b.ring->stride ||
                 a.ring->slot_size != b.ring->slot_size))
    return false;
  if (a.credit && (a.credit->magic != b.credit->magic || a.credit->version != b.credit->version ||
                   a.credit->addr != b.credit->addr || a.credit->rkey != b.credit->rkey ||
                   a.credit->reserved != b.credit->reserved))
    return false;
  return true;
}

bool same(const LinkParams& a, const LinkParams& b) {
  if (std::memcmp(a.gid.raw, b.gid.raw, sizeof a.gid.raw) != 0) return false;
  if (a.rx.size() != b.rx.size() || a.tx.size() != b.tx.size()) return false;
  for (size_t i = 0; i < a.rx.size(); ++i)
    if (!same(a.rx[i], b.rx[i])) return false;
  for (size_t i = 0; i < a.tx.size(); ++i)
    if (!same(a.tx[i], b.tx[i])) return false;
  return true;
}

// read_params of a file this process wrote: it must give parameters (anything else aborts).
LinkParams reread(const std::string& path) {
  std::optional<LinkParams> p;
  try {
    p = netdaq::detail::rdma::read_params(path);
  } catch (const netdaq::Error& e) {
    fail("read_params rejects what write_params wrote", e.what());
  }
  if (!p) fail("read_params finds nothing in what write_params wrote", path);
  return *p;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/netdaq_peer_file_fuzz.XXXXXX";
  if (!::mkdtemp(templ.data())) fail("mkdtemp failed", templ);
  g_dir = templ;
  g_peer = g_dir + "/peer.json";
  g_local = g_dir + "/local.json";
  std::atexit(remove_files);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  write_file(g_peer, data, size);
  std::optional<LinkParams> p;
  try {
    p = netdaq::detail::rdma::read_params(g_peer);
  } catch (const netdaq::Error& e) {
    const std::string what = e.what();
    if (what.find(g_peer) == std::string::npos) fail("the error does not name the file", what);
    return 0;
  }
  if (!p) {
    if (!blank(data, size)) fail("nullopt for a file that is not blank");
    return 0;
  }
  if (blank(data, size)) fail("parameters from a blank file");
  check_ranges(*p);

  netdaq::detail::rdma::write_params(g_local, *p);
  const LinkParams q = reread(g_local);
  if (!same(*p, q)) fail("write_params + read_params changed the parameters");
  netdaq::detail::rdma::write_params(g_local, q);
  if (!same(reread(g_local), q)) fail("a second round trip changed the parameters");
  return 0;
}
