// Checked arithmetic for sizes computed from file fields (a header's record
// count, a tensor's shape, a dtype's width): a result that does not fit is bad
// input naming the field, never a wrap-around that passes a size check and
// reads past a buffer.
#pragma once

#include <concepts>
#include <cstdint>
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

}  // namespace dsa
