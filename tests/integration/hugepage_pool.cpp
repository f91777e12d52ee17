#include "hugepage_pool.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>

namespace ndqtest {

namespace {
const char* kNr = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
const char* kFree = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";
unsigned read_unsigned(const char* path) {
  std::ifstream in(path);
  unsigned v = 0;
  in >> v;
  return v;
}
}  // namespace

unsigned Hugepages::total() { return read_unsigned(kNr); }
unsigned Hugepages::free_pages() { return read_unsigned(kFree); }
void Hugepages::set_total(unsigned n) {
  std::ofstream out(kNr);
  out << n << "\n";
}

Hugepages::Hugepages(unsigned pages) {
  lock_fd_ = ::open("/run/netdaq-test-hugepages.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (lock_fd_ >= 0) flock(lock_fd_, LOCK_EX);
  before_ = total();
  const unsigned have = free_pages();
  if (have < pages) set_total(before_ + (pages - have));
  ok_ = free_pages() >= pages;
  if (!ok_)
    why_ = "cannot reserve " + std::to_string(pages) + " hugepages of 2 MiB (" + std::to_string(free_pages()) +
           " free after asking; memory too fragmented?)";
}

Hugepages::~Hugepages() {
  set_total(before_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

}  // namespace ndqtest
