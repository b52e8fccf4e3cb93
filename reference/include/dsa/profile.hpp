// Arithmetic profiles: how a named kernel turns per-head dot products into a
// logit, bit for bit (SPEC 8).
//
// A profile is data, composed of parts:
//   - the matrix-unit models that compute each head's q.k (mma::Model: one for
//     fp8 entries, one for MXFP4 entries),
//   - the element formats it takes, the weight and logit precision (fp32/bf16),
//   - the per-head stage (optional scale before relu, relu, rounding),
//   - the head sum as a straight-line program of reduction steps (ReduceStep)
//     built by small builders (sequential fma chains, pairs, lane butterflies),
//     with the K scale applied where the kernel applies it.
// One evaluator runs every profile; no profile is a hand-written function.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dsa/kcache.hpp"
#include "dsa/mma/models.hpp"

namespace dsa {

enum class Precision : uint8_t { fp32, bf16 };

// One step of the head-sum program. Registers are numbered; every step writes
// register `dst` (a fresh one), reading registers `a`, `b` written before.
// "RN" rounds to the program's precision (fp32, or bf16 for bf16 profiles).
struct ReduceStep {
  enum class Op : uint8_t {
    zero,      // dst = +0
    product,   // dst = RN(w[head] * r[head])
    fma,       // dst = RN(w[head] * r[head] + reg[a])   (one rounding)
    add,       // dst = RN(reg[a] + reg[b])
    scale,     // dst = RN(reg[a] * s)       s = the token's K scale rounded to the program's
               //                            precision; dst = reg[a] when the entry has no K scale
  };
  Op op = Op::zero;
  int32_t dst = 0;
  int32_t a = -1;
  int32_t b = -1;
  int32_t head = -1;
};

// The per-head stage before the sum: r[h] = relu(v[h]) with
//   v[h] = dot[h]                   (scale_before_relu = false)
//   v[h] = RN(dot[h] * s)           (scale_before_relu = true, AITER's order)
// then, when round_relu_to is bf16, r[h] = RN_bf16(r[h]) (cvt.rn.relu.bf16x2.f32).
// relu(-0) = +0. relu(NaN) is 0 on GPUs (fmaxf / maxnum return the non-NaN
// operand); relu_propagates_nan = true keeps the NaN instead (torch.relu).
struct HeadStage {
  bool scale_before_relu = false;
  Precision round_relu_to = Precision::fp32;
  bool relu_propagates_nan = false;
};

struct Profile {
  std::string name;
  std::string origin;  // where the order comes from and what is confirmed on hardware (SPEC 8)
  mma::Model mma = mma::Model::exact;        // q.k of fp8 entries
  mma::Model mma_mxfp4 = mma::Model::exact;  // q.k of MXFP4 entries: a block-scaled model, or exact
  // How the D / K instructions of one dot join (K = the instruction's depth): chained inside the matrix
  // unit, or promoted (each from zero, RN-added into fp32 in step order: RN(RN(RN(d_0 + d_1) + d_2) + d_3)
  // at D = 128). Model::exact has one rounding: it is always chained.
  mma::Accumulation accumulation = mma::Accumulation::chained;
  std::vector<ElementFormat> elements;       // formats a kernel with this datapath takes
  Precision weights = Precision::fp32;  // weights must be representable in this precision
  Precision logits = Precision::fp32;   // logits are rounded to / stored in this precision
  // The kernel multiplies by the entry's K scale where the entry has one (fp8).
  // MXFP4 entries have none: their block scales live inside the MMA, and the
  // logits code passes no scales (or unit scales) for them. false: never.
  bool applies_k_scale = true;
  HeadStage head_stage;
  // Builds the head-sum program for H heads (the result is in the last step's dst).
  // H is one of 8, 16, 32, 64 (or any H the builder accepts; others throw InvalidInput("heads")).
  std::vector<ReduceStep> (*build_reduction)(int heads) = nullptr;
  uint32_t nan_bits = 0x7FFFFFFF;  // the NaN the kernel writes (GPUs 0x7FFFFFFF, x86 0xFFC00000)
  // The arithmetic of the head-sum program ("RN" above); the result is then
  // rounded to `logits` (exact when both are the same).
  Precision reduce = Precision::fp32;
  // The order in which the kernel's instruction chain consumes the D dims of
  // each q . k: chain slot i reads dim dim_order(D)[i] (a permutation of
  // [0, D)). Null: in order. Matters for models whose groups round (CDNA3);
  // throws InvalidInput("head_dim", ...) for a D the kernel does not take.
  std::vector<int32_t> (*dim_order)(int head_dim) = nullptr;

  bool accepts(ElementFormat e) const;
  // The model that computes q.k of entries in format e.
  mma::Model mma_for(ElementFormat e) const { return e == ElementFormat::mxfp4 ? mma_mxfp4 : mma; }
  // Throws InvalidInput("profile", ...) naming the combination when e is not accepted.
  void require(ElementFormat e) const;
  // Throws InvalidInput("weights", ...) naming the first weight that is not
  // representable in `weights` precision (weights[i], with its row and head for `heads` > 0).
  void require_weights(std::span<const float> weights, int heads = 0) const;
};

// The registry of named profiles: exact, deepgemm_sm90, deepgemm_sm100,
// deepgemm_sm100_bf16, aiter_gfx942_gluon, dsa_gfx942, vllm_triton_c4a,
// dsa_sm90, dsa_sm90_accurate.
const Profile& find_profile(std::string_view name);  // throws InvalidInput("profile", ...)
std::vector<std::string> profile_names();
// Whether a and b compute the same bits on every input, whatever their names: the same models,
// accumulation, element formats, precisions, K scale and head stage, NaN bits, D order (D 32 to 512)
// and head-sum program at every H from 1 to 256 (both refusing an H counts as the same). dsa_sm90 is
// deepgemm_sm90's datapath, so a kernel claiming one may be judged against cases of the other.
bool same_arithmetic(const Profile& a, const Profile& b);

// Evaluates a profile's reduction for a block of tokens (structure of arrays):
// dots[h * count + t] are the per-head dot products of token t (already the
// model's fp32 values), weights[h], scales[t]; writes logits[t]. NaN results
// are written with the profile's nan_bits. scales may be null: no K scale
// (MXFP4), every `scale` step passes its operand through.
//
// The constructor validates the program (every register written once, before
// it is read; heads in [0, H); the result is the last step's dst), drops steps
// whose value never reaches the result, and maps the registers onto a few
// reused slots. run() is step-major: each step is one loop over the tokens.
// bf16 programs round every step once, exactly (no double rounding through
// fp32 or double). Throws InvalidInput("heads", ...) for an H the profile's
// builder does not take and InvalidInput("profile", ...) for a malformed program.
class ReductionProgram {
public:
  ReductionProgram(const Profile& profile, int heads);
  // Throws InvalidInput("count", ...) outside [0, kBlock] and, for bf16 weight
  // profiles, InvalidInput("weights", ...) for a weight that is not a bf16 value.
  void run(const float* dots, const float* weights, const float* scales, int count, float* logits) const;
  int heads() const { return heads_; }
  // The validated program after dead-step removal (registers as built).
  const std::vector<ReduceStep>& steps() const { return steps_; }
  int num_slots() const { return num_slots_; }
  static constexpr int kBlock = 64;      // tokens per run() call at most
  static constexpr int kMaxSlots = 128;  // live registers at once at most

private:
  Profile profile_;  // a copy: a program never depends on the lifetime of the profile it came from
  int heads_;
  int num_registers_;
  std::vector<ReduceStep> steps_;
  std::vector<int32_t> slot_a_, slot_b_, slot_dst_;  // per step, -1 when unused
  int num_slots_ = 0;
};

// Builders the profiles compose (reference/src/profiles/reduction_builders.cpp).
namespace reduce {
// acc = +0, then acc = fma(w_h, r_h, acc) for h in order. Returns the register of the result.
int32_t fma_chain_from_zero(std::vector<ReduceStep>& prog, int32_t& next_reg, const std::vector<int>& heads);
// acc = fma(w_h0, r_h0, RN(w_h1 * r_h1)), then acc = fma(w_h, r_h, acc) for the rest (DeepGEMM SM90).
int32_t fma_chain_from_pair(std::vector<ReduceStep>& prog, int32_t& next_reg, const std::vector<int>& heads);
// acc = RN(w_h0 * r_h0), then acc = fma(w_h, r_h, acc) for the rest (a contracted
// sequential sum whose first term is a plain product).
int32_t fma_chain_from_product(std::vector<ReduceStep>& prog, int32_t& next_reg, const std::vector<int>& heads);
// A register holding RN(w_h * r_h).
int32_t product(std::vector<ReduceStep>& prog, int32_t& next_reg, int head);
// acc = RN(w_h0*r_h0), then acc = RN(acc + RN(w_h*r_h)) (no contraction).
int32_t mul_add_chain(std::vector<ReduceStep>& prog, int32_t& next_reg, const std::vector<int>& heads);
int32_t add(std::vector<ReduceStep>& prog, int32_t& next_reg, int32_t a, int32_t b);
int32_t scale(std::vector<ReduceStep>& prog, int32_t& next_reg, int32_t a);
// Butterfly over lanes: values[i] hold lane i's partial; at each distance d in
// `distances` lane i takes RN(v[i] + v[i ^ d]) (the lower lane's value first).
// Returns the register of lane 0's final value.
int32_t butterfly(std::vector<ReduceStep>& prog, int32_t& next_reg, std::vector<int32_t> lanes,
                  const std::vector<int>& distances);
}  // namespace reduce

// DeepGEMM SM90's head sum (the deepgemm_sm90 profile's program, built in
// profiles/deepgemm.cpp), with the place of the K scale as a parameter so that
// the mutant that moves it (fuzz/src/mutants_logits.cpp) reuses the builder.
enum class Sm90KScale : uint8_t {
  lane_sum,         // the kernel: P_q = RN(RN(S_even + S_odd) * s)
  parity_partials,  // the bug: P_q = RN(RN(S_even * s) + RN(S_odd * s)) (the same as lane_sum for H = 8)
};
// Throws InvalidInput("heads", ...) unless heads is a positive multiple of 8.
std::vector<ReduceStep> deepgemm_sm90_reduction(int heads, Sm90KScale k_scale = Sm90KScale::lane_sum);

}  // namespace dsa
