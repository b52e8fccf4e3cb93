// The differential properties (differential.hpp): every op of a case run on
// both implementations with the same inputs, their outputs compared by the
// oracle's rules. Each selection is judged on the values its own side wrote.
#include "dsa/fuzz/differential.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/error.hpp"
#include "dsa/oracle/baseline_check.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/determinism_check.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/oracle/sparse_check.hpp"
#include "properties_checks.hpp"
#include "properties_support.hpp"

namespace dsa::fuzz {
namespace {

using namespace detail;

// The implementation under test and the one it is held to, and how their
// outputs are named in a failure: "NEW (actual) versus OLD (expected)".
struct Pair {
  IndexerOps& mine;
  IndexerOps& theirs;
  const AgainstOptions& options;
  std::string versus(const std::string& what) const {
    return fmt::format("{}: {} (actual) versus {} (expected)", what, mine.name(), theirs.name());
  }
};

// Runs `call` on both sides; false when either does not take it (then nothing is compared).
template <class Out, class Call>
bool both(const Pair& p, Out& mine, Out& theirs, Call&& call) {
  return supported([&] { call(p.mine, mine); }) && supported([&] { call(p.theirs, theirs); });
}

std::string logits_diff(const Pair& p, const std::string& what, const Logits& mine, const Logits& theirs,
                        const RowBounds& windows, uint32_t poison = oracle::kPoisonF32Bits) {
  oracle::LogitsCheckOptions options;
  options.poison_bits = poison;  // an entry both left unwritten is no "NaN equal to NaN"
  const oracle::LogitsVerdict v = oracle::check_logits(mine, theirs, windows, options);
  return v.passed ? std::string() : p.versus(what) + "\n" + oracle::format_table(v);
}

std::string rule_failure(const std::string& what, const IndexerOps& side, const oracle::SelectionVerdict& v) {
  if (v.passed) return {};
  return fmt::format("{} of {} breaks the oracle's rule\n{}", what, side.name(), oracle::format_table(v));
}

// Both selections by the rule on their own values, then by set where the values are identical.
void selections(const Pair& p, Verdicts& v, const std::string& what, const oracle::IndexMatrix& mine,
                const oracle::RowColumns& my_values, const oracle::IndexMatrix& theirs,
                const oracle::RowColumns& their_values) {
  v.add(true, rule_failure(what, p.mine, oracle::check_topk_among(mine, my_values)));
  v.add(true, rule_failure(what, p.theirs, oracle::check_topk_among(theirs, their_values)));
  const oracle::SelectionChangeVerdict c =
      oracle::compare_selection_to_baseline(mine, my_values, theirs, their_values, what);
  const bool ties_fail = c.rows_tie_changes > 0 && !p.options.ties_legal;
  if (c.rows_changed == 0 && !ties_fail) return;
  v.add(true, p.versus(what) + (ties_fail ? " (sets that differ only among ties at the cut fail: --against-ties "
                                            "legal accepts them)\n"
                                          : "\n") +
                  oracle::format_table(c));
}

// ---- against_logits.

void decode_logits(const Pair& p, const DecodeCase& c, Verdicts& v) {
  const DecodeProblem prob = make_problem(c);
  const Profile& profile = profile_of(c);
  const std::vector<int64_t> lens = visible_lens(prob);
  Logits a = poisoned_logits(prob.rows(), prob.logits_width), b = a;
  if (both(p, a, b, [&](IndexerOps& impl, Logits& out) { impl.decode_logits(prob, profile, out); }))
    v.add(true, logits_diff(p, "decode_logits", a, b, oracle::decode_bounds(lens)));
  const CandidateBlocks cand = make_candidates(c, prob);
  const int64_t width = int64_t(cand.slots) * cand.block_size;
  Logits s = poisoned_logits(prob.rows(), width), t = s;
  if (both(p, s, t, [&](IndexerOps& impl, Logits& out) { impl.compact_candidate_logits(prob, profile, cand, out); }))
    v.add(true, compare_compact(s, t, cand, lens, p.versus("compact_candidate_logits")));
  Logits fs = poisoned_logits(prob.rows(), width), ft = fs;
  TopkIndices unused = poisoned_topk(prob.rows(), c.topk);
  if (both(p, fs, ft, [&](IndexerOps& impl, Logits& out) {
        impl.candidate_logits_top_k(prob, profile, cand, out, unused);
      }))
    v.add(true, compare_compact(fs, ft, cand, lens, p.versus("candidate_logits_top_k's compact logits")));
  const auto sparse = reference_sparse(prob, cand);
  if (!sparse || !takes_sparse_logits(prob, profile)) return;
  Logits x = poisoned_bf16_logits(prob.rows(), sparse->width()), y = x;
  if (both(p, x, y, [&](IndexerOps& impl, Logits& out) { impl.sparse_logits(prob, profile, *sparse, out); }))
    v.add(true, logits_diff(p, "sparse_logits", x, y,
                            oracle::decode_bounds(std::vector<int64_t>(sparse->end.begin(), sparse->end.end())),
                            oracle::kPoisonBf16AsF32Bits));
}

void prefill_logits(const Pair& p, const PrefillCase& c, Verdicts& v) {
  const PrefillProblem prob = make_problem(c);
  const Profile& profile = profile_of(c);
  const RowBounds bounds = oracle::prefill_bounds(prob.ks, prob.ke);
  Logits a = poisoned_logits(prob.rows, prob.num_k), b = a;
  if (both(p, a, b, [&](IndexerOps& impl, Logits& out) { impl.prefill_logits(prob, profile, out); }))
    v.add(true, logits_diff(p, "prefill_logits", a, b, bounds));
  const CandidateBlocks cand = make_candidates(c, prob);
  Logits s = poisoned_logits(prob.rows, int64_t(cand.slots) * cand.block_size), t = s;
  if (both(p, s, t,
           [&](IndexerOps& impl, Logits& out) { impl.prefill_compact_candidate_logits(prob, profile, cand, out); }))
    v.add(true, compare_compact(s, t, cand, oracle::lengths(bounds), p.versus("prefill_compact_candidate_logits")));
}

Outcome check_against_logits(const Pair& p, const FuzzCase& fc) {
  Verdicts v;
  if (const auto* c = std::get_if<DecodeCase>(&fc))
    decode_logits(p, *c, v);
  else
    prefill_logits(p, std::get<PrefillCase>(fc), v);
  return v.outcome("decode_logits, compact_candidate_logits, candidate_logits_top_k, sparse_logits, prefill_logits, "
                   "prefill_compact_candidate_logits (on both sides)");
}

// ---- against_selections.

void topk_selections(const Pair& p, const TopkCase& c, Verdicts& v) {
  const Logits logits = make_logits(c);
  const RowBounds bounds = make_bounds(c);
  TopkIndices a = poisoned_topk(logits.rows, c.k), b = a;
  if (!both(p, a, b, [&](IndexerOps& impl, TopkIndices& out) { impl.topk(logits, bounds, out); })) return;
  const oracle::RowColumns columns = oracle::window_columns(logits, bounds);
  selections(p, v, "topk_indices", oracle::view(a), columns, oracle::view(b), columns);
}

void candidate_selections(const Pair& p, const CandidateCase& c, Verdicts& v) {
  const Logits logits = make_logits(c);
  const RowBounds cb = candidate_bounds(c), tb = topk_bounds(c);
  CandidateBlocks a = poisoned_blocks(logits.rows, c.slots, c.block_size), b = a;
  if (both(p, a, b, [&](IndexerOps& impl, CandidateBlocks& out) { impl.candidate_select(logits, cb, out); })) {
    const Logits scores = oracle::candidate_block_scores(logits, c.block_size, cb);
    const oracle::RowColumns live = oracle::live_block_columns(scores);
    selections(p, v, "candidate_blocks", oracle::view(a), live, oracle::view(b), live);
  }
  const CandidateBlocks cand = make_candidates(c, logits);
  TopkIndices s = poisoned_topk(logits.rows, c.k), t = s;
  if (both(p, s, t, [&](IndexerOps& impl, TopkIndices& out) { impl.candidate_topk(logits, tb, cand, out); })) {
    const oracle::RowColumns columns = oracle::candidate_columns(logits, tb, cand);
    selections(p, v, "candidate_topk_indices", oracle::view(s), columns, oracle::view(t), columns);
  }
}

// The sparse ops, each fed the reference's upstream output; the top-k reads
// each side's own sparse logits where both have them.
void sparse_selections(const Pair& p, const DecodeCase& c, const DecodeProblem& prob, const Profile& profile,
                       const CandidateBlocks& cand, Verdicts& v) {
  const auto sparse = reference_sparse(prob, cand);
  if (!sparse) return;
  SparseBlocks x = poisoned_sparse(*sparse), y = x;
  const RowBounds bounds = topk_row_bounds(prob);
  if (both(p, x, y, [&](IndexerOps& impl, SparseBlocks& out) { impl.expand_candidate_blocks(cand, bounds, out); })) {
    const oracle::SparseBlocksVerdict sv = oracle::check_sparse_blocks(x, y);
    v.add(true, sv.passed ? std::string() : p.versus("expand_candidate_blocks") + "\n" + oracle::format_table(sv));
  }
  if (!takes_sparse_logits(prob, profile)) return;
  Logits mine = poisoned_bf16_logits(prob.rows(), sparse->width()), theirs = mine;
  if (!both(p, mine, theirs, [&](IndexerOps& impl, Logits& out) { impl.sparse_logits(prob, profile, *sparse, out); }))
    mine = theirs = sparse_logits(prob, profile, *sparse);
  const std::vector<int64_t> row_ks(size_t(prob.rows()), 0);
  TopkIndices a = poisoned_topk(prob.rows(), c.topk), b = a;
  if (!supported([&] { p.mine.sparse_topk(mine, *sparse, row_ks, a); }) ||
      !supported([&] { p.theirs.sparse_topk(theirs, *sparse, row_ks, b); }))
    return;
  selections(p, v, "sparse_topk_indices", oracle::view(a), oracle::sparse_columns(mine, *sparse, row_ks),
             oracle::view(b), oracle::sparse_columns(theirs, *sparse, row_ks));
}

void decode_selections(const Pair& p, const DecodeCase& c, Verdicts& v) {
  const DecodeProblem prob = make_problem(c);
  const Profile& profile = profile_of(c);
  const std::vector<int64_t> lens = visible_lens(prob);
  const CandidateBlocks cand = make_candidates(c, prob);
  const int64_t width = int64_t(cand.slots) * cand.block_size;
  Logits fs = poisoned_logits(prob.rows(), width), ft = fs;
  TopkIndices a = poisoned_topk(prob.rows(), c.topk), b = a;
  if (supported([&] { p.mine.candidate_logits_top_k(prob, profile, cand, fs, a); }) &&
      supported([&] { p.theirs.candidate_logits_top_k(prob, profile, cand, ft, b); }))
    selections(p, v, "candidate_logits_top_k's topk_indices", oracle::view(a), oracle::compact_columns(fs, cand, lens),
               oracle::view(b), oracle::compact_columns(ft, cand, lens));
  if (!prob.decode_lens.empty()) {
    int64_t real_rows = 0;
    for (const int32_t d : prob.decode_lens) real_rows += d;
    const TopkIndices padded = draw_index_rows(prob.rows(), c.topk, c.seed);
    TopkIndices x = poisoned_topk(real_rows, c.topk), y = x;
    if (both(p, x, y, [&](IndexerOps& impl, TopkIndices& out) { impl.unpack_topk(padded, prob.decode_lens, out); })) {
      const oracle::DeterminismVerdict dv = oracle::check_determinism(oracle::view(x), oracle::view(y));
      v.add(true, dv.passed ? std::string() : p.versus("unpack_topk") + "\n" + oracle::format_table(dv));
    }
  }
  sparse_selections(p, c, prob, profile, cand, v);
}

Outcome check_against_selections(const Pair& p, const FuzzCase& fc) {
  Verdicts v;
  if (const auto* c = std::get_if<TopkCase>(&fc))
    topk_selections(p, *c, v);
  else if (const auto* c = std::get_if<CandidateCase>(&fc))
    candidate_selections(p, *c, v);
  else
    decode_selections(p, std::get<DecodeCase>(fc), v);
  return v.outcome("topk, candidate_select, candidate_topk, candidate_logits_top_k, unpack_topk, "
                   "expand_candidate_blocks, sparse_topk (on both sides)");
}

using AgainstCheck = Outcome (*)(const Pair&, const FuzzCase&);

Property bound_property(const char* name, const char* description, KindMask kinds, AgainstCheck check,
                        const MakeImpl& make_against, const AgainstOptions& options) {
  Property prop;
  prop.name = name;
  prop.description = description;
  prop.kinds = kinds;
  prop.gen = [](const GenLimits& limits, KindMask mask) { return gen_every_op(limits, mask); };
  prop.probes = [kinds] {
    std::vector<FuzzCase> out;
    for (FuzzCase& c : probes_of_every_op())
      if (kinds & kind_bit(c)) out.push_back(std::move(c));
    return out;
  };
  prop.check = [check, make_against, options](IndexerOps& impl, const FuzzCase& c) {
    const std::unique_ptr<IndexerOps> against = make_against();  // fresh, as the campaign's own side
    return check(Pair{impl, *against, options}, c);
  };
  return prop;
}

constexpr KindMask kTopkKind = 1, kCandidateKind = 2, kDecodeKind = 4, kPrefillKind = 8;

}  // namespace

std::vector<Property> against_properties(MakeImpl make_against, AgainstOptions options) {
  if (!make_against) throw InvalidInput("against", "no implementation to hold the one under test to");
  return {
      bound_property(property::kAgainstLogits,
           "every logits output bit-identical to --against's over each row's window (decode, compact, fused, sparse, "
           "prefill, prefill compact)",
           kDecodeKind | kPrefillKind, check_against_logits, make_against, options),
      bound_property(property::kAgainstSelections,
           "every selection obeys the rule on its own values on both sides, and chooses --against's sets wherever the "
           "values are identical; sparse ids and unpacked rows equal",
           kTopkKind | kCandidateKind | kDecodeKind, check_against_selections, make_against, options),
  };
}

std::vector<std::string> against_property_names() { return {property::kAgainstLogits, property::kAgainstSelections}; }

const Property& find_property_in(const std::vector<Property>& properties, std::string_view name) {
  std::vector<std::string> names;
  for (const Property& p : properties) {
    if (p.name == name) return p;
    names.push_back(p.name);
  }
  throw InvalidInput("property", fmt::format("unknown property '{}' (known: {})", name, fmt::join(names, ", ")));
}

}  // namespace dsa::fuzz
