#include "pcap_file.h"

#include <algorithm>
#include <cstdio>

namespace netdaq::cli {

bool PcapFile::open(const std::string& path, std::string* err) {
  dead_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, kSnaplen, PCAP_TSTAMP_PRECISION_NANO);
  if (!dead_) {
    *err = "pcap_open_dead failed";
    return false;
  }
  dumper_ = pcap_dump_open(dead_, path.c_str());
  if (!dumper_) {
    *err = "cannot write " + path + ": " + pcap_geterr(dead_);
    return false;
  }
  return true;
}

void PcapFile::write(std::span<const std::byte> frame, const timespec& ts) {
  pcap_pkthdr h{};
  h.ts.tv_sec = ts.tv_sec;
  h.ts.tv_usec = static_cast<suseconds_t>(ts.tv_nsec);  // nanoseconds in a nanosecond file
  h.len = static_cast<bpf_u_int32>(frame.size());
  h.caplen = std::min<bpf_u_int32>(h.len, kSnaplen);
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, reinterpret_cast<const u_char*>(frame.data()));
}

bool PcapFile::close(std::string* err) {
  bool ok = true;
  if (dumper_) {
    ok = pcap_dump_flush(dumper_) == 0 && !std::ferror(pcap_dump_file(dumper_));
    pcap_dump_close(dumper_);
    dumper_ = nullptr;
  }
  if (dead_) pcap_close(dead_);
  dead_ = nullptr;
  if (!ok && err) *err = "writing the pcap file failed";
  return ok;
}

}  // namespace netdaq::cli
