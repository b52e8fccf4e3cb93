// Checked arithmetic for sizes computed from file fields (a header's record
// count, a tensor's shape, a dtype's width): a result that does not fit is bad
// input naming the field, never a wrap-around that passes a size check and
// reads past a buffer. And the memory bound: a computation whose buffers would
// exceed the machine's memory is refused up front by require_memory, with the
// estimate and the bound in the message, instead of a std::bad_alloc (or the
// OOM killer) after seconds of work.
//
// Header-only, with no compiler-specific code beyond the overflow builtins g++
// and clang share (the libFuzzer harnesses compile the readers with clang).
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "dsa/error.hpp"

namespace dsa {

// a * b; throws InvalidInput(field, ...) when the product does not fit in T.
template <std::integral T>
T checked_mul(T a, T b, std::string_view field) {
  T r;
  if (__builtin_mul_overflow(a, b, &r))
    throw InvalidInput(std::string(field), std::to_string(a) + " x " + std::to_string(b) + " overflows " +
                                               std::to_string(sizeof(T) * 8) + "-bit arithmetic");
  return r;
}

// a + b; throws InvalidInput(field, ...) when the sum does not fit in T.
template <std::integral T>
T checked_add(T a, T b, std::string_view field) {
  T r;
  if (__builtin_add_overflow(a, b, &r))
    throw InvalidInput(std::string(field), std::to_string(a) + " + " + std::to_string(b) + " overflows " +
                                               std::to_string(sizeof(T) * 8) + "-bit arithmetic");
  return r;
}

// The product of every value (a tensor's element count from its shape), checked
// step by step; a value outside T's range (a negative dimension) is refused too.
template <std::integral T, class Range>
T checked_product(const Range& values, std::string_view field) {
  T r = 1;
  for (const auto& v : values) {
    if (!std::in_range<T>(v)) throw InvalidInput(std::string(field), std::to_string(v) + " is out of range");
    r = checked_mul<T>(r, T(v), field);
  }
  return r;
}

// "1.5 GiB", "12 MiB", "800 bytes".
inline std::string byte_size_text(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  char text[48];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return text;
}

// The memory one computation may take: the machine's physical memory, or less
// when the process has a limit (RLIMIT_AS, RLIMIT_DATA) or DSA_MEMORY_LIMIT
// (bytes, with an optional K, M or G suffix) says so.
inline uint64_t memory_bound_bytes() {
  uint64_t bound = std::numeric_limits<uint64_t>::max();
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) bound = uint64_t(pages) * uint64_t(page);
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit limit{};
    if (getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && uint64_t(limit.rlim_cur) < bound)
      bound = uint64_t(limit.rlim_cur);
  }
  if (const char* text = std::getenv("DSA_MEMORY_LIMIT"); text && *text) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    const unsigned long long scale = *end == 'K' ? 1ull << 10 : *end == 'M' ? 1ull << 20 : *end == 'G' ? 1ull << 30 : 1;
    if (end != text && value > 0 && value <= std::numeric_limits<uint64_t>::max() / scale && value * scale < bound)
      bound = value * scale;
  }
  return bound;
}

// Refuses a computation estimated to need `bytes` when that exceeds
// memory_bound_bytes(): InvalidInput(argument) with `what`, the estimate and the bound.
inline void require_memory(const std::string& argument, double bytes, const std::string& what) {
  const uint64_t bound = memory_bound_bytes();
  if (bytes >= 0 && bytes <= double(bound)) return;
  throw InvalidInput(argument, what + " needs an estimated " + byte_size_text(bytes < 0 ? 9.3e18 : bytes) +
                                   ", more than the memory bound of " + byte_size_text(double(bound)) +
                                   " (this machine's memory or the process limit; DSA_MEMORY_LIMIT lowers it)");
}

}  // namespace dsa
