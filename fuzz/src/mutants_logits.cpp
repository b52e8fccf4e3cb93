// Logits mutants: the reference run on the problem (or with the profile) that
// the buggy kernel effectively computes, so that the wrong bits are the ones
// the bug gives, and only on the inputs that trigger it.
#include <algorithm>
#include <stdexcept>

#include "dsa/error.hpp"
#include "mutant_ops.hpp"

namespace dsa::fuzz::detail {

namespace {

// Reads the problem the kernel sees; nullopt-like `false` when the bug does
// not trigger on it (then the reference runs unchanged).
class ProblemBug : public ForwardingOps {
public:
  using ForwardingOps::ForwardingOps;
  void decode_logits(const DecodeProblem& p, const Profile& profile, Logits& out) override {
    DecodeProblem seen = p;
    if (distort(seen))
      inner().decode_logits(seen, profile, out);
    else
      inner().decode_logits(p, profile, out);
  }

protected:
  virtual bool distort(DecodeProblem& p) const = 0;
};

// 1-D lengths L - next_n + j instead of + 1: every row one entry short (with
// a compress ratio, short when the token count crosses a multiple of it).
class VisibleLenOffByOne final : public ProblemBug {
public:
  using ProblemBug::ProblemBug;
  bool distort(DecodeProblem& p) const override {
    if (p.seq_lens_2d) return false;
    for (int32_t& len : p.seq_lens) len = std::max(0, len - 1);
    return true;
  }
};

// An e4m3fnuz byte decoded with bias 7 reads as twice its value (SPEC 2), so
// every q.k is 4 times too large. Scaling the weights by 4 instead gives the
// same bits: powers of two commute with every rounding of the head sum (up to
// overflow); only codes 0x7f/0xff/0x80, whose meaning differs, are not copied.
class FnuzBias7 final : public ProblemBug {
public:
  using ProblemBug::ProblemBug;
  bool distort(DecodeProblem& p) const override {
    if (p.element != ElementFormat::e4m3fnuz) return false;
    for (float& w : p.weights) w *= 4.0f;
    return true;
  }
};

// The preshuffle reader with the roles of t % 16 and d % 16 swapped: element
// (t, d) is read from byte (t/16)*16*D + (d/16)*256 + (d%16)*16 + t%16. The
// cache handed to the reference holds at each right place the byte the buggy
// reader would take.
class PreshuffleSwapped final : public ProblemBug {
public:
  using ProblemBug::ProblemBug;
  bool distort(DecodeProblem& p) const override {
    PagedKCache& c = p.cache;
    if (c.layout != CacheLayout::preshuffle) return false;
    const size_t page = c.page_bytes();
    const std::vector<uint8_t> original = c.bytes;
    for (int32_t pg = 0; pg < c.num_pages; ++pg)
      for (int32_t t = 0; t < c.block_size; ++t)
        for (int32_t d = 0; d < c.head_dim; ++d) {
          const size_t swapped = size_t(t / 16) * 16 * size_t(c.head_dim) + size_t(d / 16) * 256 +
                                 size_t(d % 16) * 16 + size_t(t % 16);
          c.bytes[size_t(pg) * page + c.value_offset(t, d)] = original[size_t(pg) * page + swapped];
        }
    return true;
  }
};

// vLLM's metadata builder's row lengths for padded steps (SPEC 5, suspected).
class VllmPaddedLengths final : public ProblemBug {
public:
  using ProblemBug::ProblemBug;
  bool distort(DecodeProblem& p) const override {
    if (p.decode_lens.empty()) return false;
    p.padded_lengths = PaddedLengths::vllm_padded;
    return true;
  }
};

// AITER with next_n > 1: each 256-entry tile is masked with the request's
// context length instead of the row's, so row j keeps the logits of the
// next_n - 1 - j newest entries, positions L_r .. ctx - 1, finite instead of -inf.
class TailLeftFinite final : public ProblemBug {
public:
  using ProblemBug::ProblemBug;
  bool distort(DecodeProblem& p) const override {
    if (p.seq_lens_2d || p.next_n < 2 || !p.decode_lens.empty()) return false;
    std::vector<int32_t> ctx;
    for (int64_t r = 0; r < p.rows(); ++r) ctx.push_back(int32_t(candidate_row_end(p, r)));
    p.seq_lens = std::move(ctx);
    p.seq_lens_2d = true;
    return true;
  }
};

// DeepGEMM #342/#353: with every context length 0 the schedule's binary
// search lands on q_idx == batch_size and reads prefix_sum[batch_size], past
// its shared-memory array: an illegal memory access that kills the launch.
// Re-created as the fault itself, without the undefined behaviour.
class ScheduleAllEmpty final : public ForwardingOps {
public:
  using ForwardingOps::ForwardingOps;
  void decode_logits(const DecodeProblem& p, const Profile& profile, Logits& out) override {
    p.validate();
    bool any_work = false;
    for (int64_t r = 0; r < p.rows() && !any_work; ++r) any_work = candidate_row_end(p, r) > 0;
    if (!any_work)
      throw std::runtime_error(
          "device fault (emulated): illegal memory access in the paged MQA logits schedule, which read "
          "prefix_sum[batch_size] because every context length is 0");
    inner().decode_logits(p, profile, out);
  }
};

// DeepGEMM SM90 with the K scale applied to each parity partial instead of
// the lane's partial: RN(RN(S_even * s) + RN(S_odd * s)) for
// RN(RN(S_even + S_odd) * s). Equal in exact arithmetic; the roundings differ
// unless s is a power of two (ue8m0 scales) or H = 8 (one partial per lane).
class ScaleOnWrongPartial final : public ForwardingOps {
public:
  explicit ScaleOnWrongPartial(std::string name) : ForwardingOps(std::move(name)) {
    mutated_ = find_profile("deepgemm_sm90");
    mutated_.build_reduction = [](int heads) { return deepgemm_sm90_reduction(heads, Sm90KScale::parity_partials); };
  }
  void decode_logits(const DecodeProblem& p, const Profile& profile, Logits& out) override {
    inner().decode_logits(p, profile.name == "deepgemm_sm90" ? mutated_ : profile, out);
  }

private:
  Profile mutated_;
};

}  // namespace

std::vector<Mutant> logits_mutants() {
  std::vector<Mutant> m;
  m.push_back(mutant<VisibleLenOffByOne>(
      "visible_len_off_by_one",
      "Classic (SPEC 10): the 1-D row length L - next_n + j instead of L - next_n + j + 1; each row's newest "
      "entry is masked to -inf. 2-D lengths are taken as given and unaffected.",
      property::kLogitsAgree));
  m.push_back(mutant<FnuzBias7>(
      "fnuz_decoded_with_bias_7",
      "Classic (SPEC 2): e4m3fnuz codes decoded with the e4m3fn bias 7 instead of 8, every value twice too large "
      "and every logit 4 times; e4m3fn and MXFP4 steps are unaffected.",
      property::kLogitsAgree));
  m.push_back(mutant<PreshuffleSwapped>(
      "preshuffle_t_d_swapped",
      "Classic (SPEC 3): the gfx942 preshuffle reader with t % 16 and d % 16 swapped inside each 16 x 16 tile; "
      "block-flat caches are unaffected.",
      property::kLogitsAgree));
  m.push_back(mutant<ScaleOnWrongPartial>(
      "sm90_scale_on_parity_partials",
      "Classic (SPEC 8, scale applied to the wrong partial): DeepGEMM SM90's K scale multiplies the even and odd "
      "head partials before they are added instead of the lane's sum; off by a rounding, invisible with "
      "power-of-two (ue8m0) scales and with H = 8.",
      property::kLogitsAgree));
  m.push_back(mutant<VllmPaddedLengths>(
      "vllm_padded_row_lengths",
      "SPEC 5 (suspected): vLLM's metadata builder gives row j of a padded request max(0, L - Lmax + 1 + j) "
      "entries, Lmax - d_b short of the causal length; unpadded steps are unaffected.",
      property::kPaddedEqualsUnpadded));
  m.push_back(mutant<TailLeftFinite>(
      "aiter_tail_past_row_finite",
      "AITER, block 256 with next_n > 1 (SPEC 10): positions L_r .. ctx - 1 of rows j < next_n - 1 are left finite "
      "(the logits of entries the row must not see) where the kernel promises -inf; a consumer reading past L_r "
      "(the candidate ops read up to E_r = ctx) picks them.",
      property::kLogitsAgreeClean));
  m.push_back(mutant<ScheduleAllEmpty>(
      "deepgemm_schedule_oob_all_empty",
      "DeepGEMM #342 / PR #353 (SPEC 10): when every context length is 0 (warm-up at compress ratio 4), the paged "
      "MQA logits schedule reads prefix_sum[batch_size] out of bounds and the launch dies with an illegal memory "
      "access; any batch with work is computed correctly.",
      property::kLogitsAgree));
  return m;
}

}  // namespace dsa::fuzz::detail
