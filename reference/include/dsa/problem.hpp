// The inputs of the indexer ops (SPEC 4, 5): a decode step over the paged K
// cache and a prefill over contiguous K, plus the per-row visible lengths.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "dsa/kcache.hpp"

namespace dsa {

// How padded requests' rows get their lengths (SPEC 5).
enum class PaddedLengths : uint8_t {
  causal,        // real row j of request b sees L_b - d_b + j + 1 (the reference's rule)
  vllm_padded,   // every row sees max(0, L_b - Lmax + 1 + j) (vLLM's metadata builder; suspected bug)
};
std::string_view to_string(PaddedLengths p);

struct DecodeProblem {
  int32_t batch = 0;     // B requests
  int32_t next_n = 1;    // rows per request (Lmax when padded)
  int32_t heads = 0;     // H
  int32_t head_dim = 0;  // D
  ElementFormat element = ElementFormat::e4m3fn;

  // q [B, next_n, H, D]: fp8 codes, or for mxfp4 packed e2m1 [B, next_n, H, D/2]
  // with q_block_scales [B, next_n, H, D/32] ue8m0 codes.
  std::vector<uint8_t> q;
  std::vector<uint8_t> q_block_scales;
  std::vector<float> weights;  // [B * next_n, H]

  // seq_lens: [B] (1-D, tokens after this step) or [B, next_n] (2-D, per row, as given).
  std::vector<int32_t> seq_lens;
  bool seq_lens_2d = false;
  int32_t compress_ratio = 1;  // 1-D lengths in tokens become floor(tokens / ratio) entries

  std::vector<int32_t> block_table;  // [B, max_pages]
  int32_t max_pages = 0;
  int64_t logits_width = 0;  // W: max_model_len / compress_ratio

  // Padded step (SPEC 5): decode_lens[b] = d_b <= next_n real rows of request b,
  // rows j >= d_b are padding. Empty: every row is real.
  std::vector<int32_t> decode_lens;
  PaddedLengths padded_lengths = PaddedLengths::causal;

  PagedKCache cache;

  int64_t rows() const { return int64_t(batch) * next_n; }
  bool is_padded_row(int64_t row) const;
  // Throws InvalidInput naming the argument for every inconsistency: shapes,
  // lengths (negative, beyond the page table, beyond W), page ids outside the
  // cache, NaN or inf in weights or scales, NaN q outside padded rows, a format
  // that disagrees with the cache.
  void validate() const;
};

// L_r of SPEC 4 / 5: the entries row r sees (its top-k reads [0, L_r)).
// Padded rows (j >= d_b) see 0 under `causal`.
int64_t visible_len(const DecodeProblem& p, int64_t row);
std::vector<int64_t> visible_lens(const DecodeProblem& p);
// E_r of SPEC 7 (the candidate ops' row end, the seed's _row_bounds): with 2-D
// lengths E_r = L_r; with 1-D lengths every row of request b uses the request's
// full length floor(seq_lens[b] / ratio).
int64_t candidate_row_end(const DecodeProblem& p, int64_t row);
std::vector<int64_t> candidate_row_ends(const DecodeProblem& p);

struct PrefillProblem {
  int32_t rows = 0;      // S query rows
  int32_t heads = 0;     // H
  int32_t head_dim = 0;  // D
  ElementFormat element = ElementFormat::e4m3fn;  // fp8 only
  std::vector<uint8_t> q;       // [S, H, D] codes
  int64_t num_k = 0;            // N
  std::vector<uint8_t> k;       // [N, D] codes
  std::vector<float> k_scales;  // [N]
  std::vector<float> weights;   // [S, H]
  std::vector<int32_t> ks, ke;  // [S]: row r sees K entries [ks, ke)

  void validate() const;  // as DecodeProblem::validate
};

}  // namespace dsa
