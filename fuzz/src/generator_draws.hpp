// Building blocks of the case generators (generators*.cpp): choices that
// shrink towards their first option, seeds that never shrink, lists that
// shrink by dropping any element, lengths drawn before the sizes they refer
// to, and the last polish of a shrink.
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "dsa/fuzz/generators.hpp"

namespace dsa::fuzz::detail {

constexpr int kFullSize = 100;  // rapidcheck's nominal size: the whole range

// One of `options`, weighted; shrinks towards options[0].
template <class T>
inline rc::Gen<T> pick(std::vector<std::pair<int, T>> options) {
  std::vector<T> expanded;
  for (auto& [weight, value] : options)
    for (int i = 0; i < weight; ++i) expanded.push_back(value);
  const auto n = expanded.size();
  return rc::gen::map(rc::gen::resize(kFullSize, rc::gen::inRange<size_t>(0, n)),
                      [expanded = std::move(expanded)](size_t i) { return expanded[i]; });
}

template <class T>
inline rc::Gen<T> pick(std::initializer_list<T> options) {
  std::vector<std::pair<int, T>> weighted;
  for (const T& v : options) weighted.emplace_back(1, v);
  return pick(std::move(weighted));
}

// One of several generators, weighted; shrinks towards the first, then inside it.
template <class T>
inline rc::Gen<T> pick_gen(std::vector<std::pair<int, rc::Gen<T>>> options) {
  std::vector<rc::Gen<T>> expanded;
  for (auto& [weight, gen] : options)
    for (int i = 0; i < weight; ++i) expanded.push_back(gen);
  const auto n = expanded.size();
  return rc::gen::mapcat(rc::gen::resize(kFullSize, rc::gen::inRange<size_t>(0, n)),
                         [expanded = std::move(expanded)](size_t i) { return expanded[i]; });
}

// A seed of a row, request or case. It never shrinks: another seed is other
// data, not simpler data, and each try would cost a whole evaluation.
inline rc::Gen<uint32_t> gen_seed() {
  return rc::gen::noShrink(rc::gen::resize(kFullSize, rc::gen::inRange<uint32_t>(0, 1u << 20)));
}

// A list of 1..max_count elements that shrinks by dropping any of them.
template <class T>
inline rc::Gen<std::vector<T>> gen_list(rc::Gen<T> element, int32_t max_count) {
  return rc::gen::map(rc::gen::nonEmpty(rc::gen::container<std::vector<T>>(std::move(element))),
                      [max_count](std::vector<T> v) {
                        if (int32_t(v.size()) > max_count) v.resize(size_t(max_count));
                        return v;
                      });
}

inline rc::Gen<ValueKind> gen_value_kind() {
  return pick<ValueKind>({{6, ValueKind::normal},
                          {4, ValueKind::few_levels},
                          {2, ValueKind::constant},
                          {3, ValueKind::mostly_neg_inf},
                          {3, ValueKind::one_coarse_bin},
                          {2, ValueKind::nan_heavy},
                          {2, ValueKind::extremes},
                          {3, ValueKind::small_integers},
                          {2, ValueKind::bf16_valued},
                          {2, ValueKind::below_fp16}});
}

inline rc::Gen<TailKind> gen_tail() { return pick<TailKind>({{3, TailKind::garbage}, {1, TailKind::neg_inf}}); }

// The options a contract's list allows (an empty list allows every one);
// when it allows none of them, the contract's own values.
template <class T>
std::vector<std::pair<int, T>> allowed(std::vector<std::pair<int, T>> options, const std::vector<T>& list) {
  if (list.empty()) return options;
  std::erase_if(options, [&](const auto& o) { return std::find(list.begin(), list.end(), o.second) == list.end(); });
  if (!options.empty()) return options;
  for (const T& v : list) options.emplace_back(1, v);
  return options;
}

// next_n options inside [min, max]; the range's ends when none is.
inline std::vector<std::pair<int, int32_t>> next_n_within(std::vector<std::pair<int, int32_t>> options,
                                                          const Contract& contract) {
  std::erase_if(options, [&](const auto& o) { return o.second < contract.min_next_n || o.second > contract.max_next_n; });
  if (options.empty()) options.emplace_back(1, std::max(contract.min_next_n, 1));
  return options;
}

// 2-D lengths that never fall within a request, when the contract says so.
template <class T>
void rise(std::vector<T>& row_lens, const Contract& contract) {
  if (contract.rising_2d_lens) std::sort(row_lens.begin(), row_lens.end());
}

inline rc::Gen<int32_t> gen_k(const Contract& contract = {}) {
  if (!contract.k_values.empty()) return pick(allowed<int32_t>({}, contract.k_values));
  return pick_gen<int32_t>({{8, pick<int32_t>({1, 2, 3, 4, 8, 16, 64, 100, 512, 2048})},
                            {2, rc::gen::inRange<int32_t>(1, 2049)}});
}

// A row's window start: 0 for decode rows, an offset for prefill-like rows
// (only 0 for an implementation that takes no row starts).
inline rc::Gen<int64_t> gen_start(const Contract& contract = {}) {
  if (!contract.row_starts) return rc::gen::just<int64_t>(0);
  return pick<int64_t>({{6, 0}, {1, 1}, {1, 5}, {1, 100}, {1, 3000}});
}

// Scales every length down by the same factor when a case is over its budget.
inline int64_t scaled(int64_t len, double factor) { return int64_t(std::floor(double(len) * factor)); }

// A length drawn before the sizes it refers to (k, the page) are known, so
// that the rows can be the first thing a case draws and the first thing it
// shrinks (RapidCheck shrinks an exec's picks in order).
struct LengthDraw {
  enum Class : uint8_t {
    zero, one, k_minus_1, k, k_plus_1, pages, pages_plus_1, pages_minus_1, around_k, landmark, any,
    exact,  // only as a shrink of a landmark: the value itself
  };
  Class cls = zero;
  int64_t value = 0;  // pages: the multiple; around_k: per mille of 2k + 64; landmark: the size; any: per 2^20 of cap

  int64_t resolve(int64_t k_, int64_t page, int64_t cap) const {
    page = std::max<int64_t>(page, 1);
    int64_t v = 0;
    switch (cls) {
      case zero: v = 0; break;
      case one: v = 1; break;
      case k_minus_1: v = k_ - 1; break;
      case k: v = k_; break;
      case k_plus_1: v = k_ + 1; break;
      case pages: v = value * page; break;
      case pages_plus_1: v = value * page + 1; break;
      case pages_minus_1: v = value * page - 1; break;
      case around_k: v = value * (2 * k_ + 64) / 1000; break;
      case landmark:
      case exact: v = value; break;
      case any: v = int64_t(double(value) / double(1 << 20) * double(cap)); break;
    }
    return std::clamp<int64_t>(v, 0, cap);
  }
};

rc::Gen<LengthDraw> gen_length_draw();

// The last polish of a shrink. RapidCheck shrinks the draws (a length class,
// a multiple of a page); once none of those fails any more, these shrink the
// case itself: drop a row or request, shorten one length towards 0, lower k.
// A value they produce shrinks only by them from then on.
std::vector<TopkCase> polish(const TopkCase& c);
std::vector<CandidateCase> polish(const CandidateCase& c);
std::vector<DecodeCase> polish(const DecodeCase& c);
std::vector<PrefillCase> polish(const PrefillCase& c);

// The polish keeps to the contract: a lower k, a dropped row position or a
// shorter 2-D length it does not take is never tried.
template <class Case>
rc::Gen<Case> polished(rc::Gen<Case> gen, const Contract& contract) {
  return rc::gen::shrink(std::move(gen), [contract](const Case& c) {
    std::vector<Case> candidates = polish(c);
    std::erase_if(candidates, [&](const Case& d) { return !within(contract, FuzzCase(d)); });
    return rc::seq::fromContainer(std::move(candidates));
  });
}
}  // namespace dsa::fuzz::detail
