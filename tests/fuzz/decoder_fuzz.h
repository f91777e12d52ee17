// What the wire-format decoder fuzzers (spead_fuzz, vita49_fuzz) share: a failed check names
// the input's size and split and aborts (libFuzzer keeps the input), and exact-size copies of
// the segments so that ASan sees any read past their end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

namespace ndqfuzz {

[[noreturn]] inline void fail(const char* fuzzer, const char* what, size_t size, size_t cut, int line) {
  std::fprintf(stderr, "%s: %s (input %zu bytes, first segment %zu bytes, line %d)\n", fuzzer, what, size, cut, line);
  std::abort();
}

// An exact-size heap copy (ASan: any access past its end is an error).
struct Buf {
  Buf(const uint8_t* src, size_t n) : bytes(new std::byte[n ? n : 1]), size(n) {
    if (n) std::memcpy(bytes.get(), src, n);
  }
  std::span<const std::byte> span() const { return {bytes.get(), size}; }
  std::unique_ptr<std::byte[]> bytes;
  size_t size;
};

}  // namespace ndqfuzz

// CHECK(cond) in a function with `size` and `cut` in scope, after defining NDQ_FUZZER "name".
#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) ::ndqfuzz::fail(NDQ_FUZZER, #cond, size, cut, __LINE__); \
  } while (0)
