// The cases the fuzzer draws: small descriptions (sizes, choices and seeds)
// from which the big arrays are derived. Shrinking a description shrinks the
// case, the description is the replay string of a failure, and the same
// description gives the same bytes on every machine (dsa::Rng only).
//
// Four kinds:
//   TopkCase       logits drawn directly (no q.k): properties about the top-k.
//   CandidateCase  logits drawn directly, rows grouped by request: candidate
//                  selection, candidate top-k, mask-then-top-k.
//   DecodeCase     a whole decode step over the paged K cache: logits, padded
//                  rows, page tables, compact candidate logits.
//   PrefillCase    contiguous K with per-row [ks, ke).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsa/candidates.hpp"
#include "dsa/logits.hpp"
#include "dsa/problem.hpp"

namespace dsa::fuzz {

// ---- Values of logits rows drawn directly.
enum class ValueKind : uint8_t {
  normal,          // N(0, 1)-like fp32
  few_levels,      // 4 levels: massive ties
  constant,        // one value: every entry ties
  mostly_neg_inf,  // 7/8 of the row -inf
  one_coarse_bin,  // all in one fp16 value, distinct fp32 (a radix select's coarse bin)
  nan_heavy,       // 7/8 NaN (uninitialised caches, overflow)
  extremes,        // +-inf, +-0, subnormals, +-FLT_MAX, an occasional NaN
  small_integers,  // -3..3: ties, but not massive
  bf16_valued,     // normal rounded to bf16 (bf16 logits tie often)
  below_fp16,      // 15/16 finite below fp16's -65504 (a key through fp16 puts them with -inf), distinct
};
// What lies outside a row's window: what the reference writes, or what a kernel leaves.
enum class TailKind : uint8_t {
  neg_inf,  // the reference's -inf
  garbage,  // +inf, NaN and huge values: a reader past the row picks them
};

struct TopkRow {
  int64_t start = 0;  // window [start, start + len) of the logits row
  int64_t len = 0;
  ValueKind values = ValueKind::normal;
  uint32_t seed = 0;
};

struct TopkCase {
  int32_t k = 1;
  int64_t width_pad = 0;  // logits width = max(start + len) + width_pad (at least 1)
  TailKind tail = TailKind::garbage;
  uint64_t seed = 0;
  std::vector<TopkRow> rows;
};

// ---- Candidate blocks (SPEC 7) on logits drawn directly.
enum class CandidateSource : uint8_t {
  selected,  // the reference's selection on the same logits (the model's flow)
  drawn,     // random blocks: past the row end, without the newest block, -1 slots
};

struct CandidateRequest {
  int64_t len = 0;                // 1-D: E_r of every row of the request (entries)
  std::vector<int64_t> row_lens;  // 2-D: L_r = E_r per row (next_n of them)
  ValueKind values = ValueKind::normal;
  uint32_t seed = 0;
};

struct CandidateCase {
  int32_t next_n = 1;  // rows per request (row_repeat)
  bool lens_2d = false;
  int32_t block_size = 8;  // S
  int32_t slots = 4;       // C
  int32_t k = 4;
  int64_t width_pad = 0;
  TailKind tail = TailKind::garbage;
  CandidateSource source = CandidateSource::selected;
  uint64_t seed = 0;
  std::vector<CandidateRequest> requests;
};

// ---- Whole decode steps.
enum class CodeKind : uint8_t {
  quantized_normal,  // vLLM's quantizer on N(0,1)-like values
  few_levels,        // quantizer on 4 levels: ties in the logits
  constant,          // quantizer on one value: every logit of a row ties
  random_codes,      // any non-NaN code (MXFP4: any nibble)
  extreme_codes,     // +-max, smallest subnormals, zeros
  subnormal_codes,   // subnormal codes only
};
enum class ScaleKind : uint8_t {
  quantizer,  // what the quantizer gives (or 2^-8..1 for raw codes)
  ue8m0,      // powers of two
  tiny,       // fp32 subnormals and 1e-30: logits flush towards zero
  huge,       // 1e30 .. FLT_MAX: logits overflow to inf, inf - inf = NaN
  zero,       // some scales 0
  mixed,      // each entry any of the above
};
enum class WeightKind : uint8_t {
  normal,    // N(0, 1/H)-like
  extreme,   // +-1e30, +-1e-30, 0, 65504
  zero,      // all 0
  positive,  // |N(0, 1/H)|: no cancellation in the head sum
};
enum class PageTableKind : uint8_t {
  contiguous,      // pages in request order
  shuffled,        // a random permutation of all pages
  shared,          // later requests share request 0's prefix pages, then shuffled
  non_contiguous,  // junk pages between the used ones
};

struct DecodeRequest {
  int32_t tokens = 0;             // 1-D: seq_lens[b] in tokens (entries = tokens / ratio)
  std::vector<int32_t> row_lens;  // 2-D: seq_lens[b][j] in entries (next_n of them)
  int32_t decode_len = 0;         // padded steps: d_b in [1, next_n]; 0 = not padded
  uint32_t seed = 0;
};

struct DecodeCase {
  int32_t next_n = 1;
  int32_t heads = 8;
  int32_t head_dim = 64;
  ElementFormat element = ElementFormat::e4m3fn;
  CacheLayout layout = CacheLayout::block_flat;
  int32_t block_size = 16;
  int32_t compress_ratio = 1;
  bool lens_2d = false;
  bool padded = false;  // decode_lens given (1-D lengths only)
  PageTableKind page_table = PageTableKind::contiguous;
  int32_t spare_pages = 0;
  int32_t extra_table_pages = 0;  // table columns past the pages used (valid but wrong page ids)
  int64_t width_pad = 0;
  CodeKind q_codes = CodeKind::quantized_normal;
  CodeKind k_codes = CodeKind::quantized_normal;
  ScaleKind k_scales = ScaleKind::quantizer;
  WeightKind weights = WeightKind::normal;
  std::string profile = "exact";
  // Candidate blocks for the compact-logits properties (drawn per row).
  int32_t candidate_block_size = 8;
  int32_t candidate_slots = 4;
  int32_t topk = 8;  // k of the top-k over compact or sparse rows (the fused launch, SM100 sparse form)
  uint64_t seed = 0;
  std::vector<DecodeRequest> requests;
};

// ---- Prefill.
struct PrefillRow {
  int64_t ks = 0;
  int64_t len = 0;  // ke = ks + len
  uint32_t seed = 0;
};

struct PrefillCase {
  int32_t heads = 8;
  int32_t head_dim = 64;
  ElementFormat element = ElementFormat::e4m3fn;
  int64_t num_k = 1;
  CodeKind q_codes = CodeKind::quantized_normal;
  CodeKind k_codes = CodeKind::quantized_normal;
  ScaleKind k_scales = ScaleKind::quantizer;
  WeightKind weights = WeightKind::normal;
  std::string profile = "exact";
  // Candidate blocks of the prefill compact logits (drawn per row; block c covers [ks + c*S, ...)).
  int32_t candidate_block_size = 8;
  int32_t candidate_slots = 4;
  uint64_t seed = 0;
  std::vector<PrefillRow> rows;
};

using FuzzCase = std::variant<TopkCase, CandidateCase, DecodeCase, PrefillCase>;

// ---- Materialization (cases_*.cpp). Deterministic; rows keep their data when
// other rows are removed (each row, request and page draws from its own seed).
Logits make_logits(const TopkCase& c);
RowBounds make_bounds(const TopkCase& c);
// Values outside every row's window replaced by another garbage pattern
// (+inf / NaN / huge when the case has -inf there, -inf otherwise).
Logits with_other_tail(const Logits& logits, const RowBounds& windows, uint64_t seed);

Logits make_logits(const CandidateCase& c);
RowBounds candidate_bounds(const CandidateCase& c);  // [0, E_r)
RowBounds topk_bounds(const CandidateCase& c);       // [0, L_r)
// The case's candidate blocks (the reference's selection, or drawn ones).
CandidateBlocks make_candidates(const CandidateCase& c, const Logits& logits);

// Throws InvalidInput only on a generator bug (the result is validated).
DecodeProblem make_problem(const DecodeCase& c);
const Profile& profile_of(const DecodeCase& c);
// Candidate blocks for the compact logits: per row, distinct blocks of
// [0, ceil(width / S)), the newest block usually among them, some past the row.
CandidateBlocks make_candidates(const DecodeCase& c, const DecodeProblem& problem);
PrefillProblem make_problem(const PrefillCase& c);
const Profile& profile_of(const PrefillCase& c);
// Candidate blocks of prefill rows: per row, distinct blocks of [0, ceil(num_k / S)),
// the block of the row's newest entry (ke - 1 - ks) usually among them, some past the row.
CandidateBlocks make_candidates(const PrefillCase& c, const PrefillProblem& problem);

// ---- Names, JSON (the replay string) and a compact human form.
std::string kind_name(const FuzzCase& c);  // "topk", "candidate", "decode", "prefill"
nlohmann::json to_json(const FuzzCase& c);
// Throws InvalidInput("replay", ...) naming the field for malformed input
// and for a case validate_case refuses.
FuzzCase case_from_json(const nlohmann::json& j);
// Every field within what the case's arrays can be built from: no negative
// size, no division by zero (block_size, compress_ratio), no sum or product
// past 64 bits, and an estimated memory within memory_bound_bytes(). Throws
// InvalidInput("replay", ...) naming the field. Generated cases always pass.
void validate_case(const FuzzCase& c);
// A few lines: shapes, lengths, kinds, and the values of small rows.
std::string describe(const FuzzCase& c);
// One line: "topk k=3 rows=2 lens=[5,64] ..."
std::string summary(const FuzzCase& c);
// Rows and the largest visible length: how small a shrunk case is.
struct CaseSize {
  int64_t rows = 0;
  int64_t max_visible = 0;
};
CaseSize case_size(const FuzzCase& c);

}  // namespace dsa::fuzz
