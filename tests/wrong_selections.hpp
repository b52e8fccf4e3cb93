// Selections that a comparison must tell from the reference's, shared by the
// tests of baselines, differential fuzzing and shrinking: a legal top-k with
// other tie-breaks, a wrong one, and the sort they and others are built on.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dsa/indexer_ops.hpp"
#include "dsa/topk.hpp"

namespace dsa::test {

// Each row's top-k by a stable sort of its window's positions under `before(values, a, b)` (a
// before b), then -1 past the row: the shape of every sort-based wrong top-k of the tests.
template <class Before>
void sort_topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out, Before before) {
  for (int64_t r = 0; r < out.rows; ++r) {
    const int64_t start = bounds.start[size_t(r)], n = bounds.end[size_t(r)] - start;
    std::vector<int32_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[size_t(i)] = int32_t(i);
    const float* row = logits.row(r) + start;
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return before(row, a, b); });
    for (int32_t s = 0; s < out.k; ++s) out.row(r)[s] = s < n ? order[size_t(s)] : -1;
  }
}

// The SPEC's top-k, ties broken towards the highest index (the reference takes
// the lowest): legal, but not the reference's sets.
class HighestIndexFirst : public ForwardingOps {
public:
  HighestIndexFirst() : ForwardingOps("highest_index_first") {}
  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    sort_topk(logits, bounds, out, [](const float* row, int32_t a, int32_t b) {
      const uint32_t ka = topk_order_key(row[a]), kb = topk_order_key(row[b]);
      return ka != kb ? ka > kb : a > b;
    });
  }
};

// The reference's top-k with the last chosen index of every full row swapped
// for the smallest unchosen entry (in the top-k order): a wrong choice.
class SwapsBelowTheCut : public ForwardingOps {
public:
  SwapsBelowTheCut() : ForwardingOps("swaps_below_the_cut") {}
  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    inner().topk(logits, bounds, out);
    for (int64_t r = 0; r < out.rows; ++r) {
      const int64_t n = bounds.end[size_t(r)] - bounds.start[size_t(r)];
      if (n <= out.k) continue;
      std::vector<char> chosen(size_t(n), 0);
      for (int32_t s = 0; s < out.k; ++s) chosen[size_t(out.row(r)[s])] = 1;
      const float* row = logits.row(r) + bounds.start[size_t(r)];
      int32_t lowest = -1;
      for (int64_t i = 0; i < n; ++i)
        if (!chosen[size_t(i)] && (lowest < 0 || topk_order_key(row[i]) < topk_order_key(row[lowest])))
          lowest = int32_t(i);
      out.row(r)[out.k - 1] = lowest;
    }
  }
};

}  // namespace dsa::test
