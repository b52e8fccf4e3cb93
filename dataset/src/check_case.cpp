// One golden case judged: each output the kernel wrote, by the oracle's rules.
#include <algorithm>
#include <limits>

#include "dsa/dataset/check.hpp"
#include "dsa/error.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/selection_check.hpp"

namespace dsa::dataset {
namespace {

using oracle::RowWindow;
constexpr float kInf = std::numeric_limits<float>::infinity();
// A chosen position that is not among the row's candidate columns: the rule sees it out of range.
constexpr int32_t kNotACandidate = std::numeric_limits<int32_t>::max();

std::vector<RowWindow> windows_of(std::span<const int64_t> begin, std::span<const int64_t> end) {
  std::vector<RowWindow> w(begin.size());
  for (size_t r = 0; r < w.size(); ++r) w[r] = {begin[r], end[r]};
  return w;
}

std::vector<RowWindow> full_windows(int64_t rows, int64_t width) { return std::vector<RowWindow>(size_t(rows), {0, width}); }

// The kernel's values inside the windows, the reference's elsewhere: what a
// kernel's own top-k or selection read where it had to write.
Logits composite(const Logits& kernel, const Logits& reference, std::span<const RowWindow> windows) {
  Logits v = reference;
  for (int64_t r = 0; r < v.rows; ++r)
    std::copy(kernel.row(r) + windows[size_t(r)].begin, kernel.row(r) + windows[size_t(r)].end, v.row(r) + windows[size_t(r)].begin);
  return v;
}

// Per row: (position, value) of the values a candidate top-k chooses among, ascending positions.
using Columns = std::vector<std::vector<std::pair<int64_t, float>>>;

// The selection rule over each row's own columns: the values gathered in
// position order, the chosen positions mapped to their place among them.
oracle::SelectionVerdict check_topk_at(const TopkIndices& chosen, const Columns& columns, const oracle::SelectionCheckOptions& o) {
  int64_t widest = 1;
  for (const auto& row : columns) widest = std::max<int64_t>(widest, int64_t(row.size()));
  Logits gathered{chosen.rows, widest, std::vector<float>(size_t(chosen.rows * widest), -kInf)};
  TopkIndices mapped = chosen;
  std::vector<int64_t> lens(size_t(chosen.rows));
  for (int64_t r = 0; r < chosen.rows; ++r) {
    const auto& row = columns[size_t(r)];
    for (size_t i = 0; i < row.size(); ++i) gathered.row(r)[i] = row[i].second;
    lens[size_t(r)] = int64_t(row.size());
    for (int32_t s = 0; s < chosen.k; ++s) {
      int32_t& idx = mapped.row(r)[s];
      if (idx < 0) continue;  // -1, or poison: the rule reports it
      const auto it = std::lower_bound(row.begin(), row.end(), std::pair<int64_t, float>(idx, -kInf),
                                       [](const auto& a, const auto& b) { return a.first < b.first; });
      idx = (it != row.end() && it->first == idx) ? int32_t(it - row.begin()) : kNotACandidate;
    }
  }
  return oracle::check_topk(oracle::view(mapped), gathered, lens, o);
}

Columns candidate_columns(const Logits& values, const CandidateBlocks& cand, std::span<const int64_t> lens) {
  Columns cols(size_t(cand.rows));
  for (int64_t r = 0; r < cand.rows; ++r) {
    for (int32_t s = 0; s < cand.slots; ++s) {
      const int64_t b = cand.row(r)[s];
      if (b < 0) continue;
      for (int64_t t = 0; t < cand.block_size; ++t) {
        const int64_t p = b * cand.block_size + t;
        if (p < lens[size_t(r)]) cols[size_t(r)].emplace_back(p, values.at(r, p));
      }
    }
    std::sort(cols[size_t(r)].begin(), cols[size_t(r)].end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  return cols;
}

Columns compact_columns(const Logits& compact, const CandidateBlocks& cand, std::span<const int64_t> lens) {
  Columns cols(size_t(cand.rows));
  for (int64_t r = 0; r < cand.rows; ++r) {
    for (int64_t col = 0; col < compact.width; ++col) {
      const int64_t p = compact_column_position(cand, r, col);
      if (p >= 0 && p < lens[size_t(r)]) cols[size_t(r)].emplace_back(p, compact.at(r, col));
    }
    std::sort(cols[size_t(r)].begin(), cols[size_t(r)].end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  return cols;
}

Columns sparse_columns(const Logits& sparse_values, const SparseBlocks& sparse) {
  Columns cols(size_t(sparse.rows));
  const std::vector<int64_t> row_ks(size_t(sparse.rows), 0);
  for (int64_t r = 0; r < sparse.rows; ++r) {
    for (int64_t col = 0; col < sparse.end[size_t(r)]; ++col)
      cols[size_t(r)].emplace_back(sparse_column_position(sparse, row_ks, r, col), sparse_values.at(r, col));
    std::sort(cols[size_t(r)].begin(), cols[size_t(r)].end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  return cols;
}

// Compact rows hold values only at live slots' visible positions; elsewhere a
// kernel may leave anything. Returns (actual, expected, written-view) with the
// rest neutralised: -inf on both sides, 0 in the written view.
struct CompactViews {
  Logits actual, expected, written;
};
CompactViews compact_views(const Logits& actual, const Logits& expected, const CandidateBlocks& cand,
                           std::span<const int64_t> lens) {
  CompactViews v{actual, expected, actual};
  for (int64_t r = 0; r < actual.rows; ++r)
    for (int64_t col = 0; col < actual.width; ++col) {
      const int64_t p = compact_column_position(cand, r, col);
      if (p >= 0 && p < lens[size_t(r)]) continue;
      v.actual.row(r)[col] = v.expected.row(r)[col] = -kInf;
      v.written.row(r)[col] = 0;
    }
  return v;
}

void add_selection(oracle::Report& report, const std::string& label, const oracle::SelectionVerdict& v,
                   bool kernel_values, const std::string& note = {}) {
  oracle::Report one;
  one.add(label, v);
  oracle::Report::Entry e = one.entries().front();
  const std::string source = kernel_values ? "judged on the kernel's own logits" : "judged on the reference's logits";
  e.summary += " [" + source + (note.empty() ? "" : "; " + note) + "]";
  e.details["values"] = kernel_values ? "kernel" : "reference";
  report.add(std::move(e));
}

// sparse_block_ids and sparse_end are fixed by the candidate blocks: equality.
oracle::Report::Entry sparse_blocks_entry(const std::string& label, const SparseBlocks& actual, const SparseBlocks& expected) {
  int64_t rows_differing = 0;
  std::vector<int64_t> first;
  for (int64_t r = 0; r < expected.rows; ++r) {
    const bool same = std::equal(actual.row(r), actual.row(r) + actual.num_sparse, expected.row(r)) &&
                      actual.end[size_t(r)] == expected.end[size_t(r)];
    if (same) continue;
    ++rows_differing;
    if (first.size() < 10) first.push_back(r);
  }
  oracle::Report::Entry e;
  e.label = label;
  e.check = "sparse_blocks";
  e.passed = rows_differing == 0;
  e.summary = e.passed ? "sparse_blocks: PASS  " + std::to_string(expected.rows) + " rows of ids and ends equal"
                       : "sparse_blocks: FAIL  " + std::to_string(rows_differing) + " of " + std::to_string(expected.rows) +
                             " rows differ in sparse_block_ids or sparse_end";
  if (!e.passed) {
    for (int64_t r : first) {
      e.table += "  row " + std::to_string(r) + ": end " + std::to_string(actual.end[size_t(r)]) + " (expected " +
                 std::to_string(expected.end[size_t(r)]) + ")\n";
    }
  }
  e.details = {{"rows", expected.rows}, {"rows_differing", rows_differing}, {"first_rows", first}};
  return e;
}

// The reference's outputs the judgement needs, computed when the golden file lacks them.
GoldenOutputs reference_outputs(const GoldenCase& g) {
  const auto needed = op_outputs(g.settings.op, g.logits_given());
  const auto held = g.expected.names();
  bool complete = true;
  for (const auto& n : needed)
    if ((n != out::topk_indices || g.settings.topk > 0) && std::find(held.begin(), held.end(), n) == held.end()) complete = false;
  if (complete) return g.expected;
  GoldenCase full = g;
  std::vector<std::string> names;
  for (const auto& n : needed)
    if (n != out::topk_indices || g.settings.topk > 0) names.push_back(n);
  compute_expected(full, names);
  return full.expected;
}

}  // namespace

oracle::Report check_case(const GoldenCase& g, const GoldenOutputs& a, const std::string& label, const CheckOptions& opt) {
  oracle::Report report;
  const GoldenOutputs ref = reference_outputs(g);
  const bool bf16 = find_profile(g.settings.profile).logits == Precision::bf16;
  const uint32_t poison = bf16 ? oracle::kPoisonBf16AsF32Bits : oracle::kPoisonF32Bits;
  oracle::LogitsCheckOptions lo;
  if (opt.tolerance) lo.tolerance = oracle::LogitsTolerance{*opt.tolerance, 0.0, 0};
  lo.bf16_ulps = bf16;
  lo.max_listed = opt.max_listed;
  oracle::SelectionCheckOptions so{opt.tolerance.value_or(0.0), opt.max_listed};
  const int64_t R = g.rows();
  const auto begin = g.window_begin(), end = g.window_end();
  const auto windows = windows_of(begin, end);
  const std::string at = label + "/";

  auto judge_logits = [&](const char* name, const Logits& actual, const Logits& expected, std::span<const RowWindow> w,
                          uint32_t poison_bits, const Logits* written_view = nullptr) {
    oracle::LogitsCheckOptions o = lo;
    o.poison_bits = poison_bits;
    report.add(at + name, oracle::check_written(written_view ? *written_view : actual, w, name, poison_bits, opt.max_listed));
    report.add(at + name, oracle::check_logits(actual, expected, w, o));
  };
  // The values a top-k or selection read: given logits, or the kernel's where it wrote them.
  const Logits* reference_logits = g.given_logits ? &*g.given_logits : (ref.logits ? &*ref.logits : nullptr);
  const bool kernel_logits = a.logits.has_value() && !g.logits_given();
  auto read_values = [&](std::span<const RowWindow> w) {
    return kernel_logits ? composite(*a.logits, *reference_logits, w) : *reference_logits;
  };

  if (a.logits && ref.logits) judge_logits(out::logits, *a.logits, *ref.logits, windows, poison);
  if (a.masked_logits && ref.masked_logits) judge_logits(out::masked_logits, *a.masked_logits, *ref.masked_logits, windows, poison);

  if (a.candidate_blocks && g.decode) {
    const CandidateBlocks& cand = *a.candidate_blocks;
    report.add(at + out::candidate_blocks,
               oracle::check_written(oracle::IndexMatrix{cand.blocks, cand.rows, cand.slots}, out::candidate_blocks,
                                     oracle::kPoisonI32, opt.max_listed));
    const auto ends = g.candidate_ends();
    const std::vector<int64_t> zeros(size_t(R), 0);
    const auto candidate_windows = windows_of(zeros, ends);
    const Logits values = kernel_logits ? composite(*a.logits, *reference_logits, windows) : *reference_logits;
    const int64_t num_blocks = (g.logits_width() + cand.block_size - 1) / cand.block_size;
    const Logits scores = oracle::candidate_block_scores(values, cand.block_size, candidate_windows, num_blocks);
    add_selection(report, at + out::candidate_blocks,
                  oracle::check_candidate_blocks(oracle::IndexMatrix{cand.blocks, cand.rows, cand.slots}, scores, so),
                  kernel_logits, "block scores over [0, E_r)");
  }

  if (a.compact_logits && ref.compact_logits) {
    const auto views = compact_views(*a.compact_logits, *ref.compact_logits, *g.candidate_blocks, end);
    const auto w = full_windows(R, views.actual.width);
    judge_logits(out::compact_logits, views.actual, views.expected, w, poison, &views.written);
  }
  if (a.sparse_blocks && ref.sparse_blocks) {
    report.add(at + out::sparse_block_ids,
               oracle::check_written(oracle::IndexMatrix{a.sparse_blocks->ids, R, a.sparse_blocks->num_sparse},
                                     out::sparse_block_ids, oracle::kPoisonI32, opt.max_listed));
    report.add(at + out::sparse_end, oracle::check_written(oracle::IndexMatrix{a.sparse_blocks->end, R, 1}, out::sparse_end,
                                                           oracle::kPoisonI32, opt.max_listed));
    report.add(sparse_blocks_entry(at + out::sparse_block_ids, *a.sparse_blocks, *ref.sparse_blocks));
  }
  if (a.sparse_logits && ref.sparse_logits) {
    const std::vector<int64_t> zeros(size_t(R), 0), ends(ref.sparse_blocks->end.begin(), ref.sparse_blocks->end.end());
    judge_logits(out::sparse_logits, *a.sparse_logits, *ref.sparse_logits, windows_of(zeros, ends), oracle::kPoisonBf16AsF32Bits);
  }

  if (a.topk_indices) {
    const TopkIndices& t = *a.topk_indices;
    report.add(at + out::topk_indices,
               oracle::check_written(oracle::view(t), out::topk_indices, oracle::kPoisonI32, opt.max_listed));
    switch (g.settings.op) {
      case GoldenOp::decode_topk:
      case GoldenOp::prefill_topk:
      case GoldenOp::candidate_select:
        add_selection(report, at + out::topk_indices, oracle::check_topk(oracle::view(t), read_values(windows), windows, so),
                      kernel_logits);
        break;
      case GoldenOp::candidate_mask: {
        const bool own = a.masked_logits.has_value();
        const Logits values = own ? composite(*a.masked_logits, *ref.masked_logits, windows) : *ref.masked_logits;
        add_selection(report, at + out::topk_indices, oracle::check_topk(oracle::view(t), values, windows, so), own,
                      "on the masked logits");
        break;
      }
      case GoldenOp::candidate_topk:
      case GoldenOp::consumer_step:
        add_selection(report, at + out::topk_indices,
                      check_topk_at(t, candidate_columns(read_values(windows), *g.candidate_blocks, end), so), kernel_logits,
                      "indices counted among the row's candidate columns in [0, L_r)");
        break;
      case GoldenOp::compact_candidate_logits: {
        const bool own = a.compact_logits.has_value();
        add_selection(report, at + out::topk_indices,
                      check_topk_at(t, compact_columns(own ? *a.compact_logits : *ref.compact_logits, *g.candidate_blocks, end), so),
                      own, "on the compact logits; indices counted among the row's candidate columns in [0, L_r)");
        break;
      }
      case GoldenOp::sparse_sm100: {
        const bool own = a.sparse_logits.has_value();
        add_selection(report, at + out::topk_indices,
                      check_topk_at(t, sparse_columns(own ? *a.sparse_logits : *ref.sparse_logits, *ref.sparse_blocks), so),
                      own, "on the sparse logits; indices counted among the row's sparse columns [0, end)");
        break;
      }
      default: break;
    }
  }
  return report;
}

}  // namespace dsa::dataset
