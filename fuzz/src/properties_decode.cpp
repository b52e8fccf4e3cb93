// Properties of the logits ops on whole decode steps and prefills.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "case_random.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/padding_check.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/padding.hpp"
#include "properties_checks.hpp"
#include "properties_support.hpp"

namespace dsa::fuzz::detail {
namespace {

oracle::LogitsCheckOptions bitwise() {
  oracle::LogitsCheckOptions o;
  o.poison_bits = oracle::kPoisonF32Bits;
  return o;
}

// The dense logits of the implementation; false when it answered Unsupported.
bool dense(IndexerOps& impl, const DecodeProblem& p, const Profile& profile, Logits& out) {
  out = poisoned_logits(p.rows(), p.logits_width);
  return supported([&] { impl.decode_logits(p, profile, out); });
}

// The same step with its physical pages moved: page q goes to slot perm[q]
// of the cache and every table entry follows it.
DecodeProblem permute_pages(const DecodeProblem& p, uint64_t seed) {
  DecodeProblem out = p;
  std::vector<int32_t> perm(static_cast<size_t>(p.cache.num_pages));
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng = stream({seed, 0, kPermutation, 1});
  for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[size_t(rng.uniform_int(0, int64_t(i) - 1))]);
  const size_t page = p.cache.page_bytes();
  for (size_t q = 0; q < perm.size(); ++q)
    std::copy_n(p.cache.bytes.begin() + int64_t(q * page), page,
                out.cache.bytes.begin() + int64_t(size_t(perm[q]) * page));
  for (auto& id : out.block_table) id = perm[size_t(id)];
  return out;
}

// Request b of a padded step as a step of its own: next_n = d_b, no padding.
DecodeProblem request_alone(const DecodeProblem& p, int32_t b) {
  DecodeProblem one;
  one.batch = 1;
  one.next_n = p.decode_lens[size_t(b)];
  one.heads = p.heads;
  one.head_dim = p.head_dim;
  one.element = p.element;
  one.compress_ratio = p.compress_ratio;
  one.seq_lens = {p.seq_lens[size_t(b)]};
  one.max_pages = p.max_pages;
  one.block_table.assign(p.block_table.begin() + int64_t(b) * p.max_pages,
                         p.block_table.begin() + int64_t(b + 1) * p.max_pages);
  one.logits_width = p.logits_width;
  one.cache = p.cache;
  const size_t qrow = p.q.size() / size_t(p.rows()), wrow = size_t(p.heads);
  const size_t srow = p.q_block_scales.empty() ? 0 : p.q_block_scales.size() / size_t(p.rows());
  const int64_t first = int64_t(b) * p.next_n;
  one.q.assign(p.q.begin() + first * int64_t(qrow), p.q.begin() + (first + one.next_n) * int64_t(qrow));
  if (srow)
    one.q_block_scales.assign(p.q_block_scales.begin() + first * int64_t(srow),
                              p.q_block_scales.begin() + (first + one.next_n) * int64_t(srow));
  one.weights.assign(p.weights.begin() + first * int64_t(wrow),
                     p.weights.begin() + (first + one.next_n) * int64_t(wrow));
  return one;
}

}  // namespace

namespace {

Outcome logits_against_reference(IndexerOps& impl, const DecodeCase& c, bool clean) {
  const DecodeProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  Logits out;
  if (!dense(impl, p, profile, out)) return unsupported("decode_logits");
  const Logits expected = decode_logits(p, profile).logits;
  oracle::LogitsCheckOptions options = bitwise();
  options.clean = clean;
  const oracle::LogitsVerdict v = oracle::check_logits(out, expected, visible_lens(p), options);
  return v.passed ? passed() : failed(oracle::format_table(v));
}

}  // namespace

Outcome check_logits_agree(IndexerOps& impl, const DecodeCase& c) { return logits_against_reference(impl, c, false); }
Outcome check_logits_agree_clean(IndexerOps& impl, const DecodeCase& c) {
  return logits_against_reference(impl, c, true);
}

Outcome check_prefill_logits_agree(IndexerOps& impl, const PrefillCase& c) {
  const PrefillProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  Logits out = poisoned_logits(p.rows, p.num_k);
  if (!supported([&] { impl.prefill_logits(p, profile, out); })) return unsupported("prefill_logits");
  const Logits expected = prefill_logits(p, profile).logits;
  const oracle::LogitsVerdict v = oracle::check_logits(out, expected, oracle::prefill_bounds(p.ks, p.ke), bitwise());
  return v.passed ? passed() : failed(oracle::format_table(v));
}

Outcome check_page_permutation(IndexerOps& impl, const DecodeCase& c) {
  const DecodeProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  Logits first, second;
  if (!dense(impl, p, profile, first)) return unsupported("decode_logits");
  const DecodeProblem moved = permute_pages(p, c.seed);
  if (!dense(impl, moved, profile, second)) return failed("decode_logits answered Unsupported once the pages moved");
  const oracle::LogitsVerdict v = oracle::check_logits(second, first, visible_lens(p), bitwise());
  if (v.passed) return passed();
  return failed("logits after permuting the physical pages (actual) versus before (expected)\n" +
                oracle::format_table(v));
}

Outcome check_compact_logits_agree(IndexerOps& impl, const DecodeCase& c) {
  const DecodeProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  const CandidateBlocks cand = make_candidates(c, p);
  Logits out = poisoned_logits(p.rows(), int64_t(cand.slots) * cand.block_size);
  if (!supported([&] { impl.compact_candidate_logits(p, profile, cand, out); }))
    return unsupported("compact_candidate_logits");
  const Logits expected = compact_candidate_logits(p, profile, cand);
  const std::string diff = compare_compact(out, expected, cand, visible_lens(p), "compact candidate logits");
  return diff.empty() ? passed() : failed(diff);
}

Outcome check_compact_equals_dense(IndexerOps& impl, const DecodeCase& c) {
  const DecodeProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  const CandidateBlocks cand = make_candidates(c, p);
  Logits compact = poisoned_logits(p.rows(), int64_t(cand.slots) * cand.block_size);
  if (!supported([&] { impl.compact_candidate_logits(p, profile, cand, compact); }))
    return unsupported("compact_candidate_logits");
  // The implementation's own dense logits when it has them, else the reference's.
  Logits full;
  std::string source = "its own dense logits";
  if (!dense(impl, p, profile, full)) {
    full = decode_logits(p, profile).logits;
    source = "the reference's dense logits (the implementation has none)";
  }
  const std::vector<int64_t> lens = visible_lens(p);
  const std::string diff = compare_compact(compact, oracle::compact_from_dense(full, oracle::decode_bounds(lens), cand),
                                           cand, lens, "compact candidate logits versus " + source);
  return diff.empty() ? passed() : failed(diff);
}

Outcome check_padded_equals_unpadded(IndexerOps& impl, const DecodeCase& c) {
  const DecodeProblem p = make_problem(c);
  const Profile& profile = profile_of(c);
  if (p.decode_lens.empty()) throw InvalidInput("replay", "padded_equals_unpadded takes padded decode cases");
  // Without its own logits an implementation's top-k still runs on the
  // padded step (the reference's logits, NaN garbage in the padded rows).
  const auto reference = make_reference_ops();
  IndexerOps* logits_by = &impl;
  Logits padded;
  if (!dense(impl, p, profile, padded)) {
    logits_by = reference.get();
    dense(*logits_by, p, profile, padded);
  }
  const std::vector<int64_t> padded_lens = visible_lens(p);

  // Every request alone, its real rows stacked in order (as unpack_seq_triton leaves them).
  std::vector<DecodeProblem> alone;
  Logits stacked;
  stacked.width = p.logits_width;
  std::vector<int64_t> lens;
  for (int32_t b = 0; b < p.batch; ++b) {
    alone.push_back(request_alone(p, b));
    Logits own;
    if (!dense(*logits_by, alone.back(), profile, own))
      return failed("decode_logits answered Unsupported for a request alone");
    stacked.values.insert(stacked.values.end(), own.values.begin(), own.values.end());
    stacked.rows += own.rows;
    for (int64_t j = 0; j < own.rows; ++j) {
      lens.push_back(visible_len(alone.back(), j));
      const int64_t in_padded = padded_lens[size_t(b * p.next_n + j)];
      if (lens.back() != in_padded)
        return failed(fmt::format("request {} row {}: visible length {} alone but {} in the padded step", b, j,
                                  lens.back(), in_padded));
    }
  }
  const Logits real = unpack_logits(padded, p.decode_lens, p.next_n);
  const oracle::LogitsVerdict v = oracle::check_logits(real, stacked, lens, bitwise());
  if (!v.passed)
    return failed("real rows of the padded step (actual) versus each request alone (expected)\n" +
                  oracle::format_table(v));

  // The step's top-k: padded rows hold only -1, real rows choose what they choose alone.
  const int32_t k = 1 + int32_t(c.seed % 64);
  const RowBounds bounds = topk_row_bounds(p);
  TopkIndices step = poisoned_topk(p.rows(), k);
  if (!supported([&] { impl.topk(padded, bounds, step); }))
    return logits_by == &impl ? passed() : unsupported("decode_logits and topk");
  const oracle::MovedRowsVerdict pads = oracle::check_pad_slots(step, p.decode_lens);
  if (!pads.passed)
    return failed("top-k of the padded step: a padded row's garbage reached the index buffer\n" +
                  oracle::format_table(pads));
  RowBounds real_bounds;
  TopkIndices own_topk;
  own_topk.k = k;
  for (const auto& one : alone) {
    const RowBounds b = topk_row_bounds(one);
    real_bounds.start.insert(real_bounds.start.end(), b.start.begin(), b.start.end());
    real_bounds.end.insert(real_bounds.end.end(), b.end.begin(), b.end.end());
  }
  own_topk = poisoned_topk(stacked.rows, k);
  impl.topk(stacked, real_bounds, own_topk);
  const std::string diff = compare_selections(unpack_topk(step, p.decode_lens, p.next_n), "top-k of the padded step",
                                              own_topk, "top-k of each request alone", stacked, real_bounds);
  return diff.empty() ? passed() : failed(diff);
}

}  // namespace dsa::fuzz::detail
