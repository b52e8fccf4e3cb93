// Helpers of the oracle tests: an order and top-k variants written apart from
// the reference (so that the comparators are not judged by the code they
// judge), and generators of heavily tied rows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "dsa/logits.hpp"
#include "dsa/rng.hpp"
#include "dsa/topk.hpp"
#include "test_values.hpp"

namespace dsa::oracle::testing {

using ::dsa::test::kInf;
using ::dsa::test::kNaN;

// The SPEC order by comparisons alone: NaN above everything, all NaNs equal;
// otherwise IEEE <, which already makes -0 == +0 and -inf the smallest.
inline bool spec_less(float a, float b) {
  if (std::isnan(b)) return !std::isnan(a);
  return !std::isnan(a) && a < b;
}
inline bool spec_equal(float a, float b) { return !spec_less(a, b) && !spec_less(b, a); }

inline Logits make_logits(int64_t rows, int64_t width, std::vector<float> values) {
  Logits l;
  l.rows = rows;
  l.width = width;
  l.values = std::move(values);
  l.values.resize(size_t(rows * width), -kInf);
  return l;
}

inline TopkIndices make_indices(int64_t rows, int32_t k, std::vector<int32_t> values) {
  TopkIndices t;
  t.rows = rows;
  t.k = k;
  t.indices = std::move(values);
  t.indices.resize(size_t(rows * k), -1);
  return t;
}

enum class TieBreak { lowest_index, highest_index, random };

// A correct selection of `k_valid` of the n values, ties at the cut broken by
// `tie`, written in a shuffled order (the order in a row is free), then -1 up
// to k slots. `eligible` (optional) limits the candidates (live blocks).
inline std::vector<int32_t> select_row(const float* v, int64_t n, int64_t k_valid, int64_t k, TieBreak tie, Rng& rng) {
  std::vector<int32_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::vector<uint64_t> priority(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    priority[size_t(i)] = tie == TieBreak::lowest_index    ? uint64_t(i)
                          : tie == TieBreak::highest_index ? uint64_t(n - i)
                                                           : rng.next_u64();
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    if (spec_less(v[b], v[a])) return true;
    if (spec_less(v[a], v[b])) return false;
    return priority[size_t(a)] < priority[size_t(b)];
  });
  std::vector<int32_t> out(order.begin(), order.begin() + k_valid);
  for (size_t i = out.size(); i > 1; --i) std::swap(out[i - 1], out[size_t(rng.uniform_int(0, int64_t(i) - 1))]);
  out.resize(size_t(k), -1);
  return out;
}

// Rows with heavy ties: few quantized levels, constant rows, mostly -inf rows,
// 7 of every 8 columns -inf, NaNs of both payloads, signed zeros.
inline void fill_tied_row(float* row, int64_t n, Rng& rng) {
  const int kind = int(rng.uniform_int(0, 6));
  const int levels = int(rng.uniform_int(1, 4));
  std::vector<float> level(static_cast<size_t>(levels));
  for (auto& x : level) x = float(rng.uniform_int(-3, 3)) * 0.25f;
  for (int64_t i = 0; i < n; ++i) {
    float x = level[size_t(rng.uniform_int(0, levels - 1))];
    switch (kind) {
      case 0: break;                                   // quantized
      case 1: x = level[0]; break;                     // constant
      case 2: if (rng.bernoulli(0.9)) x = -kInf; break;  // -inf heavy
      case 3: if (i % 8 != 0) x = -kInf; break;        // the candidate mask at 7 of 8
      case 4: if (rng.bernoulli(0.2)) x = rng.bernoulli(0.5) ? kNaN : -kNaN; break;
      case 5: x = rng.bernoulli(0.5) ? 0.0f : -0.0f; break;  // signed zeros only
      default: if (rng.bernoulli(0.1)) x = rng.bernoulli(0.5) ? kInf : -kInf; break;
    }
    row[i] = x;
  }
}

}  // namespace dsa::oracle::testing
