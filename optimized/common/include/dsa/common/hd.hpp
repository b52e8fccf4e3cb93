// Host+device building blocks: code in optimized/common compiles as plain C++
// (the CPU twins, the tests) and as CUDA or HIP device code (the kernels), so
// a twin and a kernel share one copy of each algorithm.
#pragma once

#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define DSA_HD __host__ __device__
#define DSA_DEVICE __device__
#else
#define DSA_HD
#define DSA_DEVICE
#endif

// True while compiling device code (either vendor's device pass).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define DSA_DEVICE_PASS 1
#else
#define DSA_DEVICE_PASS 0
#endif

#if !DSA_DEVICE_PASS
#include <bit>
#endif
// HIP's device intrinsics (__float_as_uint, __popc, ...) come from its runtime header.
#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#endif

// Loops over a thread's items unroll fully on the device, so the items stay
// in registers (an indexed register array otherwise goes to local memory).
// Only in the device pass: the host compiler under nvcc would warn about it.
// DSA_UNROLL_NONE keeps a loop a loop where unrolling would hoist every
// iteration's loads at once and spill (a loop whose indices need no registers).
#if DSA_DEVICE_PASS
#define DSA_UNROLL _Pragma("unroll")
#define DSA_UNROLL_NONE _Pragma("unroll 1")
#else
#define DSA_UNROLL
#define DSA_UNROLL_NONE
#endif

// A function called from several places of a kernel, kept as one copy of code (a call, not inlined at each).
// Only where measured: RowTopK's threshold made the row kernel 4-5 % faster so, GroupTopK's group_threshold made
// the group kernel 5 % slower (the registers live across a call go to the stack; SELECT_RESULTS.md run 56).
#if defined(__CUDACC__) || defined(__HIPCC__)
#define DSA_NOINLINE __noinline__
#else
#define DSA_NOINLINE
#endif

namespace dsa::common {

DSA_HD inline uint32_t float_bits(float v) {
#if DSA_DEVICE_PASS
  return __float_as_uint(v);
#else
  return std::bit_cast<uint32_t>(v);
#endif
}

DSA_HD inline float bits_float(uint32_t b) {
#if DSA_DEVICE_PASS
  return __uint_as_float(b);
#else
  return std::bit_cast<float>(b);
#endif
}

DSA_HD inline int popc(uint32_t m) {
#if DSA_DEVICE_PASS
  return __popc(m);
#else
  return std::popcount(m);
#endif
}
DSA_HD inline int popc(uint64_t m) {
#if DSA_DEVICE_PASS
  return __popcll(m);
#else
  return std::popcount(m);
#endif
}

// Bits needed for x (0 for 0).
DSA_HD inline int bit_width(uint32_t x) {
#if DSA_DEVICE_PASS
  return 32 - __clz(int(x));
#else
  return int(std::bit_width(x));
#endif
}

DSA_HD constexpr int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
DSA_HD constexpr int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
DSA_HD constexpr int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

}  // namespace dsa::common
