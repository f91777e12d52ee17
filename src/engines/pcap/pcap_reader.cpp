#include "engines/pcap/pcap_reader.h"

#include <pcap/pcap.h>

#include <cerrno>
#include <cstring>

#include "netdaq/status.h"

namespace netdaq::detail {

PcapReader::~PcapReader() { close(); }

void PcapReader::close() noexcept {
  if (p_) pcap_close(p_);  // closes the stream too
  p_ = nullptr;
}

void PcapReader::open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    const int err = errno;
    throw Error(err == ENOENT ? Errc::not_found : Errc::system, path + ": cannot open the capture: " + std::strerror(err));
  }
  open_stream(f, path);
  path_ = path;
}

void PcapReader::open_stream(std::FILE* f, const std::string& name) {
  close();
  name_ = name;
  path_.clear();
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  p_ = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (!p_) {
    std::fclose(f);
    throw Error(Errc::invalid_config, name + ": not a readable pcap or pcapng file: " + errbuf);
  }
  after_open();
}

void PcapReader::after_open() {
  link_type_ = pcap_datalink(p_);
  records_ = 0;
  error_[0] = '\0';
  data_start_ = std::ftell(pcap_file(p_));
}

const char* PcapReader::link_type_name() const noexcept {
  const char* n = pcap_datalink_val_to_name(link_type_);
  return n ? n : "unknown";
}

ReadStatus PcapReader::next(PcapRecord& r) noexcept {
  if (!p_) return ReadStatus::end;
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  const int rc = pcap_next_ex(p_, &h, &data);
  if (rc == 1) {
    ++records_;
    r.data = reinterpret_cast<const std::byte*>(data);
    r.caplen = h->caplen;
    r.len = h->len;
    // Nanosecond precision was asked for: tv_usec holds nanoseconds.
    r.ts_ns = static_cast<uint64_t>(h->ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(h->ts.tv_usec);
    r.number = records_;
    return ReadStatus::record;
  }
  if (rc == PCAP_ERROR_BREAK) return ReadStatus::end;  // end of file
  std::snprintf(error_, sizeof error_, "%s: record %llu: %s", name_.c_str(),
                static_cast<unsigned long long>(records_ + 1), pcap_geterr(p_));
  return ReadStatus::error;
}

bool PcapReader::rewind() noexcept {
  if (!p_) return false;
  records_ = 0;
  if (path_.empty()) {  // a stream: back to the first record of the first section
    if (data_start_ >= 0 && std::fseek(pcap_file(p_), data_start_, SEEK_SET) == 0) return true;
    std::snprintf(error_, sizeof error_, "%s: cannot seek back to the first record for the next pass: %s",
                  name_.c_str(), std::strerror(errno));
    return false;
  }
  // A file is opened afresh (once per pass, not per record): pcapng keeps per-section state
  // (interfaces, byte order) that seeking back would not restore.
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  std::FILE* f = std::fopen(path_.c_str(), "rb");
  pcap_t* p = f ? pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf) : nullptr;
  if (!p) {
    if (f) std::fclose(f);
    std::snprintf(error_, sizeof error_, "%s: cannot open it again for the next pass: %s", name_.c_str(),
                  f ? errbuf : std::strerror(errno));
    return false;
  }
  pcap_close(p_);
  p_ = p;
  return true;
}

}  // namespace netdaq::detail
