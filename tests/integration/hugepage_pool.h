// 2 MiB hugepages for one test: reserved in the kernel's pool and given back afterwards.
#pragma once

#include <string>

namespace ndqtest {

// Hugepages for one test: makes at least `pages` 2 MiB pages free, and gives back what it
// reserved when destroyed. Tests that use it hold a lock file, so they never race each other
// over nr_hugepages.
class Hugepages {
 public:
  explicit Hugepages(unsigned pages);
  ~Hugepages();
  Hugepages(const Hugepages&) = delete;
  Hugepages& operator=(const Hugepages&) = delete;
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  static unsigned total();
  static unsigned free_pages();
  static void set_total(unsigned n);

 private:
  int lock_fd_ = -1;
  unsigned before_ = 0;
  bool ok_ = false;
  std::string why_;
};

}  // namespace ndqtest
