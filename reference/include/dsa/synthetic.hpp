// Synthetic indexer inputs drawn with the project's Rng: the same config and
// seed give the same bytes on every machine. Used by `dsa-oracle run`, the
// golden presets, the benchmarks and the tests.
#pragma once

#include <cstdint>
#include <vector>

#include "dsa/problem.hpp"
#include "dsa/rng.hpp"

namespace dsa {

// How q and K values are drawn (before quantization).
enum class ValueDistribution : uint8_t {
  normal,      // N(0, 1)
  few_levels,  // one of 4 levels: massive ties in the logits
  constant,    // every value the same: every logit of a row ties
};

struct SyntheticDecodeConfig {
  int32_t batch = 4;
  int32_t next_n = 1;
  int32_t heads = 64;
  int32_t head_dim = 128;
  ElementFormat element = ElementFormat::e4m3fn;
  CacheLayout layout = CacheLayout::block_flat;
  int32_t block_size = 64;      // entries per page
  int32_t compress_ratio = 1;   // 1-D lengths are tokens; entries = tokens / ratio
  std::vector<int32_t> seq_lens;  // per request, tokens after this step (1-D lengths)
  std::vector<int32_t> decode_lens;  // optional padding (SPEC 5)
  int64_t logits_width = 0;     // 0: the widest row, rounded up to a page
  bool shuffle_pages = true;    // page table a random permutation of the pages
  int32_t spare_pages = 3;      // pages nobody uses (filled with junk bytes)
  bool ue8m0_scale = false;
  ValueDistribution q_values = ValueDistribution::normal;
  ValueDistribution k_values = ValueDistribution::normal;
  bool bf16_weights = false;    // weights rounded to bf16 (the sm100 bf16 path)
};

DecodeProblem make_decode_problem(const SyntheticDecodeConfig& config, Rng& rng);

struct SyntheticPrefillConfig {
  int32_t rows = 16;
  int32_t heads = 64;
  int32_t head_dim = 128;
  int64_t num_k = 4096;
  ElementFormat element = ElementFormat::e4m3fn;
  ValueDistribution q_values = ValueDistribution::normal;
  ValueDistribution k_values = ValueDistribution::normal;
};

// Causal chunk: row r sees [0, num_k - rows + r + 1) (ks = 0).
PrefillProblem make_prefill_problem(const SyntheticPrefillConfig& config, Rng& rng);

}  // namespace dsa
