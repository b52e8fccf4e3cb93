// One golden case: the inputs of one indexer op and its expected outputs, and
// their conversion to and from a safetensors file (docs/golden-format.md,
// "Case schema").
//
// Inputs and outputs are told apart by the metadata key `outputs`, the
// comma-separated names of the expected outputs a file holds; every other
// tensor is an input. So the user-facing names stay what the kernels call
// them (`logits`, `topk_indices`, `candidate_blocks`, `compact_logits`) even
// where one op's output is another's input: a consumer layer's
// `candidate_blocks` is an input, the source layer's an output, and the
// top-k and candidate ops take `logits` either as an input (the op alone) or
// compute them from q and the cache (the whole step; `logits` is then an
// expected output as well).
//
// Reading validates everything before any work: a missing or unknown tensor,
// a dtype or shape that does not fit the op, a metadata value that does not
// parse or contradicts a flag or a shape, and every rule of
// DecodeProblem/PrefillProblem::validate (page ids, lengths, NaN in q,
// weights or scales). Each throws dsa::InvalidInput naming the tensor or key.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dsa/candidates.hpp"
#include "dsa/dataset/safetensors.hpp"
#include "dsa/logits.hpp"
#include "dsa/problem.hpp"
#include "dsa/profile.hpp"
#include "dsa/sparse_sm100.hpp"
#include "dsa/topk.hpp"

namespace dsa::dataset {

inline constexpr std::string_view kGoldenSchema = "dsa-oracle/golden/1";

enum class GoldenOp : uint8_t {
  decode_logits,             // q, cache -> logits
  prefill_logits,            // q, k -> logits
  decode_topk,               // (q, cache ->) logits -> topk_indices
  prefill_topk,              // (q, k ->) logits -> topk_indices (relative to ks)
  candidate_select,          // (q, cache ->) logits -> candidate_blocks [+ topk_indices]: the source layer
  candidate_mask,            // (q, cache ->) logits, candidate_blocks -> masked_logits -> topk_indices
  candidate_topk,            // (q, cache ->) logits, candidate_blocks -> topk_indices
  compact_candidate_logits,  // q, cache, candidate_blocks -> compact_logits [-> topk_indices]
  consumer_step,             // q, cache, candidate_blocks -> logits -> candidate top-k: a consumer layer
  sparse_sm100,              // MXFP4 q, cache, candidate_blocks -> sparse blocks, bf16 sparse logits, top-k
};
std::string_view to_string(GoldenOp op);
// Throws InvalidInput("op", ...) naming the known ops.
GoldenOp parse_golden_op(std::string_view name);
std::vector<GoldenOp> golden_ops();

bool is_prefill_op(GoldenOp op);
// Ops that may take `logits` as an input instead of computing them.
bool may_take_logits(GoldenOp op);
// Ops that take `candidate_blocks` as an input.
bool takes_candidate_blocks(GoldenOp op);
bool needs_topk(GoldenOp op);  // the `topk` key is required

// Output tensor names (the four of issue 6, plus what the mask and the SM100 sparse form write).
namespace out {
inline constexpr const char* logits = "logits";
inline constexpr const char* topk_indices = "topk_indices";
inline constexpr const char* candidate_blocks = "candidate_blocks";
inline constexpr const char* compact_logits = "compact_logits";
inline constexpr const char* masked_logits = "masked_logits";
inline constexpr const char* sparse_logits = "sparse_logits";
inline constexpr const char* sparse_block_ids = "sparse_block_ids";
inline constexpr const char* sparse_end = "sparse_end";
}  // namespace out

// Every output the op can have, in a fixed order; `logits` only when the op
// computes them. The primary output is the one a kernel's outputs file must hold.
std::vector<std::string> op_outputs(GoldenOp op, bool logits_given);
std::string primary_output(GoldenOp op);

// The parameters of a case that are not tensors.
struct CaseSettings {
  GoldenOp op = GoldenOp::decode_logits;
  std::string profile = "exact";
  int32_t topk = 0;                   // 0: the op has no top-k output
  int32_t candidate_block_size = 0;   // S; 0 when the op has no candidates
  int32_t candidate_topk_blocks = 0;  // C
  // Written as metadata untouched (seed, generator, preset, candidate_source, ...).
  std::map<std::string, std::string> info;
};

struct GoldenOutputs {
  std::optional<Logits> logits;         // F32, BF16 for profiles with bf16 logits
  std::optional<TopkIndices> topk_indices;
  std::optional<CandidateBlocks> candidate_blocks;
  std::optional<Logits> masked_logits;
  std::optional<Logits> compact_logits;
  std::optional<Logits> sparse_logits;   // BF16
  std::optional<SparseBlocks> sparse_blocks;  // sparse_block_ids [rows, num_sparse], sparse_end [rows]
  std::vector<std::string> names() const;  // the outputs held (logits, topk_indices, candidate_blocks, ... order)
};

struct GoldenCase {
  CaseSettings settings;
  // Exactly one is set. With given logits the problem holds the lengths only
  // (batch, next_n, seq_lens, decode_lens, compress_ratio, logits_width; ks,
  // ke, num_k): no q, cache or weights.
  std::optional<DecodeProblem> decode;
  std::optional<PrefillProblem> prefill;
  std::optional<Logits> given_logits;
  std::optional<CandidateBlocks> candidate_blocks;  // the consumer ops' input
  GoldenOutputs expected;

  bool logits_given() const { return given_logits.has_value(); }
  int64_t rows() const;
  int64_t logits_width() const;  // W (decode) or num_k (prefill)
  // Per row: the top-k (and logits) window [0, L_r) or [ks, ke).
  std::vector<int64_t> window_begin() const;
  std::vector<int64_t> window_end() const;
  // Per decode row: E_r, the candidate ops' row end.
  std::vector<int64_t> candidate_ends() const;
};

// Flags that stand for metadata keys (`dsa-oracle reference --topk 512`): a
// flag fills a key the file lacks, and must agree with the file where both are given.
using MetadataFlags = std::map<std::string, std::string>;

// The inputs of a case (expected outputs, when the file lists any, are not read).
GoldenCase read_case_inputs(const Safetensors& file, const MetadataFlags& flags = {});
// Inputs and the expected outputs the `outputs` key lists (it must be present).
GoldenCase read_golden_case(const Safetensors& file);
// The outputs of the case's op that `file` holds (a kernel's outputs file:
// other tensors are ignored), each checked for dtype and shape against the
// case. Throws InvalidInput naming the tensor; and when `require_primary`,
// InvalidInput(primary_output) when that one is missing.
GoldenOutputs read_outputs(const Safetensors& file, const GoldenCase& golden, bool require_primary = true);

// Runs the reference: fills every output of op_outputs (or those named).
void compute_expected(GoldenCase& golden);
void compute_expected(GoldenCase& golden, const std::vector<std::string>& outputs);

// The metadata of a case (schema, op, profile, the problem's keys, outputs, info).
std::map<std::string, std::string> case_metadata(const GoldenCase& golden);
// Adds the input tensors / the expected output tensors of a case.
void put_inputs(Safetensors& file, const GoldenCase& golden);
void put_outputs(Safetensors& file, const GoldenCase& golden, const GoldenOutputs& outputs);
// A whole golden file: inputs, expected outputs and metadata.
Safetensors to_safetensors(const GoldenCase& golden);

// Logits as the schema stores them: F32, or BF16 (bit patterns, each value
// must be bf16-valued: throws InvalidInput(name) otherwise) for bf16 profiles.
void put_logits(Safetensors& file, const std::string& name, const Logits& logits, bool bf16);
// F32 or BF16 [rows, width] (BF16 widened by a shift, so poison patterns survive).
Logits read_logits(const Safetensors& file, const std::string& name, int64_t rows, int64_t width);

}  // namespace dsa::dataset
