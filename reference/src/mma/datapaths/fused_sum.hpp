// Fused sums of fp8 products (internal): the NVIDIA datapaths. Each building
// block has its scalar form (any C; kernels.hpp) and its SIMD form (a block of
// tokens of a chain from zero; chain_blocks.hpp), which must give the same bits.
#pragma once

#include <cmath>

#include "../chain_blocks.hpp"
#include "../kernels.hpp"
#include "../rounding.hpp"

namespace dsa::mma::detail {

// N products (lanes [offset, offset + N)) and one fp32 term: the largest
// alignment exponent X over the terms, every term truncated toward zero to a
// multiple of 2^(X - F), the exact sum rounded toward zero to P significant
// bits (24: fp32; 14: Hopper's e8m13). No term: +0. kFastPath: the SIMD form
// first tests whether the bounds show that no bit can be lost.
template <int N, int F, int P, bool kFastPath = true>
struct FusedSum {
  static constexpr int kLanes = N;
  static float sum(const Lanes& a, const Lanes& b, int offset, float c, bool c_term) {
    int q;
    const int64_t s = fused_truncated_sum<N, F>(a, b, offset, c, c_term, q);
    return round_scaled_fast(s, q, Rounding::toward_zero, P);
  }
  DSA_LANES_INLINE static I64x8 sum(const BlockOperands& o, int k0, I64x8 c) {
    return fused_truncated<N, F, P, kFastPath>(o, k0, c);
  }
};

// The instruction is one fused sum of its K products with C as a term (wgmma,
// tcgen05 kind::f8f6f4). An infinite or NaN C passes through: the products are finite.
template <class Sum>
struct CInTheSum {
  static float step(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
    if (use_c && !std::isfinite(c)) return c;
    return Sum::sum(a, b, offset, c, use_c && c != 0.0f);
  }
  DSA_LANES_INLINE static void block_step(const BlockOperands& o, int k0, BlockChain& c) {
    c.acc = Sum::sum(o, k0, c.acc);  // acc is 0 before the first
    c.has_c = true;
  }
};

// The instruction is kParts fused sums over consecutive runs of lanes, each
// taking the one before as its accumulator term, then an ordinary fp32 add
// (round to nearest even) of C: the mma.sync emulation (2 x HMMA.16816).
template <class Part, int kParts>
struct PartsThenAddC {
  static float step(const Lanes& a, const Lanes& b, int offset, float c, bool use_c) {
    float p = Part::sum(a, b, offset, 0.0f, false);
    for (int i = 1; i < kParts; ++i) p = Part::sum(a, b, offset + i * Part::kLanes, p, p != 0.0f);
    return use_c ? p + c : p;
  }
  DSA_LANES_INLINE static void block_step(const BlockOperands& o, int k0, BlockChain& c) {
    I64x8 p = Part::sum(o, k0, I64x8::broadcast(0));
#pragma GCC unroll 4
    for (int i = 1; i < kParts; ++i) p = Part::sum(o, k0 + i * Part::kLanes, p);
    c.acc = c.has_c ? round_bits<24, true>(p + c.acc) : p;  // D = p + C, an fp32 add
    c.has_c = true;
  }
};

}  // namespace dsa::mma::detail
