// Bit-level views of fp32 (and bf16-valued fp32) for the comparators: the raw
// pattern, and the ordered-integer mapping on which ulp distances are defined.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>

namespace dsa::oracle {

inline uint32_t float_bits(float v) { return std::bit_cast<uint32_t>(v); }
inline float float_from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }

// Maps fp32 patterns onto the integers so that adjacent floats differ by one:
// +x -> bits, -x -> -(bits without sign). Both zeros map to 0, so the distance
// between -0.0 and +0.0 is 0 ulp although their bits differ; +-inf are one
// step beyond the largest finite values.
inline int64_t ordered_fp32(float v) {
  const uint32_t b = float_bits(v);
  const int64_t magnitude = b & 0x7FFFFFFFu;
  return (b & 0x80000000u) ? -magnitude : magnitude;
}

// The same on the upper 16 bits (bf16). Exact for bf16-representable values;
// for others it counts the bf16 steps between their truncations.
inline int64_t ordered_bf16(float v) {
  const uint32_t b = float_bits(v) >> 16;
  const int64_t magnitude = b & 0x7FFFu;
  return (b & 0x8000u) ? -magnitude : magnitude;
}

// Distance in fp32 (or bf16) ulps; none when either value is NaN.
inline std::optional<uint64_t> ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::nullopt;
  const int64_t d = ordered_fp32(a) - ordered_fp32(b);
  return uint64_t(d < 0 ? -d : d);
}
inline std::optional<uint64_t> ulp_distance_bf16(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::nullopt;
  const int64_t d = ordered_bf16(a) - ordered_bf16(b);
  return uint64_t(d < 0 ? -d : d);
}

}  // namespace dsa::oracle
