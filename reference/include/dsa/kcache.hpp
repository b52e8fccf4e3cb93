// The paged K cache of the indexer (SPEC 3) and vLLM's quantizer that fills it.
//
// Physically each page is "block-flat": first the values of its block_size
// tokens, then one scale record per token.
//   block_flat  (CUDA, AITER C4A): byte(t, d) = t * D + d, then block_size fp32 scales.
//   preshuffle  (gfx942 "SHUFFLE", block_size % 16 == 0, D == 128):
//               byte(t, d) = (t/16)*16*D + (d/16)*256 + (t%16)*16 + d%16, then fp32 scales.
//   mxfp4       (SM100, D in {64,128}): block_size * D/2 bytes of packed e2m1
//               (low nibble = even element), then one int32 per token holding
//               its D/32 ue8m0 bytes (byte i = scale of elements [32i, 32i+32); unused bytes 0).
// Token n of a request lives in page page_table[n / block_size], slot n % block_size.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "dsa/formats.hpp"

namespace dsa {

enum class CacheLayout : uint8_t { block_flat, preshuffle, mxfp4 };
std::string_view to_string(CacheLayout l);
CacheLayout parse_cache_layout(std::string_view name);  // throws InvalidInput("layout", ...)

// What one element of q and K is: an fp8 flavour or MXFP4 (e2m1 + ue8m0 per 32).
enum class ElementFormat : uint8_t { e4m3fn, e4m3fnuz, mxfp4 };
std::string_view to_string(ElementFormat e);
ElementFormat parse_element_format(std::string_view name);  // throws InvalidInput("fp8", ...)
inline bool is_fp8(ElementFormat e) { return e != ElementFormat::mxfp4; }
Fp8Format fp8_of(ElementFormat e);  // throws InvalidInput for mxfp4

struct PagedKCache {
  CacheLayout layout = CacheLayout::block_flat;
  ElementFormat element = ElementFormat::e4m3fn;  // mxfp4 exactly when layout == mxfp4
  int32_t num_pages = 0;
  int32_t block_size = 0;  // tokens (entries) per page
  int32_t head_dim = 0;
  std::vector<uint8_t> bytes;  // num_pages * page_bytes()

  size_t value_bytes_per_token() const;  // D (fp8) or D/2 (mxfp4)
  size_t page_bytes() const;             // block_size * (value_bytes_per_token() + 4)
  // Offset inside the page of the byte holding element d of slot t (for mxfp4,
  // the byte holding the pair (d & ~1, d | 1)).
  size_t value_offset(int32_t slot, int32_t d) const;
  size_t scale_offset(int32_t slot) const;  // inside the page

  // Throws InvalidInput naming the field when the shape or layout rules do not hold
  // (e.g. preshuffle needs block_size % 16 == 0 and D == 128; mxfp4 needs D in {64,128}).
  void validate() const;
};

// A zeroed cache of the given geometry (validated).
PagedKCache make_kcache(CacheLayout layout, ElementFormat element, int32_t num_pages, int32_t block_size,
                        int32_t head_dim);

// Tokens [begin, end) of one request gathered into dense arrays, in token order.
struct GatheredK {
  ElementFormat element = ElementFormat::e4m3fn;
  int64_t num_tokens = 0;
  int32_t head_dim = 0;
  std::vector<uint8_t> codes;         // fp8: [N][D] codes; mxfp4: [N][D/2] packed e2m1
  std::vector<float> scales;          // fp8: [N] per-token fp32 scale; mxfp4: empty
  std::vector<uint8_t> block_scales;  // mxfp4: [N][D/32] ue8m0 codes; fp8: empty
};

// Reads tokens [begin, end) of the request whose page table row is page_table_row.
// Throws InvalidInput("block_table", ...) when a page id the range uses is
// outside [0, num_pages) or the range needs more pages than the row has (ids
// past the range are not looked at: real tables hold garbage there), and
// InvalidInput("begin" / "end", ...) for a negative or reversed range.
GatheredK gather_tokens(const PagedKCache& cache, std::span<const int32_t> page_table_row, int64_t begin,
                        int64_t end);

// vLLM's `indexer_k_quant_and_cache` for one token: amax over the D values,
// scale = fp32(max(amax, 1e-4) / divisor), rounded up to a power of two when
// ue8m0_scale, then value = fp8(x / scale) (a true fp32 division, as the
// kernels do) with round-to-nearest-even and saturation. The divisor is 448
// for e4m3fn and 224 for e4m3fnuz: vLLM's ROCm writer uses half the OCP range
// on gfx942 (`IS_FNUZ` in rocm_aiter_mla_sparse.py's
// _indexer_k_quant_and_cache_kernel, kFp8ScaleDivisor = 224 under __gfx942__
// in csrc/cache_kernels.cu), so codes stay within +-224 of fnuz's 240.
// For an mxfp4 cache: quantize_mxfp4 of the D values (scale per 32, always
// ue8m0; ue8m0_scale is ignored), the D/32 scale bytes in the token's int32.
// Throws InvalidInput("k", ...) for NaN or infinite input or a wrong length,
// InvalidInput("page" / "slot", ...) outside the cache.
struct QuantizeOptions {
  bool ue8m0_scale = false;
};
void quantize_token_into_cache(PagedKCache& cache, int32_t page, int32_t slot, std::span<const float> k,
                               QuantizeOptions options = {});
// Dequantized element d of (page, slot): fp32(value * scale) (fp8) or e2m1 * 2^(s-127) (mxfp4).
// Throws InvalidInput("page" / "slot" / "d", ...) outside the cache.
float dequantize_cache_element(const PagedKCache& cache, int32_t page, int32_t slot, int32_t d);

// Converts a cache between layouts block_flat <-> preshuffle (same element format;
// the scales region is the same in both). Throws InvalidInput("layout", ...) for
// mxfp4 on either side, and validate()'s errors for a geometry the target cannot hold.
PagedKCache relayout(const PagedKCache& cache, CacheLayout target);

}  // namespace dsa
