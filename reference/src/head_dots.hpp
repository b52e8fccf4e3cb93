// Per-head dot products of query rows against a tile of K entries, the first
// stage of every logits path (dense decode, prefill, compact candidates).
// Internal to the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "dsa/kcache.hpp"
#include "dsa/profile.hpp"

namespace dsa::detail {

// A run of K entries in dense form (see GatheredK): codes [count][D] (fp8) or
// [count][D/2] (mxfp4), per-entry scales (fp8) or block scales [count][D/32].
struct KTile {
  ElementFormat element = ElementFormat::e4m3fn;
  int32_t head_dim = 0;
  int64_t count = 0;
  const uint8_t* codes = nullptr;
  const float* scales = nullptr;
  const uint8_t* block_scales = nullptr;
};

// Query rows of one request: num_rows x heads x D codes (or D/2 packed + D/32 scales).
struct QueryRows {
  ElementFormat element = ElementFormat::e4m3fn;
  int32_t num_rows = 0;
  int32_t heads = 0;
  int32_t head_dim = 0;
  const uint8_t* codes = nullptr;
  const uint8_t* block_scales = nullptr;
};

// dots[(row * heads + h) * tile.count + t]: the model's fp32 value of q_h . k_t
// (the exact model: one rounding of the exact sum). When exact_dots is not
// null it also receives the exact value in double (for the double-precision
// logit), laid out the same way.
void head_dots(mma::Model model, const QueryRows& q, const KTile& tile, float* dots, double* exact_dots);
// The profile's dot products: its model, chained or promoted (Profile::promotion),
// the chain reading the dims in the profile's dim_order.
void head_dots(const Profile& profile, const QueryRows& q, const KTile& tile, float* dots, double* exact_dots);

// The logit of every entry of one row from its dots (layout above, row `row`):
// runs the profile's reduction in blocks of ReductionProgram::kBlock entries.
// out[t] for t < count; exact_out (optional) gets sum_h w_h * relu(s_t * dot) in double.
void reduce_row(const ReductionProgram& program, const Profile& profile, const float* dots, const double* exact_dots,
                int64_t tile_count, int32_t row, int32_t heads, const float* weights, const float* scales,
                int64_t count, float* out, double* exact_out);

}  // namespace dsa::detail
