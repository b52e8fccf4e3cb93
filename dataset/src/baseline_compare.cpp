// One case held to its baseline (baseline.hpp): every output the baseline
// holds, by the oracle's rules, against the new implementation's.
#include <algorithm>
#include <sstream>

#include "dsa/dataset/baseline.hpp"
#include "dsa/error.hpp"
#include "dsa/oracle/baseline_check.hpp"
#include "dsa/oracle/candidate_views.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "selection_views.hpp"

namespace dsa::dataset {
namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Tags a verdict's entry as judged against the baseline, as check_case tags its own.
oracle::Report::Entry tagged(oracle::Report::Entry e, const std::string& note) {
  e.summary += " [" + note + "]";
  const size_t nl = e.table.find('\n');
  if (!e.table.empty()) e.table = e.summary + (nl == std::string::npos ? "\n" : e.table.substr(nl));
  return e;
}

template <class Verdict>
oracle::Report::Entry entry_of(const std::string& label, const Verdict& v, const std::string& note) {
  oracle::Report one;
  one.add(label, v);
  return tagged(one.entries().front(), note);
}

oracle::Report::Entry missing_entry(const std::string& label, const std::string& output) {
  oracle::Report::Entry e;
  e.label = label;
  e.check = "baseline_output";
  e.passed = false;
  e.summary = "baseline_output: FAIL  the baseline holds " + output + " but the new implementation wrote none";
  e.details = {{"output", output}};
  return e;
}

oracle::Report::Entry sparse_equality(const std::string& label, const SparseBlocks& a, const SparseBlocks& b) {
  int64_t differing = 0;
  std::vector<int64_t> first;
  for (int64_t r = 0; r < b.rows; ++r) {
    if (std::equal(a.row(r), a.row(r) + a.num_sparse, b.row(r)) && a.end[size_t(r)] == b.end[size_t(r)]) continue;
    ++differing;
    if (first.size() < 10) first.push_back(r);
  }
  oracle::Report::Entry e;
  e.label = label;
  e.check = "sparse_blocks";
  e.passed = differing == 0;
  e.summary = std::string("sparse_blocks: ") + (e.passed ? "PASS  " : "FAIL  ") + std::to_string(differing) + " of " +
              std::to_string(b.rows) + " rows differ in sparse_block_ids or sparse_end [vs baseline]";
  e.details = {{"rows", b.rows}, {"rows_differing", differing}, {"first_rows", first}};
  return e;
}

}  // namespace

oracle::Report compare_with_baseline(const GoldenCase& g, const GoldenOutputs& a, const std::string& label,
                                     const CheckOptions& opt, std::vector<std::string>* not_compared) {
  oracle::Report report;
  const auto info = g.settings.info.find(baseline_key::from_golden);
  const std::vector<std::string> from_golden = info == g.settings.info.end() ? std::vector<std::string>{} : split(info->second);
  std::vector<std::string> owned;
  for (const auto& name : g.expected.names())
    if (!has(from_golden, name)) owned.push_back(name);
  const std::vector<std::string> written = a.names();
  for (const auto& name : written)
    if (!has(owned, name) && not_compared) not_compared->push_back(name);
  const std::string at = label + "/";
  for (const auto& name : owned)
    if (!has(written, name)) report.add(missing_entry(at + name, name));

  const bool bf16 = find_profile(g.settings.profile).logits == Precision::bf16;
  const uint32_t poison = bf16 ? oracle::kPoisonBf16AsF32Bits : oracle::kPoisonF32Bits;
  oracle::LogitsCheckOptions lo;
  if (opt.tolerance) lo.tolerance = oracle::LogitsTolerance{*opt.tolerance, 0.0, 0};
  lo.bf16_ulps = bf16;
  lo.max_listed = opt.max_listed;
  const oracle::SelectionCheckOptions so{opt.tolerance.value_or(0.0), opt.max_listed};
  const RowBounds bounds = detail::case_bounds(g);
  const std::vector<int64_t> lens = oracle::lengths(bounds);
  const std::string vs = "vs baseline";
  auto both = [&](const std::string& name) { return has(owned, name) && has(written, name); };

  auto judge_logits = [&](const char* name, const Logits& actual, const Logits& expected, const RowBounds& w,
                          uint32_t poison_bits, const Logits* written_view = nullptr) {
    oracle::LogitsCheckOptions o = lo;
    o.poison_bits = poison_bits;
    report.add(at + name, oracle::check_written(written_view ? *written_view : actual, w, name, poison_bits, opt.max_listed));
    report.add(entry_of(at + name, oracle::check_logits(actual, expected, w, o), vs));
  };
  if (both(out::logits)) judge_logits(out::logits, *a.logits, *g.expected.logits, bounds, poison);
  if (both(out::masked_logits)) judge_logits(out::masked_logits, *a.masked_logits, *g.expected.masked_logits, bounds, poison);
  if (both(out::compact_logits)) {
    const auto views = oracle::compact_views(*a.compact_logits, *g.expected.compact_logits, *g.candidate_blocks, lens);
    judge_logits(out::compact_logits, views.actual, views.expected, oracle::full_bounds(g.rows(), views.actual.width),
                 poison, &views.written);
  }
  if (both(out::sparse_block_ids)) {
    report.add(at + out::sparse_block_ids,
               oracle::check_written(oracle::IndexMatrix{a.sparse_blocks->ids, g.rows(), a.sparse_blocks->num_sparse},
                                     out::sparse_block_ids, oracle::kPoisonI32, opt.max_listed));
    report.add(sparse_equality(at + out::sparse_block_ids, *a.sparse_blocks, *g.expected.sparse_blocks));
  }
  if (both(out::sparse_logits)) {
    const std::vector<int64_t> ends(g.expected.sparse_blocks->end.begin(), g.expected.sparse_blocks->end.end());
    judge_logits(out::sparse_logits, *a.sparse_logits, *g.expected.sparse_logits, oracle::decode_bounds(ends),
                 oracle::kPoisonBf16AsF32Bits);
  }

  // Each side's selections read its own values (the baseline's recorded ones, the new kernel's as it wrote them).
  const GoldenOutputs new_values = detail::values_read(g, a, g.expected);
  const GoldenOutputs base_values = detail::values_read(g, g.expected, g.expected);
  auto compare = [&](const char* name, const oracle::IndexMatrix& mine, const oracle::IndexMatrix& theirs,
                     const oracle::RowColumns& my_columns, const oracle::RowColumns& their_columns) {
    report.add(oracle::baseline_entry(
        at + name, oracle::compare_selection_to_baseline(mine, my_columns, theirs, their_columns, name, opt.max_listed)));
  };
  const std::string own = "the rule on the new kernel's own values";
  if (both(out::candidate_blocks)) {
    const oracle::IndexMatrix mine = oracle::view(*a.candidate_blocks), theirs = oracle::view(*g.expected.candidate_blocks);
    report.add(at + out::candidate_blocks, oracle::check_written(mine, out::candidate_blocks, oracle::kPoisonI32, opt.max_listed));
    const int32_t S = g.expected.candidate_blocks->block_size;
    const auto my_scores = detail::block_scores(g, new_values, S), their_scores = detail::block_scores(g, base_values, S);
    if (my_scores && their_scores) {
      report.add(entry_of(at + out::candidate_blocks, oracle::check_candidate_blocks(mine, *my_scores, so), own));
      compare(out::candidate_blocks, mine, theirs, oracle::live_block_columns(*my_scores),
              oracle::live_block_columns(*their_scores));
    }
  }
  if (both(out::topk_indices)) {
    const oracle::IndexMatrix mine = oracle::view(*a.topk_indices), theirs = oracle::view(*g.expected.topk_indices);
    report.add(at + out::topk_indices, oracle::check_written(mine, out::topk_indices, oracle::kPoisonI32, opt.max_listed));
    const auto my_columns = detail::topk_columns(g, new_values), their_columns = detail::topk_columns(g, base_values);
    if (my_columns && their_columns) {
      report.add(entry_of(at + out::topk_indices, oracle::check_topk_among(mine, *my_columns, so), own));
      compare(out::topk_indices, mine, theirs, *my_columns, *their_columns);
    }
  }
  return report;
}

}  // namespace dsa::dataset
