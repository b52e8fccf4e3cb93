// Arithmetic profiles: how a named kernel turns per-head dot products into a
// logit, bit for bit (SPEC 8).
//
// A profile is data, composed of parts:
//   - the matrix-unit model that computes each head's q.k (mma::Model),
//   - the element formats it takes, the weight and logit precision (fp32/bf16),
//   - the per-head stage (optional scale before relu, relu, rounding),
//   - the head sum as a straight-line program of reduction steps (ReduceStep)
//     built by small builders (sequential fma chains, pairs, lane butterflies),
//     with the K scale applied where the kernel applies it.
// One evaluator runs every profile; no profile is a hand-written function.
#pragma once

#include <cstdint>
#include <memory>
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
    scale,     // dst = RN(reg[a] * s)       s = the token's K scale (in the program's precision)
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
// then, when per_head_round is bf16, r[h] = RN_bf16(r[h]).
struct HeadStage {
  bool scale_before_relu = false;
  Precision round_relu_to = Precision::fp32;
};

struct Profile {
  std::string name;
  std::string origin;  // where the order comes from and what is confirmed on hardware (SPEC 8)
  mma::Model mma = mma::Model::exact;
  std::vector<ElementFormat> elements;  // formats a kernel with this datapath takes
  Precision weights = Precision::fp32;  // weights must be representable in this precision
  Precision logits = Precision::fp32;   // logits are rounded to / stored in this precision
  bool applies_k_scale = true;          // false: block scales live inside the MMA (MXFP4)
  HeadStage head_stage;
  // Builds the head-sum program for H heads (the result is in the last step's dst).
  // H is one of 8, 16, 32, 64 (or any H the builder accepts; others throw InvalidInput("heads")).
  std::vector<ReduceStep> (*build_reduction)(int heads) = nullptr;
  uint32_t nan_bits = 0x7FFFFFFF;  // the NaN the kernel writes (GPUs 0x7FFFFFFF, x86 0xFFC00000)

  bool accepts(ElementFormat e) const;
  // Throws InvalidInput("profile", ...) naming the combination when e is not accepted.
  void require(ElementFormat e) const;
};

// The registry of named profiles: exact, deepgemm_sm90, deepgemm_sm100,
// deepgemm_sm100_bf16, aiter_gfx942_gluon, vllm_triton_c4a.
const Profile& find_profile(std::string_view name);  // throws InvalidInput("profile", ...)
std::vector<std::string> profile_names();

// Evaluates a profile's reduction for a block of tokens (structure of arrays):
// dots[h * count + t] are the per-head dot products of token t (already the
// model's fp32 values), weights[h], scales[t]; writes logits[t]. NaN results
// are written with the profile's nan_bits.
class ReductionProgram {
public:
  ReductionProgram(const Profile& profile, int heads);
  void run(const float* dots, const float* weights, const float* scales, int count, float* logits) const;
  int heads() const { return heads_; }
  static constexpr int kBlock = 64;  // tokens per run() call at most

private:
  const Profile* profile_;
  int heads_;
  int num_registers_;
  std::vector<ReduceStep> steps_;
};

// Builders the profiles compose (reference/src/profiles/reduction_builders.cpp).
namespace reduce {
// acc = +0, then acc = fma(w_h, r_h, acc) for h in order. Returns the register of the result.
int32_t fma_chain_from_zero(std::vector<ReduceStep>& prog, int32_t& next_reg, const std::vector<int>& heads);
// acc = fma(w_h0, r_h0, RN(w_h1 * r_h1)), then acc = fma(w_h, r_h, acc) for the rest (DeepGEMM SM90).
int32_t fma_chain_from_pair(std::vector<ReduceStep>& prog, int32_t& next_reg, const std::vector<int>& heads);
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

}  // namespace dsa
