// cpu_radix_topk: the top_k_per_row twin as an implementation under test.
#include <atomic>

#include "call_checks.hpp"
#include "dsa/optimized/radix_topk.hpp"

namespace dsa::optimized {

namespace {

// A process-wide launch counter, as a GPU's state outlives one caller: two
// launches in a row never share a tie order under run_dependent_ties, even
// from two separately built implementations.
std::atomic<uint64_t> g_launches{0};

class RadixTopkOps final : public IndexerOps {
public:
  RadixTopkOps(RadixTopkConfig config, RadixTopkDefects defects) : config_(config), defects_(defects) {
    if (config_.num_sms < 1)
      throw InvalidInput("num_sms", "must be at least 1, got " + std::to_string(config_.num_sms));
    if (config_.final_capacity < 1)
      throw InvalidInput("final_capacity", "must be at least 1, got " + std::to_string(config_.final_capacity));
    for (int32_t s = 0; s < config_.num_sms; ++s) sms_.emplace_back(config_, defects_);
  }

  std::string name() const override { return "cpu_radix_topk"; }

  void topk(const Logits& logits, const RowBounds& bounds, TopkIndices& out) override {
    detail::check_row_bounds(logits, bounds);
    detail::check_topk_output(out, logits.rows);
    const uint64_t launch = g_launches.fetch_add(1, std::memory_order_relaxed);
    const int64_t num_sms = int64_t(sms_.size());
#pragma omp parallel for schedule(dynamic, 1) if (detail::worth_threads(bounds))
    for (int64_t sm = 0; sm < num_sms; ++sm) {
      for (int64_t r = sm; r < logits.rows; r += num_sms) {
        const int64_t start = bounds.start[size_t(r)];
        int64_t len = bounds.end[size_t(r)] - start;
        if (len == 0 && defects_.empty_row_reads_full_width) len = logits.width - start;
        sms_[size_t(sm)].select(logits.row(r) + start, len, out.k, out.row(r), launch);
      }
    }
  }

private:
  RadixTopkConfig config_;
  RadixTopkDefects defects_;
  std::vector<RadixTopkSm> sms_;
};

}  // namespace

std::unique_ptr<IndexerOps> make_cpu_radix_topk() { return make_cpu_radix_topk(RadixTopkConfig{}); }

std::unique_ptr<IndexerOps> make_cpu_radix_topk(const RadixTopkConfig& config, const RadixTopkDefects& defects) {
  return std::make_unique<RadixTopkOps>(config, defects);
}

}  // namespace dsa::optimized
