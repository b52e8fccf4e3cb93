// Order-preserving integer keys of the radix top-k (the CPU twins and the
// GPU kernels).
//
// A radix select works on histograms of integer images of the values: a
// larger image means a larger value. These keys follow the SPEC 6 order
// (dsa::topk_order_key): -inf lowest, -0 == +0, every NaN equal and above
// +inf. vLLM's own image (`convert_to_uint32`) ranks -0 below +0 and a
// negative-signed NaN below -inf; our kernels and the twins use the SPEC
// order so that a NaN-dominated row is an ordinary row of equal keys.
//
// No value maps below order_key(-inf) = 0x007fffff, so the kernels use key 0
// for "no entry" (a column past the row, an empty slot).
//
// Branch-free (selects only) so that loops over a row vectorize on the host.
#pragma once

#include <cstdint>

#include "dsa/common/hd.hpp"

namespace dsa::common {

// order_key (below) in two ways, both the same value as dsa::topk_order_key for every float (tests hold
// them equal). By the bits: -0 and NaN told apart by their patterns, eight SASS instructions. By a float
// compare of the sign, which -0 (then +0's key) and NaN fail: five (ncu of the short-row kernel,
// SELECT_RESULTS.md run 40); but only where denormals compare as IEEE numbers, as they do in nvcc's code
// (no -ftz): a host under DAZ (torch.set_flush_denormal) or a GPU that flushes them would take a
// negative denormal for 0.
DSA_HD inline uint32_t order_key_by_bits(float v) {
  const uint32_t bits = float_bits(v);
  const uint32_t b = bits == 0x80000000u ? 0u : bits;
  const uint32_t key = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  return (bits & 0x7fffffffu) > 0x7f800000u ? 0xffffffffu : key;
}
DSA_HD inline uint32_t order_key_by_compare(float v) {
  const uint32_t bits = float_bits(v);
  const uint32_t key = v < 0.0f ? ~bits : (bits | 0x80000000u);
  return v != v ? 0xffffffffu : key;
}
// The SPEC 6 order's key of v: by a compare in CUDA device code, by the bits everywhere else.
DSA_HD inline uint32_t order_key(float v) {
#if defined(__CUDA_ARCH__)
  return order_key_by_compare(v);
#else
  return order_key_by_bits(v);
#endif
}

// The larger of a and b as order_key ranks them (a NaN above everything, -0 and +0 alike), by two float
// compares and a select: order_key(key_max_by_compare(a, b)) == max(order_key(a), order_key(b)) where
// denormals compare as IEEE numbers (order_key above).
DSA_HD inline float key_max_by_compare(float a, float b) { return (b != b || b > a) ? b : a; }

// The key of "no entry": below every value's key.
inline constexpr uint32_t kNoEntryKey = 0;
inline constexpr uint32_t kMinusInfKey = 0x007fffffu;
inline constexpr uint32_t kPlusInfKey = 0xff800000u;
inline constexpr uint32_t kNaNKey = 0xffffffffu;  // order_key of every NaN, above +inf
inline constexpr uint32_t kMinusInfBits = 0xff800000u;  // -inf's float bits

// The largest key of v[lo .. hi) (order_key(-inf) for none). In CUDA device code the maximum is taken
// over the values and keyed once (a candidate block's score: one order_key a block); everywhere else over
// the keys, for the denormals' sake.
DSA_HD inline uint32_t max_order_key(const float* v, int64_t lo, int64_t hi) {
#if defined(__CUDA_ARCH__)
  float m = bits_float(kMinusInfBits);
  for (int64_t i = lo; i < hi; ++i) m = key_max_by_compare(m, v[i]);
  return order_key(m);
#else
  uint32_t m = kMinusInfKey;
  for (int64_t i = lo; i < hi; ++i) {
    const uint32_t k = order_key(v[i]);
    m = k > m ? k : m;
  }
  return m;
#endif
}

// The coarse digit of a key, 11 bits: its sign, then its exponent and 5
// mantissa bits as fp16 has them (exponents past fp16's range clamped), so
// it is monotone in the key: 0 for -inf and the smallest values,
// kCoarseBins - 1 for +inf, NaN and the largest. The key's own top 11 bits
// (sign, 8 exponent bits, 2 of mantissa) would put most of a row of N(0, 1)
// logits in a few dozen bins; this digit spreads it over hundreds, so a
// histogram's atomics collide less and its threshold bin holds few entries.
// The exponent and the 5 mantissa bits are one field (bits 18 to 30), so the
// clamp to exponents 112..143 is a min and a max of it.
inline constexpr int kCoarseBins = 2048;
DSA_HD inline uint32_t coarse_digit(uint32_t key) {
  constexpr uint32_t kLow = 112u << 5, kHigh = (143u << 5) | 31u;
  const uint32_t field = (key & 0x7fffffffu) >> 18;
  const uint32_t magnitude = (field < kLow ? kLow : field > kHigh ? kHigh : field) - kLow;
  return ((key >> 21) & 1024u) | magnitude;
}

// The largest key whose coarse digit is at most d (0 below every digit, the
// largest key past them): "digit > d" is "key > coarse_digit_floor(d)" for
// every key but kNoEntryKey, since the digit is monotone in the key, so a scan
// against a threshold bin compares keys and computes no digit. In closed form
// (a binary search per row cost 512 threads x 3 x 32 digits, 8 instructions a
// key of a 128k row): a digit's keys are one run, which ends where its 5
// mantissa bits (or, for magnitude 0, exponent 112's first 5 mantissa bits) end.
DSA_HD inline uint32_t coarse_digit_floor(int d) {
  if (d < 0) return 0u;
  if (d >= kCoarseBins - 1) return 0xffffffffu;
  const uint32_t sign = uint32_t(d) >> 10, magnitude = uint32_t(d) & 1023u;
  if (magnitude == 1023u) return (sign << 31) | 0x7fffffffu;
  const uint32_t first = (((magnitude >> 5) + 112u) << 23) | ((magnitude & 31u) << 18);
  return (sign << 31) | (first + (1u << 18) - 1u);
}

// fp32 -> fp16 bits with round-to-nearest-even and overflow to infinity, as
// CUDA's __float2half. NaN is not handled here (callers test it first).
DSA_HD inline uint16_t float_to_half_bits(float v) {
  const uint32_t x = float_bits(v);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  // Normal fp16: rebias the exponent, round the 13 dropped bits to even.
  const uint32_t normal = (ax - 0x38000000u + 0x0fffu + ((ax >> 13) & 1u)) >> 13;
  // Subnormal or zero: adding 0.5f aligns the fp16 quantum 2^-24 with the
  // last bit of the sum, so the FPU's own rounding is round-to-nearest-even.
  const uint32_t subnormal = float_bits(bits_float(ax) + 0.5f) - 0x3f000000u;
  const uint32_t h = ax >= 0x477ff000u   ? 0x7c00u  // |v| >= 65520 (the midpoint above 65504), inf
                     : ax >= 0x38800000u ? normal
                                         : subnormal;
  return uint16_t(sign | h);
}

// The fp16 analogue of order_key: monotone in the SPEC order (a ranking at or
// below b gives a key at or below b's), NaN highest, both zeros equal.
DSA_HD inline uint16_t half_order_key(float v) {
  const uint32_t bits = float_bits(v);
  const uint32_t h = float_to_half_bits(v);
  const uint32_t magnitude = h & 0x7fffu;
  const uint32_t key = (h & 0x8000u) && magnitude ? (~h & 0xffffu) : (magnitude | 0x8000u);
  return uint16_t((bits & 0x7fffffffu) > 0x7f800000u ? 0xffffu : key);
}

// vLLM top_k_per_row's step 0: 2048 bins, the top 11 bits of the fp16 key
// (sign, exponent and 5 mantissa bits of the value rounded to fp16).
DSA_HD inline uint32_t coarse_bin_2048(float v) { return uint32_t(half_order_key(v)) >> 5; }
// persistent_topk's filtered pass: 256 bins, the top 8 bits of the fp16 key.
DSA_HD inline uint32_t coarse_bin_256(float v) { return uint32_t(half_order_key(v)) >> 8; }

}  // namespace dsa::common
