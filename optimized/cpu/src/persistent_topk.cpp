// The persistent_topk twin (persistent_topk.hpp) and cpu_persistent_topk.
#include "dsa/optimized/persistent_topk.hpp"

#include <algorithm>

#include "call_checks.hpp"
#include "dsa/optimized/radix_keys.hpp"

namespace dsa::optimized {

namespace {

constexpr int kBins = 256;

int32_t uninitialized_word(uint64_t slot) {
  uint64_t z = slot * 0xd1b54a32d192ed03ull + 0x8cb92ba72f3d8dd7ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return int32_t(uint32_t(z ^ (z >> 31)));
}

// The bin of the need-th largest entry from the top, and the count above it;
// bin -1 when the histogram holds fewer than `need` entries (a polluted or
// truncated state: only the defects reach it).
struct Threshold {
  int bin = -1;
  int64_t above = 0;
};
Threshold find_threshold(const std::array<int32_t, kBins>& hist, int64_t need) {
  int64_t cum = 0;
  for (int b = kBins - 1; b >= 0; --b) {
    if (cum + hist[size_t(b)] >= need) return {b, cum};
    cum += hist[size_t(b)];
  }
  return {-1, cum};
}

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
  while (output_.size() < size_t(k)) output_.push_back(uninitialized_word(output_.size()));
  found_ = 0;
  keys_.resize(size_t(len));
  for (int64_t i = 0; i < len; ++i) keys_[size_t(i)] = order_key(values[i]);
  if (len < config_.radix_min_len) {
    filtered(values, len, k);
  } else {
    const int64_t ring_row = defects_.ring_follows_row_counter ? row_iter : radix_iter_;
    ++radix_iter_;
    radix_from_pass_ = ring_row * 4;
    radix(len, k, true);
  }
  std::copy(output_.begin(), output_.begin() + k, out);
}

void PersistentTopkBlock::filtered(const float* values, int64_t len, int k) {
  local_hist_.fill(0);
  bins_.resize(size_t(len));
  for (int64_t i = 0; i < len; ++i) {
    const uint32_t b = coarse_bin_256(values[i]);
    bins_[size_t(i)] = uint8_t(b);
    ++local_hist_[b];
  }
  const Threshold cut = find_threshold(local_hist_, k);
  const int64_t in_bin = local_hist_[size_t(cut.bin)];
  if (in_bin > config_.candidate_capacity && !defects_.drop_candidate_overflow) {
    radix(len, k, false);  // the buffer cannot hold the bin: refine over the whole row
    return;
  }
  candidates_.clear();
  for (int64_t i = 0; i < len; ++i) {
    const int b = bins_[size_t(i)];
    if (b > cut.bin)
      output_[size_t(found_++)] = int32_t(i);
    else if (b == cut.bin && int64_t(candidates_.size()) < config_.candidate_capacity)
      candidates_.push_back(int32_t(i));  // past the capacity an entry is lost (the defect's path)
  }
  refine_candidates(k);
}

// Four 8-bit passes over the candidates' fp32 keys, each keeping the entries
// of its threshold bin; the last bin's equal keys go in buffer order.
void PersistentTopkBlock::refine_candidates(int k) {
  for (int pass = 0; pass < 4; ++pass) {
    const int shift = 24 - 8 * pass;
    local_hist_.fill(0);
    for (const int32_t i : candidates_) ++local_hist_[(keys_[size_t(i)] >> shift) & 0xffu];
    const Threshold cut = find_threshold(local_hist_, k - found_);
    size_t kept = 0;
    for (const int32_t i : candidates_) {
      const int digit = int((keys_[size_t(i)] >> shift) & 0xffu);
      if (digit > cut.bin)
        output_[size_t(found_++)] = i;
      else if (digit == cut.bin)
        candidates_[kept++] = i;
    }
    candidates_.resize(kept);
    if (cut.bin < 0) return;
  }
  const size_t take = std::min(candidates_.size(), size_t(k - found_));
  for (size_t i = 0; i < take; ++i) output_[size_t(found_++)] = candidates_[i];
}

// Four 8-bit passes over the whole row; pass p histograms the entries whose
// higher bytes equal the cuts of passes 0..p-1.
void PersistentTopkBlock::radix(int64_t len, int k, bool use_ring) {
  found_ = 0;
  uint32_t pattern = 0;
  for (int pass = 0; pass < 4; ++pass) {
    const int shift = 24 - 8 * pass;
    const int match_shift = shift + 8;
    auto matches = [&](uint32_t key) { return pass == 0 || (key >> match_shift) == (pattern >> match_shift); };
    std::array<int32_t, kBins>* hist = &local_hist_;
    if (use_ring)
      hist = &ring_pass(radix_from_pass_ + pass);
    else
      local_hist_.fill(0);
    for (int64_t i = 0; i < len; ++i) {
      const uint32_t key = keys_[size_t(i)];
      if (matches(key)) ++(*hist)[(key >> shift) & 0xffu];
    }
    const Threshold cut = find_threshold(*hist, k - found_);
    for (int64_t i = 0; i < len; ++i) {
      const uint32_t key = keys_[size_t(i)];
      if (matches(key) && int((key >> shift) & 0xffu) > cut.bin) output_[size_t(found_++)] = int32_t(i);
    }
    if (cut.bin < 0) return;
    pattern |= uint32_t(cut.bin) << shift;
  }
  for (int64_t i = 0; i < len && found_ < k; ++i)
    if (keys_[size_t(i)] == pattern) output_[size_t(found_++)] = int32_t(i);
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
#pragma omp parallel for schedule(dynamic, 1)
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
