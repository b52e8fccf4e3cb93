// The `edge` preset: the corners real kernels got wrong (SPEC 6, 7, 10).
// Fixed small cases; --size does not change them.
#include <algorithm>
#include <array>
#include <limits>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "presets_support.hpp"

namespace dsa::dataset::detail {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

GoldenCase step_case(const PresetContext& ctx, uint64_t seed, const std::string& name, int32_t next_n,
                     std::vector<int32_t> seq_lens, int32_t k, std::vector<int32_t> decode_lens = {}) {
  Rng rng(seed);
  SyntheticDecodeConfig config = decode_config(ctx, preset_fp8(ctx), next_n);
  config.batch = int32_t(seq_lens.size());
  config.seq_lens = std::move(seq_lens);
  config.decode_lens = std::move(decode_lens);
  GoldenCase c = new_case(ctx, GoldenOp::decode_topk, name);
  c.settings.topk = k;
  c.decode = make_decode_problem(config, rng);
  return c;
}

// What lies past a row's end in given logits: values a reader past the row would pick.
float garbage(Rng& rng) {
  switch (rng.uniform_int(0, 2)) {
    case 0: return kInf;
    case 1: return kNaN;
    default: return 1e30f;
  }
}

enum class RowKind { normal, mostly_neg_inf, all_neg_inf, nan_heavy, specials, constant };

void fill_row(float* row, int64_t end, int64_t width, RowKind kind, Rng& rng) {
  for (int64_t n = 0; n < width; ++n) {
    float v = float(rng.normal());
    if (n >= end) v = garbage(rng);
    else if (kind == RowKind::mostly_neg_inf && rng.uniform_int(0, 7) != 0) v = -kInf;
    else if (kind == RowKind::all_neg_inf) v = -kInf;
    else if (kind == RowKind::nan_heavy && rng.bernoulli(0.5)) v = kNaN;
    else if (kind == RowKind::specials) v = std::array<float, 5>{kInf, -kInf, 0.0f, -0.0f, 1.0f}[size_t(rng.uniform_int(0, 4))];
    else if (kind == RowKind::constant) v = 0.5f;
    row[n] = v;
  }
}

// A lengths-only decode problem for given logits.
DecodeProblem lengths_problem(int32_t next_n, std::vector<int32_t> seq_lens, int64_t width) {
  DecodeProblem p;
  p.batch = int32_t(seq_lens.size());
  p.next_n = next_n;
  p.seq_lens = std::move(seq_lens);
  p.logits_width = width;
  return p;
}

void round_for_profile(const PresetContext& ctx, Logits& logits) {
  if (ctx.profile->logits == Precision::bf16)
    for (auto& v : logits.values) v = round_to_bf16(v);
}

GoldenCase neg_inf_rows(const PresetContext& ctx, uint64_t seed) {
  Rng rng(seed);
  const std::vector<int32_t> lens{256, 200, 100, 64, 63, 10, 0, 256};
  const std::vector<RowKind> kinds{RowKind::mostly_neg_inf, RowKind::all_neg_inf, RowKind::nan_heavy, RowKind::specials,
                                   RowKind::normal,         RowKind::normal,      RowKind::normal,    RowKind::constant};
  GoldenCase c = new_case(ctx, GoldenOp::decode_topk, "neg_inf_rows");
  c.settings.topk = 64;
  c.decode = lengths_problem(1, lens, 256);
  Logits logits{int64_t(lens.size()), 256, std::vector<float>(lens.size() * 256)};
  for (size_t r = 0; r < lens.size(); ++r) fill_row(logits.row(int64_t(r)), lens[r], 256, kinds[r], rng);
  round_for_profile(ctx, logits);
  c.given_logits = std::move(logits);
  return finish(std::move(c));
}

// Candidate rows (next_n 2, 1-D lengths so that E_r > L_r on the first row of
// each request): no block (E = 0), a single entry, NaN, -inf-heavy, ties.
struct CandidateRows {
  DecodeProblem lengths;
  Logits logits;
};

constexpr int32_t kEdgeBlock = 8, kEdgeSlots = 4, kEdgeTopk = 16;

CandidateRows candidate_rows(const PresetContext& ctx, uint64_t seed) {
  Rng rng(seed);
  const std::vector<int32_t> lens{0, 1, 40, 100, 64};
  const std::vector<RowKind> kinds{RowKind::normal, RowKind::normal, RowKind::nan_heavy, RowKind::mostly_neg_inf,
                                   RowKind::constant};
  CandidateRows rows{lengths_problem(2, lens, 128), Logits{10, 128, std::vector<float>(10 * 128)}};
  for (int64_t r = 0; r < 10; ++r)
    fill_row(rows.logits.row(r), candidate_row_end(rows.lengths, r), 128, kinds[size_t(r / 2)], rng);
  round_for_profile(ctx, rows.logits);
  return rows;
}

GoldenCase candidate_case(const PresetContext& ctx, const CandidateRows& rows, GoldenOp op, const std::string& name) {
  GoldenCase c = new_case(ctx, op, name);
  c.settings.topk = kEdgeTopk;
  c.settings.candidate_block_size = kEdgeBlock;
  c.settings.candidate_topk_blocks = kEdgeSlots;
  c.decode = rows.lengths;
  c.given_logits = rows.logits;
  return c;
}

// The selection with holes: a -1 slot in the middle, and a block past the row's end.
CandidateBlocks drawn_candidates(const CandidateRows& rows) {
  CandidateBlocks cand = select_candidate_blocks(rows.lengths, rows.logits, kEdgeBlock, kEdgeSlots);
  const int32_t num_blocks = int32_t(rows.logits.width / kEdgeBlock);
  for (int64_t r = 0; r < cand.rows; ++r) {
    int32_t* row = cand.row(r);
    if (row[1] >= 0) row[1] = -1;
    const int32_t past = int32_t((candidate_row_end(rows.lengths, r) + kEdgeBlock - 1) / kEdgeBlock);
    if (past < num_blocks && std::find(row, row + kEdgeSlots, past) == row + kEdgeSlots) row[kEdgeSlots - 1] = past;
  }
  return cand;
}

}  // namespace

void plan_edge(Planner& planner) {
  auto ctx = planner.shared();
  preset_fp8(*ctx);
  planner.add("short_rows", GoldenOp::decode_topk, [ctx](uint64_t s) {
    return finish(step_case(*ctx, s, "short_rows", 2, {0, 1, 2, 63, 64, 65, 300, 600}, 512));
  });
  planner.add("ties", GoldenOp::decode_topk, [ctx](uint64_t s) {
    GoldenCase c = step_case(*ctx, s, "ties", 2, {300, 129, 65}, 64);
    Rng rng(s ^ 0x9E3779B97F4A7C15ull);
    repeat_tokens(*c.decode, 6, rng);  // six distinct keys: logits take six values per row
    return finish(std::move(c));
  });
  planner.add("neg_inf_rows", GoldenOp::decode_topk, [ctx](uint64_t s) { return neg_inf_rows(*ctx, s); });
  planner.add("padded", GoldenOp::decode_topk, [ctx](uint64_t s) {
    return finish(step_case(*ctx, s, "padded", 3, {150, 400, 90}, 128, {1, 3, 2}));
  });
  const uint64_t rows_seed = planner.draw_seed();
  planner.add("candidate_rows", GoldenOp::candidate_select, [ctx, rows_seed](uint64_t) {
    return finish(candidate_case(*ctx, candidate_rows(*ctx, rows_seed), GoldenOp::candidate_select, "candidate_rows"));
  });
  for (GoldenOp op : {GoldenOp::candidate_topk, GoldenOp::candidate_mask}) {
    const std::string name = op == GoldenOp::candidate_topk ? "candidate_topk_drawn" : "candidate_mask_drawn";
    planner.add(name, op, [ctx, rows_seed, op, name](uint64_t) {
      const CandidateRows rows = candidate_rows(*ctx, rows_seed);
      GoldenCase c = candidate_case(*ctx, rows, op, name);
      c.candidate_blocks = drawn_candidates(rows);
      return finish(std::move(c));
    });
  }
}

}  // namespace dsa::dataset::detail
