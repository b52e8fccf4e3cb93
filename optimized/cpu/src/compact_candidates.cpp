// cpu_compact_candidates (compact_candidates.hpp).
#include "dsa/optimized/compact_candidates.hpp"

#include <limits>
#include <vector>

#include "call_checks.hpp"
#include "dsa/optimized/radix_topk.hpp"

namespace dsa::optimized {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

class CompactCandidatesOps final : public IndexerOps {
public:
  CompactCandidatesOps() {
    for (int32_t s = 0; s < RadixTopkConfig{}.num_sms; ++s) sms_.emplace_back(RadixTopkConfig{}, RadixTopkDefects{});
  }

  std::string name() const override { return "cpu_compact_candidates"; }

  void compact_candidate_logits(const DecodeProblem& problem, const Profile& profile,
                                const CandidateBlocks& candidates, Logits& out) override {
    candidates.validate();
    const int64_t rows = problem.rows();
    if (candidates.rows != rows)
      throw InvalidInput("candidate_blocks", std::to_string(candidates.rows) + " rows, the problem has " +
                                                 std::to_string(rows));
    const int64_t S = candidates.block_size;
    const int64_t width = int64_t(candidates.slots) * S;
    if (out.rows != rows || out.width != width || out.values.size() != size_t(rows * width))
      throw InvalidInput("compact_logits", "output buffer is [" + std::to_string(out.rows) + ", " +
                                               std::to_string(out.width) + "], expected [" + std::to_string(rows) +
                                               ", " + std::to_string(width) + "]");
    const auto lens = visible_lens(problem);
    // The visible positions of live slots, in compact column order.
    std::vector<std::vector<int64_t>> positions(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r)
      for (int32_t c = 0; c < candidates.slots; ++c) {
        const int64_t block = candidates.row(r)[c];
        if (block < 0) continue;
        for (int64_t p = block * S; p < std::min((block + 1) * S, lens[size_t(r)]); ++p)
          positions[size_t(r)].push_back(p);
      }
    const auto values = decode_logits_at(problem, profile, positions);
    for (int64_t r = 0; r < rows; ++r) {
      float* dst = out.row(r);
      size_t i = 0;
      for (int32_t c = 0; c < candidates.slots; ++c) {
        const int64_t block = candidates.row(r)[c];
        for (int64_t t = 0; t < S; ++t) {
          const bool scored = block >= 0 && block * S + t < lens[size_t(r)];
          dst[c * S + t] = scored ? values[size_t(r)][i++] : kNegInf;
        }
      }
    }
  }

  void candidate_topk(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    detail::check_row_bounds(logits, bounds);
    candidates.validate();
    if (candidates.rows != logits.rows)
      throw InvalidInput("candidate_blocks", std::to_string(candidates.rows) + " rows for " +
                                                 std::to_string(logits.rows) + " logits rows");
    detail::check_topk_output(out, logits.rows);
    const int64_t num_sms = int64_t(sms_.size());
    const int64_t S = candidates.block_size;
#pragma omp parallel for schedule(dynamic, 1) if (detail::worth_threads(bounds))
    for (int64_t sm = 0; sm < num_sms; ++sm) {
      std::vector<float> compact;
      std::vector<int32_t> position;
      for (int64_t r = sm; r < logits.rows; r += num_sms) {
        const int64_t start = bounds.start[size_t(r)], len = bounds.end[size_t(r)] - start;
        compact.clear();
        position.clear();
        for (int32_t c = 0; c < candidates.slots; ++c) {
          const int64_t block = candidates.row(r)[c];
          if (block < 0) continue;
          for (int64_t p = block * S; p < std::min((block + 1) * S, len); ++p) {
            compact.push_back(logits.row(r)[start + p]);
            position.push_back(int32_t(p));
          }
        }
        int32_t* dst = out.row(r);
        sms_[size_t(sm)].select(compact.data(), int64_t(compact.size()), out.k, dst);
        for (int i = 0; i < out.k; ++i)
          if (dst[i] >= 0) dst[i] = position[size_t(dst[i])];
      }
    }
  }

private:
  std::vector<RadixTopkSm> sms_;
};

}  // namespace

std::unique_ptr<IndexerOps> make_cpu_compact_candidates() { return std::make_unique<CompactCandidatesOps>(); }

}  // namespace dsa::optimized
