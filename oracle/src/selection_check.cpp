#include "dsa/oracle/selection_check.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include <fmt/format.h>

#include "dsa/error.hpp"
#include "dsa/topk.hpp"

namespace dsa::oracle {
namespace {

// One row to judge: n candidate values, k slots of which k_valid must be valid.
struct RowTask {
  int64_t row;
  const float* values;
  int64_t n;
  int64_t k_valid;
  const int32_t* slots;
  int64_t k;
  // Candidate blocks: a block past the row's end (it scores -inf) is an
  // extra block, wherever it sits.
  bool past_end_is_extra = false;
};

// Reused between rows so that a wide row costs no allocation.
struct Scratch {
  std::vector<uint32_t> keys, sorted;
  std::vector<uint8_t> chosen;
};

// The order-aware tolerance comparisons: with two finite values the
// arithmetic difference against eps; otherwise the SPEC order alone.
bool above_cut(float x, uint32_t x_key, float cut, uint32_t cut_key, double eps) {
  if (eps > 0 && std::isfinite(x) && std::isfinite(cut)) return double(x) > double(cut) + eps;
  return x_key > cut_key;
}
bool below_cut(float x, uint32_t x_key, float cut, uint32_t cut_key, double eps) {
  if (eps > 0 && std::isfinite(x) && std::isfinite(cut)) return double(x) < double(cut) - eps;
  return x_key < cut_key;
}

template <class T>
void note(std::vector<T>& list, T value, size_t limit) {
  if (list.size() < limit) list.push_back(value);
}

SelectionRowIssue check_row(const RowTask& t, double eps, size_t listed, Scratch& s) {
  SelectionRowIssue issue;
  issue.row = t.row;
  issue.candidates = t.n;
  issue.expected_valid = t.k_valid;
  s.keys.resize(size_t(t.n));
  for (int64_t i = 0; i < t.n; ++i) {
    s.keys[size_t(i)] = topk_order_key(t.values[i]);
    issue.has_nan |= std::isnan(t.values[i]);
  }
  s.chosen.assign(size_t(t.n), 0);

  for (int64_t slot = 0; slot < t.k; ++slot) {
    const int32_t idx = t.slots[slot];
    const bool valid = idx >= 0 && idx < t.n;
    if (idx == -1) {
      if (slot < t.k_valid) ++issue.wrong_tail_count, note(issue.wrong_tail_slots, slot, listed);
      continue;
    }
    if (!valid) {
      ++issue.out_of_range_count, note(issue.out_of_range_slots, slot, listed);
      continue;
    }
    if (t.past_end_is_extra && t.values[idx] == -std::numeric_limits<float>::infinity() && !s.chosen[size_t(idx)]) {
      // Wherever it sits, and also a wrong tail in a slot that must hold -1.
      ++issue.extra_count, note(issue.extra, idx, listed);
      if (slot >= t.k_valid) ++issue.wrong_tail_count, note(issue.wrong_tail_slots, slot, listed);
      s.chosen[size_t(idx)] = 2;  // seen (a second time is a duplicate), but not a choice the cut judges
      continue;
    }
    // A valid index past the first k' slots is a wrong tail, yet it still counts as
    // chosen so that the set rule does not report it a second time as missing.
    if (slot >= t.k_valid) ++issue.wrong_tail_count, note(issue.wrong_tail_slots, slot, listed);
    if (s.chosen[size_t(idx)]) {
      ++issue.duplicate_count, note(issue.duplicate_slots, slot, listed);
      continue;
    }
    s.chosen[size_t(idx)] = 1;
  }

  if (t.k_valid > 0) {
    s.sorted = s.keys;
    std::nth_element(s.sorted.begin(), s.sorted.begin() + (t.k_valid - 1), s.sorted.end(), std::greater<>());
    const uint32_t cut_key = s.sorted[size_t(t.k_valid - 1)];
    const int64_t at = std::find(s.keys.begin(), s.keys.end(), cut_key) - s.keys.begin();
    issue.cut = t.values[at];
    for (int64_t i = 0; i < t.n; ++i) {
      const uint32_t key = s.keys[size_t(i)];
      const bool chosen = s.chosen[size_t(i)] == 1;
      if (key == cut_key) ++issue.ties_at_cut, issue.ties_chosen += chosen;
      if (chosen && below_cut(t.values[i], key, issue.cut, cut_key, eps))
        ++issue.extra_count, note(issue.extra, int32_t(i), listed);
      if (!chosen && above_cut(t.values[i], key, issue.cut, cut_key, eps))
        ++issue.missing_count, note(issue.missing, int32_t(i), listed);
    }
  }
  return issue;
}

void validate_values(const Logits& l, const char* name) {
  if (l.rows < 0 || l.width < 0 || int64_t(l.values.size()) != l.rows * l.width)
    throw InvalidInput(name, fmt::format("{} values for shape [{}][{}]", l.values.size(), l.rows, l.width));
}

void validate_options(const SelectionCheckOptions& o) {
  if (!(o.eps >= 0) || !std::isfinite(o.eps))
    throw InvalidInput("eps", fmt::format("{} must be finite and >= 0", o.eps));
}

// Gathers row issues into the verdict: totals over all rows, the worst listed.
class VerdictBuilder {
public:
  VerdictBuilder(std::string check, const IndexMatrix& m, const SelectionCheckOptions& o)
      : listed_(size_t(std::max(o.max_listed, 0))) {
    v_.check = std::move(check);
    v_.eps = o.eps;
    v_.rows = m.rows;
    v_.k = m.cols;
  }
  size_t listed() const { return listed_; }
  void add(SelectionRowIssue&& issue) {
    v_.missing += issue.missing_count;
    v_.extra += issue.extra_count;
    v_.duplicates += issue.duplicate_count;
    v_.out_of_range += issue.out_of_range_count;
    v_.wrong_tail += issue.wrong_tail_count;
    v_.ties_at_cut += issue.ties_at_cut;
    v_.ties_chosen += issue.ties_chosen;
    if (issue.expected_valid > 0 && issue.ties_chosen < issue.ties_at_cut) ++v_.rows_split_at_cut;
    if (issue.has_nan) {
      ++v_.rows_with_nan_count;
      note(v_.rows_with_nan, issue.row, listed_);
    }
    if (issue.problems() > 0) {
      ++v_.rows_failed;
      v_.failed_rows.push_back(std::move(issue));
    }
  }
  SelectionVerdict finish() {
    v_.passed = v_.rows_failed == 0;
    auto& rows = v_.failed_rows;
    const size_t keep = std::min(listed_, rows.size());
    std::partial_sort(rows.begin(), rows.begin() + ptrdiff_t(keep), rows.end(), [](const auto& a, const auto& b) {
      return a.problems() != b.problems() ? a.problems() > b.problems() : a.row < b.row;
    });
    rows.resize(keep);
    return std::move(v_);
  }

private:
  SelectionVerdict v_;
  size_t listed_;
};

}  // namespace

SelectionVerdict check_topk(const IndexMatrix& indices, const Logits& values, const RowBounds& bounds,
                            const SelectionCheckOptions& options) {
  validate(indices, "topk indices");
  validate_values(values, "values");
  validate_options(options);
  if (values.rows != indices.rows)
    throw InvalidInput("topk indices", fmt::format("{} rows of indices, {} rows of values", indices.rows, values.rows));
  check_row_bounds(values, bounds);
  VerdictBuilder builder("topk", indices, options);
  Scratch scratch;
  for (int64_t r = 0; r < indices.rows; ++r) {
    const int64_t start = bounds.start[size_t(r)], n = bounds.end[size_t(r)] - start;
    const RowTask task{r, values.row(r) + start, n, std::min(indices.cols, n), indices.row(r), indices.cols};
    builder.add(check_row(task, options.eps, builder.listed(), scratch));
  }
  return builder.finish();
}

SelectionVerdict check_topk(const IndexMatrix& indices, const Logits& values, std::span<const int64_t> visible_lens,
                            const SelectionCheckOptions& options) {
  return check_topk(indices, values, decode_bounds(visible_lens), options);
}

SelectionVerdict check_candidate_blocks(const IndexMatrix& blocks, const Logits& block_scores,
                                        const SelectionCheckOptions& options) {
  validate(blocks, "candidate blocks");
  validate_values(block_scores, "block scores");
  validate_options(options);
  if (block_scores.rows != blocks.rows)
    throw InvalidInput("candidate blocks",
                       fmt::format("{} rows of blocks, {} rows of scores", blocks.rows, block_scores.rows));
  VerdictBuilder builder("candidate_blocks", blocks, options);
  Scratch scratch;
  for (int64_t r = 0; r < blocks.rows; ++r) {
    const float* scores = block_scores.row(r);
    // A -inf block is never a candidate (its slot is -1), so only live blocks count.
    const int64_t live = std::count_if(scores, scores + block_scores.width, [](float s) {
      return !(s == -std::numeric_limits<float>::infinity());
    });
    const RowTask task{r, scores, block_scores.width, std::min(blocks.cols, live), blocks.row(r), blocks.cols, true};
    builder.add(check_row(task, options.eps, builder.listed(), scratch));
  }
  return builder.finish();
}

Logits candidate_block_scores(const Logits& logits, int64_t block_size, const RowBounds& bounds,
                              int64_t num_blocks) {
  validate_values(logits, "logits");
  if (block_size <= 0) throw InvalidInput("candidate_block_size", fmt::format("{} must be > 0", block_size));
  check_row_bounds(logits, bounds);
  int64_t needed = 0;
  for (const int64_t len : lengths(bounds)) needed = std::max(needed, (len + block_size - 1) / block_size);
  if (num_blocks < 0) num_blocks = needed;
  if (num_blocks < needed)
    throw InvalidInput("num_blocks", fmt::format("{} blocks cannot hold a row of {} blocks", num_blocks, needed));

  constexpr float kInf = std::numeric_limits<float>::infinity();
  Logits scores{.rows = logits.rows, .width = num_blocks,
                .values = std::vector<float>(size_t(logits.rows * num_blocks), -kInf)};
  for (int64_t r = 0; r < logits.rows; ++r) {
    const int64_t len = bounds.end[size_t(r)] - bounds.start[size_t(r)];
    const float* row = logits.row(r) + bounds.start[size_t(r)];
    float* out = scores.row(r);
    for (int64_t c = 0; c * block_size < len; ++c) {
      const int64_t end = std::min(len, (c + 1) * block_size);
      float best = row[c * block_size];
      for (int64_t i = c * block_size + 1; i < end; ++i)
        if (topk_order_key(row[i]) > topk_order_key(best)) best = row[i];
      out[c] = best;
    }
    // The newest entry's block is always kept: its +inf replaces even a NaN max.
    if (len > 0) out[(len - 1) / block_size] = kInf;
  }
  return scores;
}

}  // namespace dsa::oracle
