// Golden presets: named sets of cases a user asks for (`dsa-oracle golden
// --preset NAME`), drawn with the project's Rng so that the same preset, seed,
// size and profile give byte-identical files on every machine.
//
//   v32_decode  DeepSeek V3.2 decode: H 64, D 128, k 2048, page 64, next_n 1 and 2 (1-D and 2-D lengths)
//   v41_c4a     DeepSeek V4.1 C4A decode: ratio 4, k 512, page 256 tokens = 64 entries, candidate
//               blocks of 8: the source layer, and consumer layers fed by its candidate blocks
//   prefill     chunked prefill over contiguous K, two packed sequences (ks > 0 on the second)
//   gfx942      V3.2 decode on the gfx942 preshuffle cache with e4m3fnuz
//   mxfp4       V4.1 on SM100: MXFP4 cache, bf16 weights and logits, the sparse form
//   edge        short rows (L < k, L = 0), ties at the cut, -inf- and NaN-heavy rows, padded requests,
//               candidate rows with no block
// Each case is planned first (name, op, seed) and built on demand, so large
// sets never sit in memory together.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dsa/dataset/golden_case.hpp"

namespace dsa::dataset {

struct PresetInfo {
  std::string name;
  std::string default_profile;
  std::string description;
};
const std::vector<PresetInfo>& golden_presets();
// Throws InvalidInput("preset", ...) naming the known presets.
const PresetInfo& find_preset(std::string_view name);

// How big a preset's cases are: small (committed sets, CI), medium, large
// (up to 128k tokens of context), or explicit numbers.
struct PresetSize {
  std::string label;    // "small", "medium", "large", or the text given
  int32_t batch = 0;    // 0: the preset's small batch
  int64_t context = 0;  // tokens of the longest request (prefill: keys); 0: the preset's small context
};
// "small" | "medium" | "large" | "N" (context N tokens) | "BxN" (batch B, context N).
// Throws InvalidInput("size", ...).
PresetSize parse_preset_size(std::string_view text);

struct PresetRequest {
  std::string preset;
  uint64_t seed = 1;
  std::string profile;  // empty: the preset's default
  std::string size = "small";
};

struct PlannedCase {
  std::string file;  // e.g. "v32_decode_00_nn1.safetensors"
  GoldenOp op;
  // Builds the case with its expected outputs. Cases of one plan may depend on
  // earlier ones (a consumer layer on its source layer): build them in order.
  std::function<GoldenCase()> build;
};

// Validates the request (preset, profile, size, the profile's formats) and
// plans its cases. Throws InvalidInput("preset" / "profile" / "size", ...).
std::vector<PlannedCase> plan_preset(const PresetRequest& request);

// The generator string written into every case's metadata.
std::string generator_string(const PresetRequest& request);

}  // namespace dsa::dataset
