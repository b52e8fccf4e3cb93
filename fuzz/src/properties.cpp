// The property registry: names, descriptions, generators, probes, and the
// two properties that run on every kind of case (determinism, every entry written).
#include "dsa/fuzz/properties.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/fuzz/interrupt.hpp"
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

}  // namespace

// gen_kinds, with decode cases of every form: plain, padded, and the SM100
// sparse form (so that determinism and every-entry-written reach every op).
rc::Gen<FuzzCase> gen_every_op(const GenLimits& limits, KindMask mask) {
  if (!(mask & kDecode)) return gen_kinds(limits, mask);
  std::vector<rc::Gen<FuzzCase>> gens{gen_kinds(limits, mask), gen_kinds(limits, mask),
                                      as_case(gen_decode_case(limits, {.padded_only = true})),
                                      as_case(gen_decode_case(limits, {.sparse_form = true}))};
  return rc::gen::join(rc::gen::elementOf(gens));
}

namespace {

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

// The smallest SM100 sparse-form step: MXFP4 under a bf16-logits profile, S = 8.
DecodeCase probe_sparse() {
  DecodeCase c;
  c.seed = 1;
  c.element = ElementFormat::mxfp4;
  c.layout = CacheLayout::mxfp4;
  c.profile = "deepgemm_sm100_bf16";
  c.requests = {{20, {}, 0, 1}};
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

}  // namespace

// The probes of the properties that reach every op: an implementation of the
// sparse form or the padding ops alone takes decode cases too.
std::vector<FuzzCase> probes_of_every_op() {
  std::vector<FuzzCase> out = probes_of(kTopk | kCandidate | kDecode | kPrefill);
  out.push_back(probe_decode(true));
  out.push_back(probe_sparse());
  return out;
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
  add(p::kCandidateMaskAgrees,
      "the full (vLLM) and strided (gfx942) candidate masks keep exactly the candidate columns of [0, E_r)", kCandidate,
      on<CandidateCase>(check_candidate_mask_agrees));
  add(p::kCandidateLogitsTopkAgrees,
      "the fused launch: compact logits bit-identical to the reference where defined, and its top-k by the rule over "
      "its own compact logits",
      kDecode, on<DecodeCase>(check_candidate_logits_top_k_agrees));
  add(p::kPrefillCompactEqualsDense, "prefill compact candidate logits equal the dense prefill logits at ks + position",
      kPrefill, on<PrefillCase>(check_prefill_compact_equals_dense));
  const auto padded_gen = [](const GenLimits& l, KindMask) { return as_case(gen_decode_case(l, {.padded_only = true})); };
  const auto padded_probe = [] { return std::vector<FuzzCase>{probe_decode(true)}; };
  add(p::kPaddingRoundTrip,
      "pack_rows puts each real row in its slot and the pad elsewhere; unpack_topk(pack_rows(rows)) gives the rows back",
      kDecode, on<DecodeCase>(check_padding_round_trip), padded_gen, padded_probe);
  add(p::kSkipDecodeFillAgrees,
      "skip_decode_fill answers the rule (no prefill rows, no padding, every token a decode token) and refuses "
      "impossible counts",
      kDecode, on<DecodeCase>(check_skip_decode_fill_agrees), nullptr, padded_probe);
  const auto sparse_gen = [](const GenLimits& l, KindMask) { return as_case(gen_decode_case(l, {.sparse_form = true})); };
  const auto sparse_probe = [] { return std::vector<FuzzCase>{probe_sparse()}; };
  add(p::kSparseBlocksAgree, "SM100 sparse block ids and ends equal the reference's (rows with ks = 0 and ks > 0)",
      kDecode, on<DecodeCase>(check_sparse_blocks_agree), sparse_gen, sparse_probe);
  add(p::kSparseLogitsAgree, "SM100 bf16 sparse logits bit-identical to the reference over [0, end)", kDecode,
      on<DecodeCase>(check_sparse_logits_agree), sparse_gen, sparse_probe);
  add(p::kSparseTopkAgrees, "SM100 sparse top-k by the rule over [0, end), remapped to positions", kDecode,
      on<DecodeCase>(check_sparse_topk_agrees), sparse_gen, sparse_probe);
  add(p::kDeterminism, "two runs on the same input choose the same sets and write the same outputs, every op",
      kTopk | kCandidate | kDecode | kPrefill, check_determinism, gen_every_op, probes_of_every_op);
  add(p::kEveryEntryWritten, "no poison survives in any entry an op must write, every op",
      kTopk | kCandidate | kDecode | kPrefill, check_every_entry_written, gen_every_op, probes_of_every_op);
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
  } catch (const Interrupted&) {
    throw;  // a stop request, not a verdict on the case
  } catch (const std::exception& e) {
    return detail::failed(fmt::format("a call failed (implementation {}): {}", impl.name(), e.what()));
  }
}

KindMask supported_kinds(const Property& property, IndexerOps& impl) {
  return supported_kinds(property, impl, Contract{});
}

namespace {

// Whether the property's generator can draw a case of the probe's kind inside
// the contract: a probe may fit where no format, profile or (H, D) of the
// generator's does (the generator then throws, which a campaign would take for
// a failure and shrink without end). Drawing a case builds no arrays.
bool drawable(const Property& property, const Contract& contract, const FuzzCase& probe) {
  GenLimits limits;
  limits.draw = contract;
  try {
    property.gen(limits, kind_bit(probe))(rc::Random(), 0).value();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::vector<FuzzCase> contract_probes(const Property& property, const Contract& contract) {
  std::vector<FuzzCase> out;
  for (const FuzzCase& probe : property.probes()) {
    FuzzCase c = fitted(contract, probe);
    if (!within(contract, c)) continue;
    try {
      validate_case(c);
    } catch (const InvalidInput&) {
      continue;  // e.g. the contract's profile does not take the heads it allows
    }
    if (!drawable(property, contract, c)) continue;
    out.push_back(std::move(c));
  }
  return out;
}

KindMask supported_kinds(const Property& property, IndexerOps& impl, const Contract& contract) {
  KindMask mask = 0;
  for (const FuzzCase& c : contract_probes(property, contract))
    if (check_case(property, impl, c).verdict != Verdict::unsupported) mask |= kind_bit(c);
  return mask;
}

}  // namespace dsa::fuzz
