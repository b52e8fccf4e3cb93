// cpu_compact_candidates (compact_candidates.hpp): the compact logits as a
// gather of the candidate pages (compact_gather.cpp) and one pass over the
// gathered entries; the candidate top-k over the compact row.
#include "dsa/optimized/compact_candidates.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "call_checks.hpp"
#include "compact_gather.hpp"
#include "dsa/formats.hpp"
#include "dsa/mma/models.hpp"
#include "dsa/optimized/radix_topk.hpp"

namespace dsa::optimized {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Below this many products a parallel region costs more than the rows.
constexpr int64_t kParallelProducts = int64_t(1) << 22;

// dots[h * count + t]: head h of query row `row` against gathered entry t, by
// the profile's model; the exact model's fp8 dots are sequential double sums,
// exact (NUMERICS "Exact sums"), rounded once to fp32.
void head_dots(const DecodeProblem& p, const Profile& profile, int64_t row, const detail::GatheredColumns& g,
               std::vector<float>& dots) {
  const int32_t H = p.heads, D = p.head_dim;
  const int64_t T = g.count;
  dots.assign(size_t(H) * size_t(T), 0.0f);
  std::vector<float> per_token(size_t(T) * size_t(H));
  if (is_fp8(p.element)) {
    const uint8_t* q = p.q.data() + size_t(row) * H * D;
    if (profile.mma == mma::Model::exact) {
      const float* value = fp8_decode_table(fp8_of(p.element));
      for (int32_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < T; ++t) {
          const uint8_t* k = g.codes.data() + size_t(t) * D;
          double sum = 0.0;
          for (int32_t d = 0; d < D; ++d) sum += double(value[q[h * D + d]]) * double(value[k[d]]);
          dots[size_t(h) * T + size_t(t)] = float(sum);
        }
      return;
    }
    // The profile's dim order: the chain reads q and K with the same permutation of D.
    std::vector<uint8_t> q_perm, k_perm;
    const uint8_t* k = g.codes.data();
    if (profile.dim_order) {
      const std::vector<int32_t> order = profile.dim_order(D);
      q_perm.resize(size_t(H) * D);
      k_perm.resize(size_t(T) * D);
      for (int32_t h = 0; h < H; ++h)
        for (int32_t i = 0; i < D; ++i) q_perm[size_t(h) * D + i] = q[size_t(h) * D + size_t(order[size_t(i)])];
      for (int64_t t = 0; t < T; ++t)
        for (int32_t i = 0; i < D; ++i) k_perm[size_t(t) * D + i] = k[size_t(t) * D + size_t(order[size_t(i)])];
      q = q_perm.data();
      k = k_perm.data();
    }
    if (profile.accumulation == mma::Accumulation::chained) {
      mma::chain_dots(profile.mma, q, H, k, T, D, per_token.data());
    } else {
      // Promoted accumulation (a kernel adding each instruction's result into fp32 registers):
      // every K-deep slice is a chain of one instruction from zero, the slices summed in order.
      const int32_t K = mma::instruction_k(profile.mma);
      std::vector<uint8_t> q_slice(size_t(H) * K), k_slice(size_t(T) * K);
      std::vector<float> part(per_token.size());
      for (int32_t s = 0; s < D / K; ++s) {
        for (int32_t h = 0; h < H; ++h)
          std::copy_n(q + size_t(h) * D + size_t(s) * K, K, q_slice.data() + size_t(h) * K);
        for (int64_t t = 0; t < T; ++t)
          std::copy_n(k + size_t(t) * D + size_t(s) * K, K, k_slice.data() + size_t(t) * K);
        mma::chain_dots(profile.mma, q_slice.data(), H, k_slice.data(), T, K, s == 0 ? per_token.data() : part.data());
        if (s > 0)
          for (size_t i = 0; i < per_token.size(); ++i) per_token[i] = per_token[i] + part[i];
      }
    }
  } else {
    mma::chain_dots_mxfp4(profile.mma_for(p.element), p.q.data() + size_t(row) * H * (D / 2),
                          p.q_block_scales.data() + size_t(row) * H * (D / 32), H, g.codes.data(),
                          g.block_scales.data(), T, D, per_token.data());
  }
  for (int32_t h = 0; h < H; ++h)
    for (int64_t t = 0; t < T; ++t) dots[size_t(h) * T + size_t(t)] = per_token[size_t(t) * H + size_t(h)];
}

class CompactCandidatesOps final : public IndexerOps {
public:
  explicit CompactCandidatesOps(const CompactCandidatesDefects& defects) : defects_(defects) {
    for (int32_t s = 0; s < RadixTopkConfig{}.num_sms; ++s) sms_.emplace_back(RadixTopkConfig{}, RadixTopkDefects{});
  }

  std::string name() const override { return "cpu_compact_candidates"; }

  void compact_candidate_logits(const DecodeProblem& problem, const Profile& profile, const CandidateBlocks& candidates,
                                Logits& out) override {
    problem.validate();
    profile.require(problem.element);
    profile.require_weights(problem.weights, problem.heads);
    candidates.validate();
    const int64_t rows = problem.rows();
    if (candidates.rows != rows)
      throw InvalidInput("candidate_blocks",
                         std::to_string(candidates.rows) + " rows, the problem has " + std::to_string(rows));
    const int64_t S = candidates.block_size;
    const int64_t width = int64_t(candidates.slots) * S;
    if (out.rows != rows || out.width != width || out.values.size() != size_t(rows * width))
      throw InvalidInput("compact_logits", "output buffer is [" + std::to_string(out.rows) + ", " +
                                               std::to_string(out.width) + "], expected [" + std::to_string(rows) +
                                               ", " + std::to_string(width) + "]");
    const ReductionProgram program(profile, problem.heads);
    const auto lens = visible_lens(problem);
    int64_t work = 0;
    for (int64_t r = 0; r < rows; ++r) work += std::min(width, lens[size_t(r)]) * problem.heads * problem.head_dim;
#pragma omp parallel for schedule(dynamic) if (work >= kParallelProducts)
    for (int64_t r = 0; r < rows; ++r) {
      // The row's compact columns that hold a logit, and the positions they score.
      std::vector<int64_t> columns, positions;
      for (int64_t col = 0; col < width; ++col) {
        const int64_t block = candidates.row(r)[col / S];
        if (block >= 0 && block * S + col % S < lens[size_t(r)]) {
          columns.push_back(col);
          positions.push_back(block * S + col % S);
        }
      }
      float* dst = out.row(r);
      std::fill(dst, dst + width, kNegInf);
      if (columns.empty()) continue;
      const detail::GatheredColumns g = detail::gather_columns(problem, r, positions, candidates.block_size, defects_);
      std::vector<float> dots, values(columns.size());
      head_dots(problem, profile, r, g, dots);
      reduce(program, profile, problem, r, g, dots, values);
      for (size_t i = 0; i < columns.size(); ++i) dst[columns[i]] = values[i];
    }
  }

  void candidate_topk(const Logits& logits, const RowBounds& bounds, const CandidateBlocks& candidates,
                      TopkIndices& out) override {
    detail::check_row_bounds(logits, bounds);
    candidates.validate();
    if (candidates.rows != logits.rows)
      throw InvalidInput("candidate_blocks",
                         std::to_string(candidates.rows) + " rows for " + std::to_string(logits.rows) + " logits rows");
    detail::check_topk_output(out, logits.rows);
    select_candidates(candidates, bounds, out, detail::worth_threads(bounds),
                      [&](int64_t r, int32_t, int64_t p) { return logits.row(r)[bounds.start[size_t(r)] + p]; });
  }

  // The gfx942 fused launch: the compact logits above, then the top-k of each
  // compact row, read where the launch wrote it.
  void candidate_logits_top_k(const DecodeProblem& problem, const Profile& profile, const CandidateBlocks& candidates,
                              Logits& compact_out, TopkIndices& out) override {
    detail::check_topk_output(out, problem.rows());
    compact_candidate_logits(problem, profile, candidates, compact_out);
    const RowBounds bounds = topk_row_bounds(problem);
    const int64_t S = candidates.block_size;
    select_candidates(candidates, bounds, out, detail::worth_threads(bounds),
                      [&](int64_t r, int32_t slot, int64_t p) { return compact_out.row(r)[slot * S + p % S]; });
  }

private:
  // The top out.k of each row's candidate columns (positions below its length,
  // in slot order: ties go to the first slots), by the top_k_per_row twin,
  // remapped to positions. value(r, slot, position) reads one column.
  template <class Value>
  void select_candidates(const CandidateBlocks& candidates, const RowBounds& bounds, TopkIndices& out, bool threads,
                         Value&& value) {
    const int64_t num_sms = int64_t(sms_.size());
    const int64_t S = candidates.block_size;
#pragma omp parallel for schedule(dynamic, 1) if (threads)
    for (int64_t sm = 0; sm < num_sms; ++sm) {
      std::vector<float> compact;
      std::vector<int32_t> position;
      for (int64_t r = sm; r < out.rows; r += num_sms) {
        const int64_t len = bounds.end[size_t(r)] - bounds.start[size_t(r)];
        compact.clear();
        position.clear();
        for (int32_t c = 0; c < candidates.slots; ++c) {
          const int64_t block = candidates.row(r)[c];
          if (block < 0) continue;
          for (int64_t p = block * S; p < std::min((block + 1) * S, len); ++p) {
            compact.push_back(value(r, c, p));
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

  // The profile's reduction over the gathered entries, ReductionProgram::kBlock at a time.
  static void reduce(const ReductionProgram& program, const Profile& profile, const DecodeProblem& p, int64_t row,
                     const detail::GatheredColumns& g, const std::vector<float>& dots, std::vector<float>& values) {
    constexpr int kBlock = ReductionProgram::kBlock;
    const int32_t H = p.heads;
    const int64_t T = g.count;
    std::vector<float> block(size_t(H) * kBlock);
    // MXFP4 entries carry no K scale: their block scales are inside the dots.
    const float* scales = profile.applies_k_scale && !g.scales.empty() ? g.scales.data() : nullptr;
    for (int64_t t0 = 0; t0 < T; t0 += kBlock) {
      const int n = int(std::min<int64_t>(kBlock, T - t0));
      for (int32_t h = 0; h < H; ++h)
        std::copy_n(dots.data() + size_t(h) * T + size_t(t0), n, block.data() + size_t(h) * n);
      program.run(block.data(), p.weights.data() + size_t(row) * H, scales ? scales + t0 : nullptr, n,
                  values.data() + t0);
    }
  }

  CompactCandidatesDefects defects_;
  std::vector<RadixTopkSm> sms_;
};

}  // namespace

std::unique_ptr<IndexerOps> make_cpu_compact_candidates(const CompactCandidatesDefects& defects) {
  return std::make_unique<CompactCandidatesOps>(defects);
}

}  // namespace dsa::optimized
