#include "run_implementations.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/indexer_ops.hpp"
#include "dsa/logits.hpp"
#include "dsa/optimized/implementations.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/rows.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/topk.hpp"

namespace dsa::cli {
namespace {

template <class F>
double seconds_of(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

ImplementationRow row_of(const std::string& impl, const std::string& op, std::string verdict = "") {
  ImplementationRow row;
  row.impl = impl;
  row.op = op;
  row.verdict = std::move(verdict);
  return row;
}

Logits poisoned_logits(const DecodeProblem& p) {
  Logits l{p.rows(), p.logits_width, std::vector<float>(size_t(p.rows() * p.logits_width))};
  oracle::fill_poison(l.values);
  return l;
}

// The reference's logits of each step under each profile, computed once and timed.
class ReferenceLogits {
 public:
  const Logits& of(const RunStep& step, const std::string& profile, double* seconds = nullptr) {
    auto [it, fresh] = cache_.try_emplace({step.name, profile});
    if (fresh) {
      it->second.seconds = seconds_of([&] { it->second.logits = decode_logits(step.problem, find_profile(profile)).logits; });
    }
    if (seconds) *seconds = it->second.seconds;
    return it->second.logits;
  }

 private:
  struct Entry {
    Logits logits;
    double seconds = 0;
  };
  std::map<std::pair<std::string, std::string>, Entry> cache_;
};

// Steps the contract takes; `why` gets the first refusal of the others.
std::vector<const RunStep*> taken_steps(const Contract& contract, const std::vector<RunStep>& steps, std::string& why) {
  std::vector<const RunStep*> out;
  for (const RunStep& s : steps) {
    if (std::string r = contract.refusal(s.problem); !r.empty()) {
      if (why.empty()) why = s.name + ": " + r;
      continue;
    }
    out.push_back(&s);
  }
  return out;
}

ImplementationRow judge_logits(const optimized::Implementation& entry, IndexerOps& impl,
                               const std::vector<RunStep>& steps, ReferenceLogits& reference) {
  ImplementationRow row = row_of(entry.name, "decode_logits");
  const std::string profile = entry.contract.profile.empty() ? "exact" : entry.contract.profile;
  std::string refused;
  int64_t compared = 0, differing = 0;
  for (const RunStep* step : taken_steps(entry.contract, steps, refused)) {
    double ref_s = 0;
    const Logits& expected = reference.of(*step, profile, &ref_s);
    Logits actual = poisoned_logits(step->problem);
    try {
      row.seconds += seconds_of([&] { impl.decode_logits(step->problem, find_profile(profile), actual); });
    } catch (const Unsupported& e) {
      if (refused.empty()) refused = step->name + ": " + e.what();
      continue;
    }
    row.reference_seconds += ref_s;
    ++row.steps;
    oracle::LogitsCheckOptions bitwise;
    bitwise.poison_bits = oracle::kPoisonF32Bits;
    const oracle::LogitsVerdict v = oracle::check_logits(actual, expected, visible_lens(step->problem), bitwise);
    compared += v.entries_compared;
    differing += v.mismatches;
  }
  if (row.steps == 0) {
    row.verdict = "skipped: its contract takes none of the steps (" + refused + ")";
  } else if (differing > 0) {
    row.failed = true;
    row.verdict = fmt::format("FAIL ({} of {} logits differ from the reference's, profile {})", differing, compared,
                              profile);
  } else {
    row.verdict = fmt::format("pass ({} logits bit for bit, profile {})", compared, profile);
  }
  return row;
}

ImplementationRow judge_topk(const optimized::Implementation& entry, IndexerOps& impl,
                             const std::vector<RunStep>& steps, ReferenceLogits& reference) {
  ImplementationRow row = row_of(entry.name, "topk");
  std::string refused;
  int64_t rows = 0, identical = 0, failed = 0;
  const std::unique_ptr<IndexerOps> ref_ops = make_reference_ops();
  for (const RunStep* step : taken_steps(entry.contract, steps, refused)) {
    if (std::string r = entry.contract.refusal_k(step->k); !r.empty()) {
      if (refused.empty()) refused = step->name + ": " + r;
      continue;
    }
    const DecodeProblem& p = step->problem;
    const Logits& logits = reference.of(*step, "exact");
    const RowBounds bounds = topk_row_bounds(p);
    TopkIndices expected{p.rows(), step->k, std::vector<int32_t>(size_t(p.rows()) * size_t(step->k), 0)};
    const double ref_s = seconds_of([&] { ref_ops->topk(logits, bounds, expected); });
    TopkIndices actual = oracle::poisoned_topk(p.rows(), step->k);
    try {
      row.seconds += seconds_of([&] { impl.topk(logits, bounds, actual); });
    } catch (const Unsupported& e) {
      if (refused.empty()) refused = step->name + ": " + e.what();
      continue;
    }
    row.reference_seconds += ref_s;
    ++row.steps;
    const std::vector<int64_t> lens = visible_lens(p);
    for (int64_t r = 0; r < p.rows(); ++r, ++rows) {
      if (std::equal(expected.row(r), expected.row(r) + step->k, actual.row(r))) {
        ++identical;
        continue;
      }
      // Another order or another tie at the cut is legal: the selection rule decides, row by row.
      const Logits one_row{1, p.logits_width, std::vector<float>(logits.row(r), logits.row(r) + p.logits_width)};
      const TopkIndices one{1, step->k, std::vector<int32_t>(actual.row(r), actual.row(r) + step->k)};
      const std::vector<int64_t> len{lens[size_t(r)]};
      if (!oracle::check_topk(oracle::view(one), one_row, len).passed) ++failed;
    }
  }
  if (row.steps == 0) {
    row.verdict = "skipped: its contract takes none of the steps (" + refused + ")";
  } else if (failed > 0) {
    row.failed = true;
    row.verdict = fmt::format("FAIL ({} of {} rows break the selection rule)", failed, rows);
  } else {
    row.verdict = fmt::format("pass ({} of {} rows identical to the reference's, the rest by the rule)", identical, rows);
  }
  return row;
}

}  // namespace

std::vector<ImplementationRow> run_implementations(const std::vector<RunStep>& steps) {
  std::vector<ImplementationRow> rows;
  ReferenceLogits reference;
  for (const optimized::Implementation& entry : optimized::implementations()) {
    if (entry.name == "reference") continue;  // the main job judged it against the brute force
    const bool logits = entry.takes(Op::decode_logits), topk = entry.takes(Op::topk);
    if (!logits && !topk) {
      rows.push_back(row_of(entry.name, "-",
                            "not run: takes neither decode_logits nor topk (`check --impl`, `fuzz --impl` reach its ops)"));
      continue;
    }
    if (!entry.available()) {
      rows.push_back(row_of(entry.name, "-",
                            "skipped: runs on " + std::string(optimized::to_string(entry.device)) + ", and none is present"));
      continue;
    }
    const std::unique_ptr<IndexerOps> impl = entry.make();
    if (logits) rows.push_back(judge_logits(entry, *impl, steps, reference));
    if (topk) rows.push_back(judge_topk(entry, *impl, steps, reference));
  }
  return rows;
}

}  // namespace dsa::cli
