// Number formats of the DSA indexer (SPEC 2): e4m3fn, e4m3fnuz, ue8m0, e2m1
// (MXFP4), bf16.
//
// Decoding is exact (every code maps to one float; NaN codes to a quiet NaN).
// Encoding rounds to nearest, ties to even, as if the format had unbounded
// exponent range above; what then happens to a result beyond the largest
// finite code is chosen by Overflow:
//   saturate: clamp-then-cast, i.e. `x.clamp(-max, max).to(fp8)` in PyTorch,
//             vLLM's indexer quantizer, CUDA's __NV_SATFINITE. +-inf -> +-max.
//   to_nan:   a non-saturating cast: PyTorch's plain `.to(float8_e4m3fn)` and
//             CUDA's __NV_NOSAT. For e4m3fn 464 (the tie between 448 and the
//             missing 480) rounds to even = 448; anything above is NaN.
// A NaN input gives a NaN code in both modes (e4m3fn keeps the sign: 0x7f /
// 0xff, as c10's conversion does; e4m3fnuz has only 0x80).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace dsa {

enum class Fp8Format : uint8_t { e4m3fn, e4m3fnuz };

std::string_view to_string(Fp8Format f);
// Throws InvalidInput("fp8", ...) for an unknown name.
Fp8Format parse_fp8_format(std::string_view name);

enum class Overflow : uint8_t {
  saturate,  // |x| > max finite -> +-max finite (torch clamp, vLLM quantizer)
  to_nan,    // |x| > max finite (after rounding) -> the format's NaN
};

// ---- e4m3fn: bias 7, max 448, NaN 0x7f / 0xff, no infinity.
float e4m3fn_to_float(uint8_t code);
uint8_t float_to_e4m3fn(float x, Overflow overflow = Overflow::saturate);
inline constexpr float kE4m3fnMax = 448.0f;

// ---- e4m3fnuz: bias 8, max 240, NaN 0x80 only, no -0, no infinity.
// Values that round to zero, -0.0 included, encode as 0x00 (0x80 is NaN).
float e4m3fnuz_to_float(uint8_t code);
uint8_t float_to_e4m3fnuz(float x, Overflow overflow = Overflow::saturate);
inline constexpr float kE4m3fnuzMax = 240.0f;

float fp8_to_float(Fp8Format f, uint8_t code);
uint8_t float_to_fp8(Fp8Format f, float x, Overflow overflow = Overflow::saturate);
float fp8_max(Fp8Format f);
bool fp8_is_nan(Fp8Format f, uint8_t code);
// The byte that `-inf` becomes when cast to fp8 (the pad of vLLM's packed q): a NaN code.
uint8_t fp8_pad_code(Fp8Format f);

// Decoding table: table[code] = value (NaN codes give quiet NaN). Hot paths use it.
const float* fp8_decode_table(Fp8Format f);

// ---- ue8m0 scale: 2^(e - 127); 0xff is NaN.
float ue8m0_to_float(uint8_t code);
// Smallest power of two >= x (x > 0, finite) as a ue8m0 code: the ue8m0
// rounding of vLLM's `scale_fmt = "ue8m0"` (exp2(ceil(log2(scale)))). Exact
// (from the fp32 bits); x <= 2^-127 gives code 0. Throws
// InvalidInput("scale", ...) when x is not positive and finite or 2^128 would be needed.
uint8_t float_to_ue8m0_ceil(float x);

// ---- e2m1 (MXFP4 element): {0, 0.5, 1, 1.5, 2, 3, 4, 6} with sign; 4-bit codes
// (bit 3 sign, bits 2-1 exponent with bias 1, bit 0 mantissa).
float e2m1_to_float(uint8_t nibble);
// Round to nearest even among e2m1 values, saturating at +-6: PTX
// `cvt.rn.satfinite.e2m1x2.f32`, which vLLM's MXFP4 writers use. The sign is
// kept (-0.25 -> 0x8, "-0"); NaN (never reaching it from the quantizer) -> 0x7.
uint8_t float_to_e2m1(float x);
// Packed pairs: low nibble = even element.
inline uint8_t e2m1_pack(uint8_t even, uint8_t odd) { return uint8_t((even & 0xf) | ((odd & 0xf) << 4)); }
inline uint8_t e2m1_low(uint8_t byte) { return byte & 0xf; }
inline uint8_t e2m1_high(uint8_t byte) { return byte >> 4; }

// MXFP4 quantization of one vector of n values (n a multiple of 32), as the
// DeepSeek V4 indexer writes it on SM100 (vLLM `_quantize_mxfp4_pair` in
// deepseek_v4_ops/fused_indexer_q.py and fused_compress_quant_cache.py, after
// DeepSeek's inference/kernel.py). Per 32 elements:
//   amax  = max(max |x_i|, 6 * 2^-126)
//   e     = ceil(log2(fp32(amax * fp32(1/6)))), clamped to [-127, 127]
//   scale byte = e + 127 (ue8m0); element = e2m1(x_i * 2^-e) (RNE, saturating)
// This is the ceil(log2(amax / 6)) rule, not the OCP MX rule
// 2^(floor(log2 amax) - 2): the block maximum never saturates. An all-zero
// block gets e = -126 (byte 1). DeepGEMM's test helper per_token_cast_to_fp4
// uses the same ceil rule but floors amax at 1e-4 and rounds e2m1 ties toward
// zero (torch.bucketize); the cache bytes of real runs come from vLLM's kernel.
// The ceil is exact here (from the fp32 bits); the kernels' log2f agrees
// except within an ulp above a power of two.
// packed: n/2 bytes; scales: n/32 bytes. Throws InvalidInput("x", ...) for a
// non-finite value or a bad length.
void quantize_mxfp4(std::span<const float> x, std::span<uint8_t> packed, std::span<uint8_t> scales);
// Decodes element i of a packed MXFP4 vector with its per-32 scale.
float mxfp4_element(std::span<const uint8_t> packed, std::span<const uint8_t> scales, int i);

// ---- bf16: the top 16 bits of an fp32.
float bf16_to_float(uint16_t bits);
// Round to nearest even; NaN stays a quiet NaN; overflow gives inf (IEEE).
uint16_t float_to_bf16(float x);
inline float round_to_bf16(float x) { return bf16_to_float(float_to_bf16(x)); }

// ---- fp32 bit helpers.
uint32_t float_bits(float x);
float float_from_bits(uint32_t bits);

}  // namespace dsa
