// Reads pcap and pcapng capture files record by record through libpcap, with nanosecond
// timestamps. Opening throws Error (not_found, system, invalid_config) naming the file; reading never throws: a truncated or
// corrupt record gives ReadStatus::error and a message naming the file and the record number.
// Used by the pcap engine's rx port and by the fuzzer (tests/fuzz/pcap_fuzz.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

struct pcap;

namespace netdaq::detail {

struct PcapRecord {
  const std::byte* data = nullptr;  // caplen bytes, valid until the next next() or rewind()
  uint32_t caplen = 0;              // bytes in the file
  uint32_t len = 0;                 // bytes on the wire (caplen < len: cut short by the capture)
  uint64_t ts_ns = 0;               // capture time, nanoseconds since the epoch
  uint64_t number = 0;              // 1-based record number in the file
};

enum class ReadStatus : uint8_t { record, end, error };

class PcapReader {
 public:
  static constexpr int kEthernet = 1;  // DLT_EN10MB

  PcapReader() = default;
  ~PcapReader();
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;

  // Throws Error "FILE: cannot open the capture: ..." / "FILE: not a pcap or pcapng file: ...".
  void open(const std::string& path);
  // The same on an open stream, which the reader then owns (closes); `name` names it in messages.
  void open_stream(std::FILE* f, const std::string& name);

  // The next record; never throws, never allocates (libpcap reads into its own buffer).
  ReadStatus next(PcapRecord& r) noexcept;
  // Back to the first record (a new pass of the file): a file is opened again (pcapng keeps
  // per-section state), a stream is seeked back. False (and error()) when that fails.
  bool rewind() noexcept;

  int link_type() const noexcept { return link_type_; }
  const char* link_type_name() const noexcept;
  const std::string& name() const noexcept { return name_; }
  // After ReadStatus::error: "FILE: record N: what libpcap said".
  const char* error() const noexcept { return error_; }
  uint64_t records() const noexcept { return records_; }  // read in this pass

 private:
  void close() noexcept;
  void after_open();

  struct pcap* p_ = nullptr;
  std::string name_;
  std::string path_;      // open(): rewind opens the file again
  int link_type_ = 0;
  long data_start_ = -1;  // file offset of the first record (rewind)
  uint64_t records_ = 0;
  char error_[512] = {};
};

}  // namespace netdaq::detail
