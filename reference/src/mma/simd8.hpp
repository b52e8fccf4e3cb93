// Eight int64 lanes for the block kernels (internal): one zmm with AVX-512,
// two ymm with AVX2, four xmm on the x86-64 baseline (SSE2), a plain array
// elsewhere. Only what the models need: bitwise ops, add/sub, the 32 x 32 ->
// 64-bit multiply of the low halves (pmuludq, which compilers do not reliably
// find on their own), and the per-lane arithmetic of masks and roundings
// (signed max/min, variable shifts, leading zeros): vector instructions with
// AVX-512 (F, CD) and AVX2, a loop over lanes on SSE2 and elsewhere.
#pragma once

#include <cstdint>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace dsa::mma::detail {

// Every lane operation is a few instructions: they must inline (a call passes
// the 64-byte lanes through memory).
#define DSA_LANES_INLINE inline __attribute__((always_inline))

#if defined(__AVX512F__) && defined(__AVX512CD__)
#define DSA_MMA_LANES_AVX512 1
struct I64x8 {
  __m512i v;
  DSA_LANES_INLINE static I64x8 load(const int64_t* p) { return {_mm512_loadu_si512(p)}; }
  DSA_LANES_INLINE static I64x8 load(const uint64_t* p) { return {_mm512_loadu_si512(p)}; }
  DSA_LANES_INLINE static I64x8 broadcast(int64_t x) { return {_mm512_set1_epi64(x)}; }
  // Sign-extends eight int16.
  DSA_LANES_INLINE static I64x8 from_int16(const int16_t* p) {
    return {_mm512_cvtepi16_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
  }
  DSA_LANES_INLINE void store(int64_t* p) const { _mm512_storeu_si512(p, v); }
  DSA_LANES_INLINE friend I64x8 operator&(I64x8 a, I64x8 b) { return {_mm512_and_si512(a.v, b.v)}; }
  DSA_LANES_INLINE friend I64x8 operator|(I64x8 a, I64x8 b) { return {_mm512_or_si512(a.v, b.v)}; }
  DSA_LANES_INLINE friend I64x8 operator^(I64x8 a, I64x8 b) { return {_mm512_xor_si512(a.v, b.v)}; }
  DSA_LANES_INLINE friend I64x8 operator+(I64x8 a, I64x8 b) { return {_mm512_add_epi64(a.v, b.v)}; }
  DSA_LANES_INLINE friend I64x8 operator-(I64x8 a, I64x8 b) { return {_mm512_sub_epi64(a.v, b.v)}; }
  DSA_LANES_INLINE friend I64x8 mul_low32(I64x8 a, I64x8 b) { return {_mm512_mul_epu32(a.v, b.v)}; }
  DSA_LANES_INLINE friend I64x8 max(I64x8 a, I64x8 b) { return {_mm512_max_epi64(a.v, b.v)}; }
  DSA_LANES_INLINE friend I64x8 min(I64x8 a, I64x8 b) { return {_mm512_min_epi64(a.v, b.v)}; }
  // a << n per lane, 0 where n >= 64 (n >= 0).
  DSA_LANES_INLINE friend I64x8 shl(I64x8 a, I64x8 n) { return {_mm512_sllv_epi64(a.v, n.v)}; }
  // a >> n per lane (logical), 0 where n >= 64 (as unsigned).
  DSA_LANES_INLINE friend I64x8 shr(I64x8 a, I64x8 n) { return {_mm512_srlv_epi64(a.v, n.v)}; }
  DSA_LANES_INLINE friend I64x8 andnot(I64x8 a, I64x8 b) { return {_mm512_andnot_si512(a.v, b.v)}; }  // ~a & b
  DSA_LANES_INLINE friend I64x8 sign_mask(I64x8 a) { return {_mm512_srai_epi64(a.v, 63)}; }  // all ones where negative
  DSA_LANES_INLINE friend I64x8 abs(I64x8 a) { return {_mm512_abs_epi64(a.v)}; }
  DSA_LANES_INLINE friend I64x8 leading_zeros(I64x8 a) { return {_mm512_lzcnt_epi64(a.v)}; }
  // All ones where a > b (signed), else 0.
  DSA_LANES_INLINE friend I64x8 greater(I64x8 a, I64x8 b) {
    return {_mm512_maskz_mov_epi64(_mm512_cmpgt_epi64_mask(a.v, b.v), _mm512_set1_epi64(-1))};
  }
  DSA_LANES_INLINE friend I64x8 nonzero(I64x8 a) {
    return {_mm512_maskz_mov_epi64(_mm512_test_epi64_mask(a.v, a.v), _mm512_set1_epi64(-1))};
  }
  DSA_LANES_INLINE friend uint64_t reduce_or(I64x8 a) { return uint64_t(_mm512_reduce_or_epi64(a.v)); }
};
#elif defined(__AVX2__)
#define DSA_MMA_LANES_AVX2 1
struct I64x8 {
  __m256i v[2];
  template <class Op>
  DSA_LANES_INLINE static I64x8 map(I64x8 a, I64x8 b, Op op) {
    return {{op(a.v[0], b.v[0]), op(a.v[1], b.v[1])}};
  }
  template <class Op>
  DSA_LANES_INLINE static I64x8 map(I64x8 a, Op op) {
    return {{op(a.v[0]), op(a.v[1])}};
  }
  DSA_LANES_INLINE static I64x8 load(const int64_t* p) {
    return {{_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 4))}};
  }
  DSA_LANES_INLINE static I64x8 load(const uint64_t* p) { return load(reinterpret_cast<const int64_t*>(p)); }
  DSA_LANES_INLINE static I64x8 broadcast(int64_t x) { return {{_mm256_set1_epi64x(x), _mm256_set1_epi64x(x)}}; }
  DSA_LANES_INLINE static I64x8 from_int16(const int16_t* p) {
    const __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return {{_mm256_cvtepi16_epi64(w), _mm256_cvtepi16_epi64(_mm_srli_si128(w, 8))}};
  }
  DSA_LANES_INLINE void store(int64_t* p) const {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v[0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + 4), v[1]);
  }
  DSA_LANES_INLINE friend I64x8 operator&(I64x8 a, I64x8 b) { return map(a, b, _mm256_and_si256); }
  DSA_LANES_INLINE friend I64x8 operator|(I64x8 a, I64x8 b) { return map(a, b, _mm256_or_si256); }
  DSA_LANES_INLINE friend I64x8 operator^(I64x8 a, I64x8 b) { return map(a, b, _mm256_xor_si256); }
  DSA_LANES_INLINE friend I64x8 operator+(I64x8 a, I64x8 b) { return map(a, b, _mm256_add_epi64); }
  DSA_LANES_INLINE friend I64x8 operator-(I64x8 a, I64x8 b) { return map(a, b, _mm256_sub_epi64); }
  DSA_LANES_INLINE friend I64x8 mul_low32(I64x8 a, I64x8 b) { return map(a, b, _mm256_mul_epu32); }
  DSA_LANES_INLINE friend I64x8 andnot(I64x8 a, I64x8 b) { return map(a, b, _mm256_andnot_si256); }
  DSA_LANES_INLINE friend I64x8 greater(I64x8 a, I64x8 b) { return map(a, b, _mm256_cmpgt_epi64); }
  DSA_LANES_INLINE friend I64x8 max(I64x8 a, I64x8 b) {
    return map(a, b, [](__m256i x, __m256i y) { return _mm256_blendv_epi8(y, x, _mm256_cmpgt_epi64(x, y)); });
  }
  DSA_LANES_INLINE friend I64x8 min(I64x8 a, I64x8 b) {
    return map(a, b, [](__m256i x, __m256i y) { return _mm256_blendv_epi8(x, y, _mm256_cmpgt_epi64(x, y)); });
  }
  DSA_LANES_INLINE friend I64x8 shl(I64x8 a, I64x8 n) { return map(a, n, _mm256_sllv_epi64); }
  DSA_LANES_INLINE friend I64x8 shr(I64x8 a, I64x8 n) { return map(a, n, _mm256_srlv_epi64); }
  DSA_LANES_INLINE friend I64x8 sign_mask(I64x8 a) {
    return map(a, [](__m256i x) { return _mm256_cmpgt_epi64(_mm256_setzero_si256(), x); });
  }
  DSA_LANES_INLINE friend I64x8 abs(I64x8 a) {
    const I64x8 s = sign_mask(a);
    return (a ^ s) - s;
  }
  // Valid for 0 <= a < 2^52 (every value of a chain from zero is below 2^46):
  // a | 2^52's bits, read as a double, minus 2^52 is a exactly, and its
  // exponent field is floor(log2 a) + 1023 (0 for a = 0).
  DSA_LANES_INLINE friend I64x8 leading_zeros(I64x8 a) {
    return map(a, [](__m256i x) {
      const __m256i magic = _mm256_set1_epi64x(0x4330000000000000);
      const __m256d d = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(x, magic)), _mm256_castsi256_pd(magic));
      const __m256i lz = _mm256_sub_epi64(_mm256_set1_epi64x(1086), _mm256_srli_epi64(_mm256_castpd_si256(d), 52));
      return _mm256_blendv_epi8(lz, _mm256_set1_epi64x(64), _mm256_cmpgt_epi64(lz, _mm256_set1_epi64x(64)));
    });
  }
  DSA_LANES_INLINE friend I64x8 nonzero(I64x8 a) {
    return map(a, [](__m256i x) {
      return _mm256_xor_si256(_mm256_cmpeq_epi64(x, _mm256_setzero_si256()), _mm256_set1_epi64x(-1));
    });
  }
  DSA_LANES_INLINE friend uint64_t reduce_or(I64x8 a) {
    const __m256i x = _mm256_or_si256(a.v[0], a.v[1]);
    const __m128i y = _mm_or_si128(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    return uint64_t(_mm_cvtsi128_si64(y) | _mm_extract_epi64(y, 1));
  }
};
#else
struct I64x8 {
  int64_t v[8];
  DSA_LANES_INLINE static I64x8 load(const int64_t* p) {
    I64x8 r;
    for (int i = 0; i < 8; ++i) r.v[i] = p[i];
    return r;
  }
  DSA_LANES_INLINE static I64x8 load(const uint64_t* p) {
    I64x8 r;
    for (int i = 0; i < 8; ++i) r.v[i] = int64_t(p[i]);
    return r;
  }
  DSA_LANES_INLINE static I64x8 broadcast(int64_t x) {
    I64x8 r;
    for (auto& v : r.v) v = x;
    return r;
  }
  DSA_LANES_INLINE static I64x8 from_int16(const int16_t* p) {
    I64x8 r;
    for (int i = 0; i < 8; ++i) r.v[i] = p[i];
    return r;
  }
  DSA_LANES_INLINE void store(int64_t* p) const {
    for (int i = 0; i < 8; ++i) p[i] = v[i];
  }
  template <class Op>
  DSA_LANES_INLINE friend I64x8 lanewise(I64x8 a, I64x8 b, Op op) {
    for (int i = 0; i < 8; ++i) a.v[i] = op(a.v[i], b.v[i]);
    return a;
  }
  template <class Op>
  DSA_LANES_INLINE friend I64x8 lanewise(I64x8 a, Op op) {
    for (int i = 0; i < 8; ++i) a.v[i] = op(a.v[i]);
    return a;
  }
  // Wrapping arithmetic in uint64_t, as the vector instructions do.
  DSA_LANES_INLINE friend I64x8 operator&(I64x8 a, I64x8 b) {
    return lanewise(a, b, [](int64_t x, int64_t y) { return x & y; });
  }
  DSA_LANES_INLINE friend I64x8 operator|(I64x8 a, I64x8 b) {
    return lanewise(a, b, [](int64_t x, int64_t y) { return x | y; });
  }
  DSA_LANES_INLINE friend I64x8 operator^(I64x8 a, I64x8 b) {
    return lanewise(a, b, [](int64_t x, int64_t y) { return x ^ y; });
  }
  DSA_LANES_INLINE friend I64x8 operator+(I64x8 a, I64x8 b) {
    return lanewise(a, b, [](int64_t x, int64_t y) { return int64_t(uint64_t(x) + uint64_t(y)); });
  }
  DSA_LANES_INLINE friend I64x8 operator-(I64x8 a, I64x8 b) {
    return lanewise(a, b, [](int64_t x, int64_t y) { return int64_t(uint64_t(x) - uint64_t(y)); });
  }
  DSA_LANES_INLINE friend I64x8 mul_low32(I64x8 a, I64x8 b) {
    return lanewise(a, b, [](int64_t x, int64_t y) { return int64_t(uint64_t(uint32_t(x)) * uint32_t(y)); });
  }
  DSA_LANES_INLINE friend I64x8 max(I64x8 a, I64x8 b) {
    return lanewise(a, b, [](int64_t x, int64_t y) { return x > y ? x : y; });
  }
  DSA_LANES_INLINE friend I64x8 min(I64x8 a, I64x8 b) {
    return lanewise(a, b, [](int64_t x, int64_t y) { return x < y ? x : y; });
  }
  DSA_LANES_INLINE friend I64x8 shl(I64x8 a, I64x8 n) {
    return lanewise(a, n, [](int64_t x, int64_t s) { return s >= 64 ? 0 : int64_t(uint64_t(x) << s); });
  }
  DSA_LANES_INLINE friend I64x8 shr(I64x8 a, I64x8 n) {
    return lanewise(a, n, [](int64_t x, int64_t s) { return uint64_t(s) >= 64 ? 0 : int64_t(uint64_t(x) >> s); });
  }
  DSA_LANES_INLINE friend I64x8 andnot(I64x8 a, I64x8 b) {
    return lanewise(a, b, [](int64_t x, int64_t y) { return ~x & y; });
  }
  DSA_LANES_INLINE friend I64x8 sign_mask(I64x8 a) {
    return lanewise(a, [](int64_t x) { return x < 0 ? int64_t(-1) : 0; });
  }
  DSA_LANES_INLINE friend I64x8 abs(I64x8 a) {
    return lanewise(a, [](int64_t x) { return x < 0 ? int64_t(0 - uint64_t(x)) : x; });
  }
  DSA_LANES_INLINE friend I64x8 leading_zeros(I64x8 a) {
    return lanewise(a, [](int64_t x) { return x ? int64_t(__builtin_clzll(uint64_t(x))) : 64; });
  }
  DSA_LANES_INLINE friend I64x8 greater(I64x8 a, I64x8 b) {
    return lanewise(a, b, [](int64_t x, int64_t y) { return x > y ? int64_t(-1) : 0; });
  }
  DSA_LANES_INLINE friend I64x8 nonzero(I64x8 a) {
    return lanewise(a, [](int64_t x) { return x ? int64_t(-1) : 0; });
  }
  DSA_LANES_INLINE friend uint64_t reduce_or(I64x8 a) {
    uint64_t r = 0;
    for (int64_t x : a.v) r |= uint64_t(x);
    return r;
  }
};
#endif

// The product loop's lanes: the same type with AVX-512 and AVX2; four xmm on
// SSE2 (whose per-lane arithmetic above stays a loop over lanes).
#if defined(DSA_MMA_LANES_AVX512) || defined(DSA_MMA_LANES_AVX2) || !defined(__SSE2__)
using ProductLanes = I64x8;
DSA_LANES_INLINE ProductLanes to_product_lanes(I64x8 a) { return a; }
DSA_LANES_INLINE I64x8 from_product_lanes(ProductLanes a) { return a; }
#else
using ProductRegister = __m128i;
inline constexpr int kProductRegisters = 4;
DSA_LANES_INLINE ProductRegister pr_load(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
DSA_LANES_INLINE void pr_store(void* p, ProductRegister v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }
DSA_LANES_INLINE ProductRegister pr_set1(int64_t x) { return _mm_set1_epi64x(x); }
DSA_LANES_INLINE ProductRegister pr_and(ProductRegister a, ProductRegister b) { return _mm_and_si128(a, b); }
DSA_LANES_INLINE ProductRegister pr_andnot(ProductRegister a, ProductRegister b) { return _mm_andnot_si128(a, b); }
DSA_LANES_INLINE ProductRegister pr_xor(ProductRegister a, ProductRegister b) { return _mm_xor_si128(a, b); }
DSA_LANES_INLINE ProductRegister pr_add(ProductRegister a, ProductRegister b) { return _mm_add_epi64(a, b); }
DSA_LANES_INLINE ProductRegister pr_sub(ProductRegister a, ProductRegister b) { return _mm_sub_epi64(a, b); }
DSA_LANES_INLINE ProductRegister pr_mul32(ProductRegister a, ProductRegister b) { return _mm_mul_epu32(a, b); }
struct ProductLanes {
  static constexpr int kPer = 8 / kProductRegisters;
  ProductRegister v[kProductRegisters];
  DSA_LANES_INLINE static ProductLanes load(const uint64_t* p) {
    ProductLanes r;
    for (int i = 0; i < kProductRegisters; ++i) r.v[i] = pr_load(p + i * kPer);
    return r;
  }
  DSA_LANES_INLINE static ProductLanes broadcast(uint64_t x) {
    ProductLanes r;
    for (auto& v : r.v) v = pr_set1(int64_t(x));
    return r;
  }
  template <class Op>
  DSA_LANES_INLINE friend ProductLanes lanewise(ProductLanes a, ProductLanes b, Op op) {
    for (int i = 0; i < kProductRegisters; ++i) a.v[i] = op(a.v[i], b.v[i]);
    return a;
  }
  DSA_LANES_INLINE friend ProductLanes operator&(ProductLanes a, ProductLanes b) { return lanewise(a, b, pr_and); }
  DSA_LANES_INLINE friend ProductLanes andnot(ProductLanes a, ProductLanes b) { return lanewise(a, b, pr_andnot); }
  DSA_LANES_INLINE friend ProductLanes operator^(ProductLanes a, ProductLanes b) { return lanewise(a, b, pr_xor); }
  DSA_LANES_INLINE friend ProductLanes operator+(ProductLanes a, ProductLanes b) { return lanewise(a, b, pr_add); }
  DSA_LANES_INLINE friend ProductLanes operator-(ProductLanes a, ProductLanes b) { return lanewise(a, b, pr_sub); }
  DSA_LANES_INLINE friend ProductLanes mul_low32(ProductLanes a, ProductLanes b) { return lanewise(a, b, pr_mul32); }
};
DSA_LANES_INLINE ProductLanes to_product_lanes(I64x8 a) {
  return ProductLanes::load(reinterpret_cast<const uint64_t*>(a.v));
}
DSA_LANES_INLINE I64x8 from_product_lanes(ProductLanes a) {
  I64x8 r;
  for (int i = 0; i < kProductRegisters; ++i) pr_store(r.v + i * ProductLanes::kPer, a.v[i]);
  return r;
}
#endif

}  // namespace dsa::mma::detail
