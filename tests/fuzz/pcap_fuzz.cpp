// libFuzzer target: PcapReader, the pcap engine's capture-file reader (src/engines/pcap), and
// the frame parser it hands records to.
//
// Each input is a whole capture file (pcap, pcapng or anything else), read from memory. The
// reader must either refuse it at open with an Error naming the file, or return records until
// the end or an error, and never crash, hang or read outside what libpcap gave it:
//   - every record's caplen bytes are readable (each byte is read; AddressSanitizer watches),
//     record numbers count 1, 2, 3, ..., and find_udp_payload's payload lies inside the record;
//   - an error names the file and the number of the record that failed ("<fuzz>: record N: ");
//   - rewind() then reads the same number of records with the same sizes (pcap; pcapng, whose
//     sections keep state, only without crashing: the engine reopens files instead).
// Any violation prints what failed and aborts, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engines/pcap/pcap_reader.h"
#include "net/frame_headers.h"
#include "netdaq/status.h"

namespace {

using netdaq::detail::PcapReader;
using netdaq::detail::PcapRecord;
using netdaq::detail::ReadStatus;

constexpr const char* kName = "<fuzz>";
constexpr size_t kMaxRecords = 4096;  // a bound per input: the fuzzer wants many small runs

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "pcap_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Reads up to kMaxRecords records; returns their caplens, and in *status how it stopped.
std::vector<uint32_t> read_all(PcapReader& r, ReadStatus* status) {
  std::vector<uint32_t> sizes;
  PcapRecord rec;
  volatile unsigned sum = 0;
  while (sizes.size() < kMaxRecords) {
    *status = r.next(rec);
    if (*status != ReadStatus::record) return sizes;
    if (rec.number != sizes.size() + 1) fail("record number", std::to_string(rec.number));
    for (uint32_t i = 0; i < rec.caplen; ++i) sum = sum + static_cast<unsigned>(rec.data[i]);
    const auto u = netdaq::detail::find_udp_payload(rec.data, rec.caplen);
    if (u.ok && (u.offset > rec.caplen || u.size > rec.caplen - u.offset))
      fail("payload outside the record", std::to_string(u.offset) + "+" + std::to_string(u.size));
    sizes.push_back(rec.caplen);
  }
  *status = ReadStatus::end;  // bounded
  return sizes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<uint8_t> copy(data, data + size);  // fmemopen wants a writable buffer
  std::FILE* f = fmemopen(copy.data(), copy.size(), "rb");
  if (!f) return 0;
  PcapReader r;
  try {
    r.open_stream(f, kName);
  } catch (const netdaq::Error& e) {
    if (std::string(e.what()).rfind(std::string(kName) + ": ", 0) != 0) fail("open error without the file", e.what());
    return 0;
  }
  ReadStatus st = ReadStatus::end;
  const std::vector<uint32_t> first = read_all(r, &st);
  if (st == ReadStatus::error) {
    const std::string want = std::string(kName) + ": record " + std::to_string(first.size() + 1) + ": ";
    if (std::string(r.error()).rfind(want, 0) != 0) fail("error without file and record", r.error());
    return 0;
  }
  if (first.size() >= kMaxRecords) return 0;
  if (!r.rewind()) return 0;
  const std::vector<uint32_t> second = read_all(r, &st);
  // A stream is seeked back to its first record: for pcapng with several sections that is not
  // where the reader's section state came from, so only pcap files must read the same again.
  const bool pcapng = size >= 4 && std::memcmp(data, "\x0a\x0d\x0d\x0a", 4) == 0;
  if (!pcapng && second != first) fail("a second pass differs", std::to_string(first.size()) + " vs " + std::to_string(second.size()));
  return 0;
}
