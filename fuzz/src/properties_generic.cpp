// The two properties that run on every kind of case and every op a case
// reaches: determinism (two runs, the same answer) and every entry written
// (no poison left where an op must write).
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/determinism_check.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/sparse_check.hpp"
#include "dsa/padding.hpp"
#include "properties_checks.hpp"
#include "properties_support.hpp"

namespace dsa::fuzz::detail {
namespace {

constexpr const char* kOps =
    "topk, candidate_select, candidate_topk, decode_logits, compact_candidate_logits, candidate_logits_top_k, "
    "unpack_topk, expand_candidate_blocks, sparse_logits, sparse_topk, prefill_logits, "
    "prefill_compact_candidate_logits";

std::string determinism_failure(const std::string& what, const oracle::DeterminismVerdict& v) {
  return v.passed ? std::string() : what + ": " + oracle::format_table(v);
}
std::string logits_failure(const std::string& what, const oracle::LogitsVerdict& v) {
  return v.passed ? std::string() : what + ", second run (actual) versus first (expected): " + oracle::format_table(v);
}
std::string written_failure(const oracle::WrittenVerdict& w) {
  return w.passed ? std::string() : oracle::format_table(w);
}

// Runs `call` on two copies of `out`; false when the implementation does not take it.
template <class Out, class Call>
bool twice(Out& first, Out& second, Call&& call) {
  return supported([&] { call(first); }) && supported([&] { call(second); });
}

// The SM100 sparse ops of a decode step, each fed the reference's upstream output.
void sparse_determinism(IndexerOps& impl, const DecodeCase& c, const DecodeProblem& p, const Profile& profile,
                        const CandidateBlocks& cand, Verdicts& v) {
  const auto sparse = reference_sparse(p, cand);
  if (!sparse) return;
  SparseBlocks x = poisoned_sparse(*sparse), y = x;
  const RowBounds bounds = topk_row_bounds(p);
  if (twice(x, y, [&](SparseBlocks& out) { impl.expand_candidate_blocks(cand, bounds, out); })) {
    const auto sv = oracle::check_sparse_blocks(y, x);
    v.add(true, sv.passed ? "" : "expand_candidate_blocks, second run versus first: " + oracle::format_table(sv));
  }
  if (!takes_sparse_logits(p, profile)) return;
  const RowBounds columns = oracle::decode_bounds(std::vector<int64_t>(sparse->end.begin(), sparse->end.end()));
  Logits s = poisoned_bf16_logits(p.rows(), sparse->width()), t = s;
  const bool own = twice(s, t, [&](Logits& out) { impl.sparse_logits(p, profile, *sparse, out); });
  if (own) v.add(true, logits_failure("sparse_logits", oracle::check_logits(t, s, columns)));
  // The top-k reads the implementation's own sparse logits when it has them.
  const Logits values = own ? s : sparse_logits(p, profile, *sparse);
  const std::vector<int64_t> row_ks(size_t(p.rows()), 0);
  TopkIndices a = poisoned_topk(p.rows(), c.topk), b = a;
  if (twice(a, b, [&](TopkIndices& out) { impl.sparse_topk(values, *sparse, row_ks, out); }))
    v.add(true, determinism_failure("sparse_topk", oracle::check_determinism(oracle::view(a), oracle::view(b))));
}

void sparse_written(IndexerOps& impl, const DecodeCase& c, const DecodeProblem& p, const Profile& profile,
                    const CandidateBlocks& cand, Verdicts& v) {
  const auto sparse = reference_sparse(p, cand);
  if (!sparse) return;
  SparseBlocks blocks = poisoned_sparse(*sparse);
  if (supported([&] { impl.expand_candidate_blocks(cand, topk_row_bounds(p), blocks); })) {
    v.add(true,
          written_failure(oracle::check_written({blocks.ids, blocks.rows, blocks.num_sparse}, "sparse_block_ids")));
    v.add(true, written_failure(oracle::check_written({blocks.end, blocks.rows, 1}, "sparse_end")));
  }
  if (!takes_sparse_logits(p, profile)) return;
  const RowBounds columns = oracle::decode_bounds(std::vector<int64_t>(sparse->end.begin(), sparse->end.end()));
  Logits values = poisoned_bf16_logits(p.rows(), sparse->width());
  const bool own = supported([&] { impl.sparse_logits(p, profile, *sparse, values); });
  if (own)
    v.add(true, written_failure(oracle::check_written(values, columns, "sparse_logits", oracle::kPoisonBf16AsF32Bits)));
  if (!own) values = sparse_logits(p, profile, *sparse);
  TopkIndices out = poisoned_topk(p.rows(), c.topk);
  const std::vector<int64_t> row_ks(size_t(p.rows()), 0);
  if (supported([&] { impl.sparse_topk(values, *sparse, row_ks, out); }))
    v.add(true, written_failure(oracle::check_written(oracle::view(out), "sparse_topk_indices")));
}

TopkIndices unpacked_buffer(const DecodeProblem& p, int32_t k) {
  int64_t rows = 0;
  for (const int32_t d : p.decode_lens) rows += d;
  return poisoned_topk(rows, k);
}

void decode_determinism(IndexerOps& impl, const DecodeCase& c, Verdicts& v) {
  const DecodeProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  const std::vector<int64_t> lens = visible_lens(p);
  Logits x = poisoned_logits(p.rows(), p.logits_width), y = x;
  if (twice(x, y, [&](Logits& out) { impl.decode_logits(p, profile, out); }))
    v.add(true, logits_failure("decode_logits", oracle::check_logits(y, x, lens)));
  const CandidateBlocks cand = make_candidates(c, p);
  const int64_t width = int64_t(cand.slots) * cand.block_size;
  Logits s = poisoned_logits(p.rows(), width), t = s;
  if (twice(s, t, [&](Logits& out) { impl.compact_candidate_logits(p, profile, cand, out); }))
    v.add(true, compare_compact(t, s, cand, lens, "compact candidate logits, second run versus first"));
  Logits fs = poisoned_logits(p.rows(), width), ft = fs;
  TopkIndices fa = poisoned_topk(p.rows(), c.topk), fb = fa;
  if (supported([&] { impl.candidate_logits_top_k(p, profile, cand, fs, fa); }) &&
      supported([&] { impl.candidate_logits_top_k(p, profile, cand, ft, fb); })) {
    v.add(true,
          compare_compact(ft, fs, cand, lens, "candidate_logits_top_k's compact logits, second run versus first"));
    v.add(true,
          determinism_failure("candidate_logits_top_k", oracle::check_determinism(oracle::view(fa), oracle::view(fb))));
  }
  if (!p.decode_lens.empty()) {
    const TopkIndices padded = draw_index_rows(p.rows(), c.topk, c.seed);
    TopkIndices a = unpacked_buffer(p, c.topk), b = a;
    if (twice(a, b, [&](TopkIndices& out) { impl.unpack_topk(padded, p.decode_lens, out); }))
      v.add(true, determinism_failure("unpack_topk", oracle::check_determinism(oracle::view(a), oracle::view(b))));
  }
  sparse_determinism(impl, c, p, profile, cand, v);
}

void decode_written(IndexerOps& impl, const DecodeCase& c, Verdicts& v) {
  const DecodeProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  const std::vector<int64_t> lens = visible_lens(p);
  Logits out = poisoned_logits(p.rows(), p.logits_width);
  if (supported([&] { impl.decode_logits(p, profile, out); }))
    v.add(true, written_failure(oracle::check_written(out, oracle::decode_bounds(lens), "logits")));
  const CandidateBlocks cand = make_candidates(c, p);
  const int64_t width = int64_t(cand.slots) * cand.block_size;
  // Only live slots at positions below L_r must be written (SPEC 7).
  Logits compact = poisoned_logits(p.rows(), width);
  if (supported([&] { impl.compact_candidate_logits(p, profile, cand, compact); }))
    v.add(true,
          written_failure(oracle::check_written(oracle::compact_written_view(compact, cand, lens), "compact_logits")));
  Logits fused = poisoned_logits(p.rows(), width);
  TopkIndices chosen = poisoned_topk(p.rows(), c.topk);
  if (supported([&] { impl.candidate_logits_top_k(p, profile, cand, fused, chosen); })) {
    v.add(true, written_failure(oracle::check_written(oracle::compact_written_view(fused, cand, lens),
                                                      "candidate_logits_top_k compact_logits")));
    v.add(true, written_failure(oracle::check_written(oracle::view(chosen), "candidate_logits_top_k topk_indices")));
  }
  if (!p.decode_lens.empty()) {
    TopkIndices rows = unpacked_buffer(p, c.topk);
    if (supported([&] { impl.unpack_topk(draw_index_rows(p.rows(), c.topk, c.seed), p.decode_lens, rows); }))
      v.add(true, written_failure(oracle::check_written(oracle::view(rows), "unpack_topk")));
  }
  sparse_written(impl, c, p, profile, cand, v);
}

void prefill_determinism(IndexerOps& impl, const PrefillCase& c, Verdicts& v) {
  const PrefillProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  const RowBounds bounds = oracle::prefill_bounds(p.ks, p.ke);
  Logits x = poisoned_logits(p.rows, p.num_k), y = x;
  if (twice(x, y, [&](Logits& out) { impl.prefill_logits(p, profile, out); }))
    v.add(true, logits_failure("prefill_logits", oracle::check_logits(y, x, bounds)));
  const CandidateBlocks cand = make_candidates(c, p);
  Logits s = poisoned_logits(p.rows, int64_t(cand.slots) * cand.block_size), t = s;
  if (twice(s, t, [&](Logits& out) { impl.prefill_compact_candidate_logits(p, profile, cand, out); }))
    v.add(true, compare_compact(t, s, cand, oracle::lengths(bounds),
                                "prefill compact candidate logits, second run versus first"));
}

void prefill_written(IndexerOps& impl, const PrefillCase& c, Verdicts& v) {
  const PrefillProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  const RowBounds bounds = oracle::prefill_bounds(p.ks, p.ke);
  Logits out = poisoned_logits(p.rows, p.num_k);
  if (supported([&] { impl.prefill_logits(p, profile, out); }))
    v.add(true, written_failure(oracle::check_written(out, bounds, "prefill_logits")));
  const CandidateBlocks cand = make_candidates(c, p);
  Logits compact = poisoned_logits(p.rows, int64_t(cand.slots) * cand.block_size);
  if (supported([&] { impl.prefill_compact_candidate_logits(p, profile, cand, compact); }))
    v.add(true, written_failure(oracle::check_written(
                    oracle::compact_written_view(compact, cand, oracle::lengths(bounds)), "prefill compact_logits")));
}

}  // namespace

Outcome check_determinism(IndexerOps& impl, const FuzzCase& fc) {
  Verdicts v;
  if (const auto* c = std::get_if<TopkCase>(&fc)) {
    const Logits logits = make_logits(*c);
    const RowBounds b = make_bounds(*c);
    TopkIndices x = poisoned_topk(logits.rows, c->k), y = x;
    if (twice(x, y, [&](TopkIndices& out) { impl.topk(logits, b, out); }))
      v.add(true, determinism_failure("topk", oracle::check_determinism(oracle::view(x), oracle::view(y))));
  } else if (const auto* c = std::get_if<CandidateCase>(&fc)) {
    const Logits logits = make_logits(*c);
    const RowBounds cb = candidate_bounds(*c), tb = topk_bounds(*c);
    CandidateBlocks x = poisoned_blocks(logits.rows, c->slots, c->block_size), y = x;
    if (twice(x, y, [&](CandidateBlocks& out) { impl.candidate_select(logits, cb, out); }))
      v.add(true, determinism_failure("candidate_select", oracle::check_determinism(oracle::view(x), oracle::view(y))));
    const CandidateBlocks cand = make_candidates(*c, logits);
    TopkIndices s = poisoned_topk(logits.rows, c->k), t = s;
    if (twice(s, t, [&](TopkIndices& out) { impl.candidate_topk(logits, tb, cand, out); }))
      v.add(true, determinism_failure("candidate_topk", oracle::check_determinism(oracle::view(s), oracle::view(t))));
  } else if (const auto* c = std::get_if<DecodeCase>(&fc)) {
    decode_determinism(impl, *c, v);
  } else {
    prefill_determinism(impl, std::get<PrefillCase>(fc), v);
  }
  return v.outcome(kOps);
}

Outcome check_every_entry_written(IndexerOps& impl, const FuzzCase& fc) {
  Verdicts v;
  if (const auto* c = std::get_if<TopkCase>(&fc)) {
    const Logits logits = make_logits(*c);
    TopkIndices out = poisoned_topk(logits.rows, c->k);
    if (supported([&] { impl.topk(logits, make_bounds(*c), out); }))
      v.add(true, written_failure(oracle::check_written(oracle::view(out), "topk_indices")));
  } else if (const auto* c = std::get_if<CandidateCase>(&fc)) {
    const Logits logits = make_logits(*c);
    CandidateBlocks blocks = poisoned_blocks(logits.rows, c->slots, c->block_size);
    if (supported([&] { impl.candidate_select(logits, candidate_bounds(*c), blocks); }))
      v.add(true, written_failure(oracle::check_written(oracle::view(blocks), "candidate_blocks")));
    const CandidateBlocks cand = make_candidates(*c, logits);
    TopkIndices out = poisoned_topk(logits.rows, c->k);
    if (supported([&] { impl.candidate_topk(logits, topk_bounds(*c), cand, out); }))
      v.add(true, written_failure(oracle::check_written(oracle::view(out), "candidate_topk_indices")));
  } else if (const auto* c = std::get_if<DecodeCase>(&fc)) {
    decode_written(impl, *c, v);
  } else {
    prefill_written(impl, std::get<PrefillCase>(fc), v);
  }
  return v.outcome(kOps);
}

}  // namespace dsa::fuzz::detail
