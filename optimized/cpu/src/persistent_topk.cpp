// The persistent_topk twin (persistent_topk.hpp) and cpu_persistent_topk.
#include "dsa/optimized/persistent_topk.hpp"

#include <algorithm>

#include "call_checks.hpp"
#include "dsa/common/radix_keys.hpp"
#include "dsa/common/radix_plan.hpp"
#include "radix_passes.hpp"

namespace dsa::optimized {

namespace {

using common::coarse_bin_256;
using common::order_key;

constexpr int kPersistentBins = 256;
// This kernel's never-written scratch words (radix_passes.hpp uninitialized_word).
constexpr uint64_t kPersistentScratchMultiplier = 0xd1b54a32d192ed03ull;
constexpr uint64_t kPersistentScratchOffset = 0x8cb92ba72f3d8dd7ull;

}  // namespace

PersistentTopkBlock::PersistentTopkBlock(PersistentTopkConfig config, PersistentTopkDefects defects)
    : config_(config), defects_(defects) {}

void PersistentTopkBlock::begin_launch() {
  for (auto& slot : ring_) slot.fill(0);
  row_iter_ = 0;
  radix_iter_ = 0;
}

std::array<int32_t, 256>& PersistentTopkBlock::ring_pass(int64_t pass) {
  ring_[size_t((pass + 1) % 3)].fill(0);
  return ring_[size_t(pass % 3)];
}

void PersistentTopkBlock::select(const float* values, int64_t len, int k, int32_t* out) {
  const int64_t row_iter = row_iter_++;
  if (len <= k) {
    for (int64_t i = 0; i < len; ++i) out[i] = int32_t(i);
    std::fill(out + len, out + k, -1);
    return;
  }
  while (output_.size() < size_t(k))
    output_.push_back(
        detail::uninitialized_word(output_.size(), kPersistentScratchMultiplier, kPersistentScratchOffset));
  found_ = 0;
  if (len < config_.radix_min_len) {
    filtered(values, len, k);
  } else {
    const int64_t ring_row = defects_.ring_follows_row_counter ? row_iter : radix_iter_;
    ++radix_iter_;
    whole_row(values, len);
    radix_passes(k, ring_row * 4);
  }
  std::copy(output_.begin(), output_.begin() + k, out);
}

void PersistentTopkBlock::whole_row(const float* values, int64_t len) {
  found_ = 0;
  candidates_.resize(size_t(len));
  keys_.resize(size_t(len));
  for (int64_t i = 0; i < len; ++i) {
    candidates_[size_t(i)] = int32_t(i);
    keys_[size_t(i)] = order_key(values[i]);
  }
}

void PersistentTopkBlock::filtered(const float* values, int64_t len, int k) {
  std::array<int32_t, kPersistentBins> hist{};
  bins_.resize(size_t(len));
  uint8_t* bins = bins_.data();
  for (int64_t i = 0; i < len; ++i) bins[i] = uint8_t(coarse_bin_256(values[i]));
  detail::add_histogram<kPersistentBins>(len, [bins](int64_t i) { return bins[i]; }, hist);
  const detail::Threshold cut = detail::find_threshold(hist.data(), kPersistentBins, k);
  if (hist[size_t(cut.bin)] > config_.candidate_capacity && !defects_.drop_candidate_overflow) {
    whole_row(values, len);  // the buffer cannot hold the bin: refine over the whole row
    radix_passes(k, -1);
    return;
  }
  candidates_.clear();
  keys_.clear();
  for (int64_t i = 0; i < len; ++i) {
    if (bins[i] > cut.bin) {
      output_[size_t(found_++)] = int32_t(i);
    } else if (bins[i] == cut.bin && int64_t(candidates_.size()) < config_.candidate_capacity) {
      candidates_.push_back(int32_t(i));  // past the capacity an entry is lost (the defect's path)
      keys_.push_back(order_key(values[i]));
    }
  }
  radix_passes(k, -1);
}

// Four 8-bit passes over the candidates' fp32 keys, each keeping the entries
// of its threshold bin (the GPU's radix path rescans the row and matches the
// bytes fixed so far: the same entries in the same scan order). The last
// bin's equal keys go in scan order. first_ring_pass < 0: a private
// histogram instead of the ring.
void PersistentTopkBlock::radix_passes(int k, int64_t first_ring_pass) {
  std::array<int32_t, kPersistentBins> local{};
  for (int pass = 0; pass < 4; ++pass) {
    const common::RadixPass digits = common::plan_8x4().pass[pass];
    const uint32_t* keys = keys_.data();
    std::array<int32_t, kPersistentBins>* hist = &local;
    if (first_ring_pass >= 0)
      hist = &ring_pass(first_ring_pass + pass);
    else
      local.fill(0);
    detail::add_histogram<kPersistentBins>(int64_t(candidates_.size()),
                                           [keys, digits](int64_t i) { return digits.digit(keys[i]); }, *hist);
    const detail::Threshold cut = detail::find_threshold(hist->data(), digits.bins(), k - found_);
    detail::keep_threshold_bin(candidates_, keys_, [digits](uint32_t key) { return digits.digit(key); }, cut.bin,
                               output_, found_);
    if (cut.bin < 0) return;
  }
  const size_t take = std::min(candidates_.size(), size_t(k - found_));
  for (size_t i = 0; i < take; ++i) output_[size_t(found_++)] = candidates_[i];
}

namespace {

class PersistentTopkOps final : public IndexerOps {
public:
  PersistentTopkOps(PersistentTopkConfig config, PersistentTopkDefects defects) {
    if (config.num_blocks < 1)
      throw InvalidInput("num_blocks", "must be at least 1, got " + std::to_string(config.num_blocks));
    if (config.candidate_capacity < 1)
      throw InvalidInput("candidate_capacity", "must be at least 1, got " + std::to_string(config.candidate_capacity));
    for (int32_t b = 0; b < config.num_blocks; ++b) blocks_.emplace_back(config, defects);
  }

  std::string name() const override { return "cpu_persistent_topk"; }

  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    detail::check_row_bounds(logits, bounds);
    detail::check_topk_output(out, logits.rows);
    const int64_t num_blocks = int64_t(blocks_.size());
#pragma omp parallel for schedule(dynamic, 1) if (detail::worth_threads(bounds))
    for (int64_t b = 0; b < num_blocks; ++b) {
      PersistentTopkBlock& block = blocks_[size_t(b)];
      block.begin_launch();
      for (int64_t r = b; r < logits.rows; r += num_blocks) {
        const int64_t start = bounds.start[size_t(r)];
        block.select(logits.row(r) + start, bounds.end[size_t(r)] - start, out.k, out.row(r));
      }
    }
  }

private:
  std::vector<PersistentTopkBlock> blocks_;
};

}  // namespace

std::unique_ptr<IndexerOps> make_cpu_persistent_topk() { return make_cpu_persistent_topk(PersistentTopkConfig{}); }

std::unique_ptr<IndexerOps> make_cpu_persistent_topk(const PersistentTopkConfig& config,
                                                     const PersistentTopkDefects& defects) {
  return std::make_unique<PersistentTopkOps>(config, defects);
}

}  // namespace dsa::optimized
