// A pcap file of Ethernet frames with nanosecond timestamps ("-": stdout).
#pragma once

#include <pcap/pcap.h>
#include <time.h>

#include <cstddef>
#include <span>
#include <string>

namespace netdaq::cli {

class PcapFile {
 public:
  PcapFile() = default;
  PcapFile(const PcapFile&) = delete;
  PcapFile& operator=(const PcapFile&) = delete;
  ~PcapFile() { close(nullptr); }

  bool open(const std::string& path, std::string* err);
  void write(std::span<const std::byte> frame, const timespec& ts);
  // Flushes and closes; false (and *err) if anything failed to reach the file.
  bool close(std::string* err);

 private:
  static constexpr int kSnaplen = 262144;  // libpcap's maximum: jumbo frames are kept whole
  pcap_t* dead_ = nullptr;
  pcap_dumper_t* dumper_ = nullptr;
};

}  // namespace netdaq::cli
