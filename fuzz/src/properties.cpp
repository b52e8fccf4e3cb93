// The property registry: names, descriptions, generators, probes, and the
// two properties that run on every kind of case (determinism, every entry written).
#include "dsa/fuzz/properties.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/fuzz/mutants.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/determinism_check.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/report.hpp"
#include "properties_checks.hpp"
#include "properties_support.hpp"

namespace dsa::fuzz {
namespace detail {
namespace {

enum : KindMask { kTopk = 1, kCandidate = 2, kDecode = 4, kPrefill = 8 };

template <class T>
rc::Gen<FuzzCase> as_case(rc::Gen<T> gen) {
  return rc::gen::map(std::move(gen), [](T c) { return FuzzCase(std::move(c)); });
}

// The kinds in `mask`, each drawn with its weight.
rc::Gen<FuzzCase> gen_kinds(const GenLimits& limits, KindMask mask) {
  std::vector<rc::Gen<FuzzCase>> gens;
  if (mask & kTopk) gens.insert(gens.end(), 2, as_case(gen_topk_case(limits)));
  if (mask & kCandidate) gens.insert(gens.end(), 2, as_case(gen_candidate_case(limits)));
  if (mask & kDecode) gens.push_back(as_case(gen_decode_case(limits)));
  if (mask & kPrefill) gens.push_back(as_case(gen_prefill_case(limits)));
  return rc::gen::join(rc::gen::elementOf(gens));
}

TopkCase probe_topk() {
  TopkCase c;
  c.k = 4;
  c.seed = 1;
  c.rows = {{0, 10, ValueKind::normal, 1}, {0, 3, ValueKind::few_levels, 2}};
  return c;
}

CandidateCase probe_candidate() {
  CandidateCase c;
  c.block_size = 4;
  c.slots = 2;
  c.k = 4;
  c.seed = 1;
  c.requests = {{20, {}, ValueKind::normal, 1}};
  return c;
}

DecodeCase probe_decode(bool padded) {
  DecodeCase c;
  c.seed = 1;
  if (padded) {
    c.next_n = 2;
    c.padded = true;
    c.requests = {{20, {}, 1, 1}, {9, {}, 2, 2}};
  } else {
    c.requests = {{20, {}, 0, 1}};
  }
  return c;
}

PrefillCase probe_prefill() {
  PrefillCase c;
  c.seed = 1;
  c.num_k = 16;
  c.rows = {{0, 16, 1}};
  return c;
}

std::vector<FuzzCase> probes_of(KindMask kinds) {
  std::vector<FuzzCase> out;
  if (kinds & kTopk) out.push_back(probe_topk());
  if (kinds & kCandidate) out.push_back(probe_candidate());
  if (kinds & kDecode) out.push_back(probe_decode(false));
  if (kinds & kPrefill) out.push_back(probe_prefill());
  return out;
}

// Adds one verdict of several ops on one case: unsupported ops are skipped.
struct Verdicts {
  bool any_supported = false;
  std::vector<std::string> failures;
  void add(bool supported_op, std::string failure) {
    any_supported |= supported_op;
    if (!failure.empty()) failures.push_back(std::move(failure));
  }
  Outcome outcome(const char* ops) const {
    if (!failures.empty()) return failed(fmt::format("{}", fmt::join(failures, "\n")));
    return any_supported ? passed() : unsupported(ops);
  }
};

std::string determinism_failure(const char* what, const oracle::DeterminismVerdict& v) {
  return v.passed ? std::string() : std::string(what) + ": " + oracle::format_table(v);
}

}  // namespace

Outcome check_determinism(IndexerOps& impl, const FuzzCase& fc) {
  Verdicts v;
  if (const auto* c = std::get_if<TopkCase>(&fc)) {
    const Logits logits = make_logits(*c);
    const RowBounds b = make_bounds(*c);
    TopkIndices x = poisoned_topk(logits.rows, c->k), y = x;
    const bool ok = supported([&] { impl.topk(logits, b, x); }) && supported([&] { impl.topk(logits, b, y); });
    v.add(ok, ok ? determinism_failure("topk", oracle::check_determinism(oracle::view(x), oracle::view(y))) : "");
  } else if (const auto* c = std::get_if<CandidateCase>(&fc)) {
    const Logits logits = make_logits(*c);
    const RowBounds cb = candidate_bounds(*c), tb = topk_bounds(*c);
    CandidateBlocks x = poisoned_blocks(logits.rows, c->slots, c->block_size), y = x;
    bool ok = supported([&] { impl.candidate_select(logits, cb, x); }) &&
              supported([&] { impl.candidate_select(logits, cb, y); });
    v.add(ok, ok ? determinism_failure("candidate_select", oracle::check_determinism(oracle::view(x), oracle::view(y)))
                 : "");
    const CandidateBlocks cand = make_candidates(*c, logits);
    TopkIndices s = poisoned_topk(logits.rows, c->k), t = s;
    ok = supported([&] { impl.candidate_topk(logits, tb, cand, s); }) &&
         supported([&] { impl.candidate_topk(logits, tb, cand, t); });
    v.add(ok, ok ? determinism_failure("candidate_topk", oracle::check_determinism(oracle::view(s), oracle::view(t)))
                 : "");
  } else if (const auto* c = std::get_if<DecodeCase>(&fc)) {
    const DecodeProblem p = make_problem(*c);
    const Profile& profile = profile_of(*c);
    const std::vector<int64_t> lens = visible_lens(p);
    Logits x = poisoned_logits(p.rows(), p.logits_width), y = x;
    bool ok = supported([&] { impl.decode_logits(p, profile, x); }) &&
              supported([&] { impl.decode_logits(p, profile, y); });
    if (ok) {
      const oracle::LogitsVerdict lv = oracle::check_logits(y, x, lens);
      v.add(true, lv.passed ? "" : "decode_logits, second run (actual) versus first (expected): " + oracle::format_table(lv));
    }
    const CandidateBlocks cand = make_candidates(*c, p);
    Logits s = poisoned_logits(p.rows(), int64_t(cand.slots) * cand.block_size), t = s;
    ok = supported([&] { impl.compact_candidate_logits(p, profile, cand, s); }) &&
         supported([&] { impl.compact_candidate_logits(p, profile, cand, t); });
    if (ok) v.add(true, compare_compact(t, s, cand, lens, "compact candidate logits, second run versus first"));
  } else {
    const PrefillCase& pc = std::get<PrefillCase>(fc);
    const PrefillProblem p = make_problem(pc);
    const Profile& profile = profile_of(pc);
    Logits x = poisoned_logits(p.rows, p.num_k), y = x;
    const bool ok = supported([&] { impl.prefill_logits(p, profile, x); }) &&
                    supported([&] { impl.prefill_logits(p, profile, y); });
    if (ok) {
      const oracle::LogitsVerdict lv = oracle::check_logits(y, x, oracle::prefill_bounds(p.ks, p.ke));
      v.add(true, lv.passed ? "" : "prefill_logits, second run (actual) versus first (expected): " + oracle::format_table(lv));
    }
  }
  return v.outcome("topk, candidate_select, candidate_topk, decode_logits, compact_candidate_logits, prefill_logits");
}

Outcome check_every_entry_written(IndexerOps& impl, const FuzzCase& fc) {
  Verdicts v;
  auto written = [](const oracle::WrittenVerdict& w) { return w.passed ? std::string() : oracle::format_table(w); };
  if (const auto* c = std::get_if<TopkCase>(&fc)) {
    const Logits logits = make_logits(*c);
    TopkIndices out = poisoned_topk(logits.rows, c->k);
    const bool ok = supported([&] { impl.topk(logits, make_bounds(*c), out); });
    v.add(ok, ok ? written(oracle::check_written(oracle::view(out), "topk_indices")) : "");
  } else if (const auto* c = std::get_if<CandidateCase>(&fc)) {
    const Logits logits = make_logits(*c);
    CandidateBlocks blocks = poisoned_blocks(logits.rows, c->slots, c->block_size);
    bool ok = supported([&] { impl.candidate_select(logits, candidate_bounds(*c), blocks); });
    v.add(ok, ok ? written(oracle::check_written(oracle::view(blocks), "candidate_blocks")) : "");
    const CandidateBlocks cand = make_candidates(*c, logits);
    TopkIndices out = poisoned_topk(logits.rows, c->k);
    ok = supported([&] { impl.candidate_topk(logits, topk_bounds(*c), cand, out); });
    v.add(ok, ok ? written(oracle::check_written(oracle::view(out), "candidate_topk_indices")) : "");
  } else if (const auto* c = std::get_if<DecodeCase>(&fc)) {
    const DecodeProblem p = make_problem(*c);
    const Profile& profile = profile_of(*c);
    const std::vector<int64_t> lens = visible_lens(p);
    Logits out = poisoned_logits(p.rows(), p.logits_width);
    bool ok = supported([&] { impl.decode_logits(p, profile, out); });
    v.add(ok, ok ? written(oracle::check_written(out, oracle::decode_bounds(lens), "logits")) : "");
    const CandidateBlocks cand = make_candidates(*c, p);
    Logits compact = poisoned_logits(p.rows(), int64_t(cand.slots) * cand.block_size);
    ok = supported([&] { impl.compact_candidate_logits(p, profile, cand, compact); });
    // Only live slots at positions below L_r must be written (SPEC 7).
    if (ok) v.add(true, written(oracle::check_written(oracle::compact_written_view(compact, cand, lens), "compact_logits")));
  } else {
    const PrefillCase& pc = std::get<PrefillCase>(fc);
    const PrefillProblem p = make_problem(pc);
    Logits out = poisoned_logits(p.rows, p.num_k);
    const bool ok = supported([&] { impl.prefill_logits(p, profile_of(pc), out); });
    v.add(ok, ok ? written(oracle::check_written(out, oracle::prefill_bounds(p.ks, p.ke), "prefill_logits")) : "");
  }
  return v.outcome("topk, candidate_select, candidate_topk, decode_logits, compact_candidate_logits, prefill_logits");
}

namespace {

template <class T>
std::function<Outcome(IndexerOps&, const FuzzCase&)> on(Outcome (*check)(IndexerOps&, const T&)) {
  return [check](IndexerOps& impl, const FuzzCase& c) { return check(impl, std::get<T>(c)); };
}

std::vector<Property> make_properties() {
  namespace p = property;
  std::vector<Property> all;
  auto add = [&](const char* name, const char* description, KindMask kinds,
                 std::function<Outcome(IndexerOps&, const FuzzCase&)> check,
                 std::function<rc::Gen<FuzzCase>(const GenLimits&, KindMask)> gen = nullptr,
                 std::function<std::vector<FuzzCase>()> probes = nullptr) {
    if (!gen) gen = [](const GenLimits& l, KindMask m) { return gen_kinds(l, m); };
    if (!probes) probes = [kinds] { return probes_of(kinds); };
    all.push_back({name, description, kinds, std::move(gen), std::move(check), std::move(probes)});
  };
  add(p::kLogitsAgree, "decode logits bit-identical to the reference over [0, L_r)", kDecode,
      on<DecodeCase>(check_logits_agree));
  add(p::kLogitsAgreeClean,
      "decode logits bit-identical to the reference over [0, L_r) and -inf from L_r to the width (opt-in: for "
      "kernels that promise clean rows)",
      kDecode, on<DecodeCase>(check_logits_agree_clean));
  all.back().opt_in = true;
  add(p::kPrefillLogitsAgree, "prefill logits bit-identical to the reference over [ks, ke)", kPrefill,
      on<PrefillCase>(check_prefill_logits_agree));
  add(p::kTopkAgrees, "top-k obeys the oracle's rule (ties at the cut either way) on the logits it read", kTopk,
      on<TopkCase>(check_topk_agrees));
  add(p::kCandidateSelectAgrees, "candidate blocks obey the selection rule on the oracle's block scores", kCandidate,
      on<CandidateCase>(check_candidate_select_agrees));
  add(p::kCandidateTopkAgrees, "candidate top-k obeys the top-k rule over the candidate columns of [0, L_r)",
      kCandidate, on<CandidateCase>(check_candidate_topk_agrees));
  add(p::kCompactLogitsAgree, "compact candidate logits bit-identical to the reference where defined", kDecode,
      on<DecodeCase>(check_compact_logits_agree));
  add(p::kPagePermutationInvariance, "moving the physical pages with the table leaves the logits unchanged", kDecode,
      on<DecodeCase>(check_page_permutation));
  add(p::kCompactEqualsDense, "compact candidate logits equal the dense logits at the candidate positions", kDecode,
      on<DecodeCase>(check_compact_equals_dense));
  add(
      p::kPaddedEqualsUnpadded, "a padded step's real rows equal each request run alone; padded rows choose nothing",
      kDecode, on<DecodeCase>(check_padded_equals_unpadded),
      [](const GenLimits& l, KindMask) { return as_case(gen_decode_case(l, {.padded_only = true})); },
      [] { return std::vector<FuzzCase>{probe_decode(true)}; });
  add(p::kColumnsPastLengthIgnored, "rewriting the columns past a row's length never changes its top-k",
      kTopk | kCandidate, [](IndexerOps& impl, const FuzzCase& c) {
        if (const auto* t = std::get_if<TopkCase>(&c)) return check_columns_past_length_ignored(impl, *t);
        return check_columns_past_length_ignored(impl, std::get<CandidateCase>(c));
      });
  add(p::kMaskThenTopkEqualsCandidateTopk,
      "candidate top-k chooses the values that mask-then-top-k chooses above -inf (SPEC 7)", kCandidate,
      on<CandidateCase>(check_mask_then_topk));
  add(p::kDeterminism, "two runs on the same input choose the same sets and write the same logits",
      kTopk | kCandidate | kDecode | kPrefill, check_determinism);
  add(p::kEveryEntryWritten, "no poison survives in any entry an op must write", kTopk | kCandidate | kDecode | kPrefill,
      check_every_entry_written);
  return all;
}

}  // namespace
}  // namespace detail

const std::vector<Property>& properties() {
  static const std::vector<Property> all = detail::make_properties();
  return all;
}

const Property& find_property(std::string_view name) {
  for (const auto& p : properties())
    if (p.name == name) return p;
  throw InvalidInput("property", fmt::format("unknown property '{}' (known: {})", name, fmt::join(property_names(), ", ")));
}

std::vector<std::string> default_property_names() {
  std::vector<std::string> names;
  for (const auto& p : properties())
    if (!p.opt_in) names.push_back(p.name);
  return names;
}

std::vector<std::string> property_names() {
  std::vector<std::string> names;
  for (const auto& p : properties()) names.push_back(p.name);
  return names;
}

Outcome check_case(const Property& property, IndexerOps& impl, const FuzzCase& c) {
  if (!(property.kinds & kind_bit(c)))
    throw InvalidInput("replay", fmt::format("property {} does not take {} cases", property.name, kind_name(c)));
  try {
    return property.check(impl, c);
  } catch (const Unsupported& e) {
    return detail::unsupported(e.what());
  } catch (const std::exception& e) {
    return detail::failed(fmt::format("the check threw (implementation {}): {}", impl.name(), e.what()));
  }
}

KindMask supported_kinds(const Property& property, IndexerOps& impl) {
  KindMask mask = 0;
  for (const FuzzCase& c : property.probes())
    if (check_case(property, impl, c).verdict != Verdict::unsupported) mask |= kind_bit(c);
  return mask;
}

}  // namespace dsa::fuzz
