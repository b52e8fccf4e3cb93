// The per-row radix select of the top_k_per_row twin (radix_topk.hpp).
#include "dsa/optimized/radix_topk.hpp"

#include <algorithm>
#include <array>
#include <cfloat>
#include <limits>

#include "dsa/common/radix_keys.hpp"
#include "dsa/common/radix_plan.hpp"
#include "radix_passes.hpp"

namespace dsa::optimized {

namespace {

using common::coarse_bin_2048;
using common::order_key;

constexpr int kRadixBins = 2048;
// This kernel's never-written scratch words (radix_passes.hpp uninitialized_word).
constexpr uint64_t kRadixScratchMultiplier = 0x9e3779b97f4a7c15ull, kRadixScratchOffset = 0x632be59bd9b4e019ull;

// Launches with the run-dependent tie order take odd launches in reverse.
bool reversed_arrival(bool defect, uint64_t launch) { return defect && (launch & 1u); }

}  // namespace

RadixTopkSm::RadixTopkSm(RadixTopkConfig config, RadixTopkDefects defects) : config_(config), defects_(defects) {}

void RadixTopkSm::select(const float* values, int64_t len, int k, int32_t* out, uint64_t launch) {
  if (defects_.merge_padding_above_minus_inf && len >= config_.split_min_len && len > k)
    split_and_merge(values, len, k, out, launch);
  else
    select_row(values, len, k, out, launch);
}

// vLLM's split path with the merge's defect: each part's top-k list, a short
// part padded with (-FLT_MAX, -1), merged by value (padding above -inf).
void RadixTopkSm::split_and_merge(const float* values, int64_t len, int k, int32_t* out, uint64_t launch) {
  const int64_t parts = config_.split_blocks, part_len = len / parts;
  std::vector<float> merged_values;
  std::vector<int32_t> merged_indices, part_out(static_cast<size_t>(k));
  for (int64_t p = 0; p < parts; ++p) {
    const int64_t start = p * part_len, end = p + 1 == parts ? len : start + part_len;
    select_row(values + start, end - start, k, part_out.data(), launch);
    for (int i = 0; i < k; ++i) {
      const bool pad = part_out[size_t(i)] < 0;
      merged_values.push_back(pad ? -FLT_MAX : values[start + part_out[size_t(i)]]);
      merged_indices.push_back(pad ? -1 : int32_t(start + part_out[size_t(i)]));
    }
  }
  std::vector<int32_t> order(merged_values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int32_t(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return order_key(merged_values[size_t(a)]) > order_key(merged_values[size_t(b)]);
  });
  for (int i = 0; i < k; ++i) out[i] = merged_indices[size_t(order[size_t(i)])];
}

void RadixTopkSm::select_row(const float* values, int64_t len, int k, int32_t* out, uint64_t launch) {
  row_len_ = len;
  if (len <= k) {
    for (int64_t i = 0; i < len; ++i) out[i] = int32_t(i);
    if (!defects_.skip_short_row_tail) std::fill(out + len, out + k, -1);
    return;
  }
  while (output_.size() < size_t(k)) output_.push_back(detail::uninitialized_word(output_.size(), kRadixScratchMultiplier, kRadixScratchOffset));
  found_ = 0;
  const int64_t capacity = config_.final_capacity;
  std::array<int32_t, kRadixBins> hist{};

  // Step 0: the coarse pass on the fp16 key.
  bins_.resize(size_t(len));
  uint16_t* bins = bins_.data();
  for (int64_t i = 0; i < len; ++i) bins[i] = uint16_t(coarse_bin_2048(values[i]));
  detail::add_histogram<kRadixBins>(len, [bins](int64_t i) { return bins[i]; }, hist);
  const detail::Threshold coarse = detail::find_threshold(hist.data(), kRadixBins, k);
  if (hist[size_t(coarse.bin)] <= capacity) {
    candidates_.clear();
    for (int64_t i = 0; i < len; ++i) {
      if (bins[i] > coarse.bin)
        output_[size_t(found_++)] = int32_t(i);
      else if (bins[i] == coarse.bin)
        candidates_.push_back(int32_t(i));
    }
    take_best(candidates_, values, k - found_, launch);
    std::copy(output_.begin(), output_.begin() + k, out);
    return;
  }
  if (defects_.emit_coarse_before_fine)
    for (int64_t i = 0; i < len; ++i)
      if (bins[i] > coarse.bin) output_[size_t(found_++)] = int32_t(i);

  // Steps 1..3 on the fp32 key: 11, 11 and 10 bits. Step 1 reads the whole
  // row; each later step reads the entries of the previous step's threshold
  // bin (the GPU rescans the row and matches the bits fixed so far: the same
  // entries, in the same scan order). Keys and indices are compacted together.
  candidates_.resize(size_t(len));
  keys_.resize(size_t(len));
  for (int64_t i = 0; i < len; ++i) {
    candidates_[size_t(i)] = int32_t(i);
    keys_[size_t(i)] = order_key(values[i]);
  }
  for (int step = 1; step <= 3; ++step) {
    const common::RadixPass pass = common::plan_11_11_10().pass[step - 1];
    const uint32_t* keys = keys_.data();
    hist.fill(0);
    detail::add_histogram<kRadixBins>(int64_t(candidates_.size()), [keys, pass](int64_t i) { return pass.digit(keys[i]); },
                                      hist);
    const detail::Threshold cut = detail::find_threshold(hist.data(), pass.bins(), k - found_);
    detail::keep_threshold_bin(candidates_, keys_, [pass](uint32_t key) { return pass.digit(key); }, cut.bin, output_,
                               found_);
    const int64_t kept = int64_t(candidates_.size());
    if (cut.bin < 0) break;
    if (step == 3) {
      take_in_arrival_order(candidates_, k - found_, launch);  // equal keys: nothing left to sort
    } else if (kept <= capacity) {
      take_best(candidates_, values, k - found_, launch);
      break;
    }
  }
  std::copy(output_.begin(), output_.begin() + k, out);
}

// The bounded final buffer: sorted by key, descending, ties in arrival order.
void RadixTopkSm::take_best(std::vector<int32_t>& items, const float* values, int need, uint64_t launch) {
  if (defects_.ieee_final_rank) {
    rank_by_ieee(items, values, need);
    return;
  }
  if (defects_.sort_padding_emitted && row_len_ >= config_.radix_sort_min_len) {
    sort_with_padding(items, values, need);
    return;
  }
  if (reversed_arrival(defects_.run_dependent_ties, launch)) std::reverse(items.begin(), items.end());
  // key above, complemented arrival position below: larger = better.
  std::vector<uint64_t> order(items.size());
  for (size_t p = 0; p < items.size(); ++p)
    order[p] = (uint64_t(order_key(values[items[p]])) << 32) | (0xffffffffu - uint32_t(p));
  const size_t chosen = std::min(order.size(), size_t(need));
  std::partial_sort(order.begin(), order.begin() + ptrdiff_t(chosen), order.end(), std::greater<>());
  std::vector<int32_t> ranked(chosen);
  for (size_t i = 0; i < chosen; ++i) ranked[i] = items[0xffffffffu - uint32_t(order[i] & 0xffffffffu)];
  const bool split_tie = chosen >= 2 && chosen < order.size() && (order[chosen - 1] >> 32) == (order[chosen] >> 32) &&
                         (order[chosen - 2] >> 32) == (order[chosen - 1] >> 32);
  if (defects_.duplicate_split_tie && split_tie) ranked[chosen - 1] = ranked[chosen - 2];
  for (size_t i = 0; i < chosen; ++i) output_[size_t(found_++)] = ranked[i];
}

// vLLM's block radix sort of the final buffer: thread t's item ii is buffer
// slot ii * threads + t (4 items a thread), the slots past the real items
// hold (-FLT_MAX, an uninitialized index), and the sort is stable in the
// blocked order (thread t's items are ranks 4t .. 4t + 3) under the float
// order (-inf below -FLT_MAX), descending. The first `need` come out.
void RadixTopkSm::sort_with_padding(const std::vector<int32_t>& items, const float* values, int need) {
  constexpr int kPerThread = 4;
  const int threads = std::max(1, config_.final_capacity / kPerThread);
  struct Slot {
    float value;
    int32_t index;
  };
  std::vector<Slot> blocked(size_t(threads) * kPerThread);
  for (size_t i = 0; i < blocked.size(); ++i)
    blocked[i] = {-FLT_MAX, detail::uninitialized_word(i, kRadixScratchMultiplier, kRadixScratchOffset ^ 0x5a5a)};
  for (size_t src = 0; src < items.size() && src < blocked.size(); ++src) {
    const size_t ii = src / size_t(threads), t = src % size_t(threads);
    blocked[t * kPerThread + ii] = {values[items[src]], items[src]};
  }
  std::stable_sort(blocked.begin(), blocked.end(),
                   [](const Slot& a, const Slot& b) { return order_key(a.value) > order_key(b.value); });
  for (int i = 0; i < need && i < int(blocked.size()); ++i) output_[size_t(found_++)] = blocked[size_t(i)].index;
}

// Step 3's threshold bin holds equal keys: the first `need` to arrive win.
void RadixTopkSm::take_in_arrival_order(std::vector<int32_t>& items, int need, uint64_t launch) {
  if (reversed_arrival(defects_.run_dependent_ties, launch)) std::reverse(items.begin(), items.end());
  const size_t chosen = std::min(items.size(), size_t(need));
  if (defects_.duplicate_split_tie && chosen >= 2 && chosen < items.size()) items[chosen - 1] = items[chosen - 2];
  for (size_t i = 0; i < chosen; ++i) output_[size_t(found_++)] = items[i];
}

// vLLM's insertion ranking: entry p goes to slot #{q : v_p < v_q or (v_p ==
// v_q and p < q)}. A NaN compares false with everything and ranks 0.
void RadixTopkSm::rank_by_ieee(const std::vector<int32_t>& items, const float* values, int need) {
  for (size_t p = 0; p < items.size(); ++p) {
    const float v = values[items[p]];
    int64_t rank = 0;
    for (size_t q = 0; q < items.size(); ++q) {
      const float w = values[items[q]];
      if (v < w || (v == w && p < q)) ++rank;
    }
    if (rank < need) output_[size_t(found_ + rank)] = items[p];
  }
  found_ += need;
}

}  // namespace dsa::optimized
