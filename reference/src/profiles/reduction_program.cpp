// The one evaluator of every profile's head-sum program (profile.hpp).
//
// Construction checks the program, keeps only the steps the result depends
// on, and maps its single-assignment registers onto reused slots so that the
// working set of a block stays in L1. run() executes step by step over the
// block's tokens; every inner loop is a plain loop over t that the compiler
// vectorises (std::fma becomes vfmadd with -march=native).
#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "bf16_exact.hpp"
#include "dsa/error.hpp"
#include "dsa/profile.hpp"

namespace dsa {
namespace {

using Op = ReduceStep::Op;
constexpr int kBlock = ReductionProgram::kBlock;

bool reads_head(Op op) { return op == Op::product || op == Op::fma; }
bool reads_a(Op op) { return op == Op::fma || op == Op::add || op == Op::scale; }
bool reads_b(Op op) { return op == Op::add; }

[[noreturn]] void bad_program(const Profile& profile, int heads, size_t step, const std::string& what) {
  throw InvalidInput("profile", profile.name + " (H = " + std::to_string(heads) + "): reduction step " +
                                    std::to_string(step) + " " + what);
}

// The per-head stage r = relu(v) of SPEC 8 with the profile's options, for one block.
struct HeadValues {
  const float* dots;
  const float* scales;  // null: no K scale
  int count;
  HeadStage stage;
  Precision precision;

  void load(int head, float* r) const {
    const float* d = dots + size_t(head) * size_t(count);
    for (int t = 0; t < count; ++t) r[t] = d[t];
    if (stage.scale_before_relu && scales) {
      if (precision == Precision::fp32) {
        for (int t = 0; t < count; ++t) r[t] = r[t] * scales[t];
      } else {
        for (int t = 0; t < count; ++t) r[t] = detail::bf16_round(double(r[t]) * double(detail::bf16_of(scales[t])));
      }
    }
    if (stage.relu_propagates_nan) {
      for (int t = 0; t < count; ++t) r[t] = (r[t] > 0.0f || std::isnan(r[t])) ? r[t] : 0.0f;
    } else {
      for (int t = 0; t < count; ++t) r[t] = r[t] > 0.0f ? r[t] : 0.0f;  // NaN and -0 -> +0, as fmaxf
    }
    if (stage.round_relu_to == Precision::bf16)
      for (int t = 0; t < count; ++t) r[t] = detail::bf16_of(r[t]);
  }
};

void run_fp32(Op op, float w, const float* r, const float* a, const float* b, const float* s, int n, float* dst) {
  switch (op) {
    case Op::zero:
      for (int t = 0; t < n; ++t) dst[t] = 0.0f;
      break;
    case Op::product:
      for (int t = 0; t < n; ++t) dst[t] = w * r[t];
      break;
    case Op::fma:
      for (int t = 0; t < n; ++t) dst[t] = std::fma(w, r[t], a[t]);
      break;
    case Op::add:
      for (int t = 0; t < n; ++t) dst[t] = a[t] + b[t];
      break;
    case Op::scale:
      if (s) {
        for (int t = 0; t < n; ++t) dst[t] = a[t] * s[t];
      } else if (dst != a) {
        std::copy(a, a + n, dst);
      }
      break;
  }
}

// bf16 operands are exact in double and their products too, so each step
// below is one exact operation followed by one rounding.
void run_bf16(Op op, float w, const float* r, const float* a, const float* b, const float* s, int n, float* dst) {
  using detail::bf16_round;
  using detail::bf16_sum;
  const double wd = w;
  switch (op) {
    case Op::zero:
      for (int t = 0; t < n; ++t) dst[t] = 0.0f;
      break;
    case Op::product:
      for (int t = 0; t < n; ++t) dst[t] = bf16_round(wd * double(r[t]));
      break;
    case Op::fma:
      for (int t = 0; t < n; ++t) dst[t] = bf16_sum(wd * double(r[t]), double(a[t]));
      break;
    case Op::add:
      for (int t = 0; t < n; ++t) dst[t] = bf16_sum(double(a[t]), double(b[t]));
      break;
    case Op::scale:
      if (s) {
        for (int t = 0; t < n; ++t) dst[t] = bf16_round(double(a[t]) * double(detail::bf16_of(s[t])));
      } else if (dst != a) {
        std::copy(a, a + n, dst);
      }
      break;
  }
}

}  // namespace

ReductionProgram::ReductionProgram(const Profile& profile, int heads) : profile_(profile), heads_(heads) {
  if (!profile.build_reduction) throw InvalidInput("profile", profile.name + " has no reduction program");
  if (heads <= 0) throw InvalidInput("heads", std::to_string(heads) + " heads");
  std::vector<ReduceStep> program = profile.build_reduction(heads);
  if (program.empty()) bad_program(profile, heads, 0, "missing: the program is empty");

  // Single assignment, operands written before they are read, heads in range.
  int32_t registers = 0;
  for (const ReduceStep& s : program) registers = std::max({registers, s.dst + 1, s.a + 1, s.b + 1});
  std::vector<int64_t> written_at(size_t(registers), -1);
  for (size_t i = 0; i < program.size(); ++i) {
    const ReduceStep& s = program[i];
    if (s.dst < 0) bad_program(profile, heads, i, "writes register " + std::to_string(s.dst));
    if (written_at[size_t(s.dst)] >= 0)
      bad_program(profile, heads, i, "writes register " + std::to_string(s.dst) + " again (first written by step " +
                                         std::to_string(written_at[size_t(s.dst)]) + ")");
    const auto check_read = [&](int32_t reg, const char* name) {
      if (reg < 0 || reg >= registers || written_at[size_t(reg)] < 0)
        bad_program(profile, heads, i, std::string("reads register ") + name + " = " + std::to_string(reg) +
                                           " before it is written");
    };
    if (reads_a(s.op)) check_read(s.a, "a");
    if (reads_b(s.op)) check_read(s.b, "b");
    if (reads_head(s.op) && (s.head < 0 || s.head >= heads))
      bad_program(profile, heads, i, "reads head " + std::to_string(s.head) + " outside [0, " +
                                         std::to_string(heads) + ")");
    written_at[size_t(s.dst)] = int64_t(i);
  }
  num_registers_ = registers;

  // Keep the steps the result (the last step) depends on.
  std::vector<char> live_reg(size_t(registers), 0), keep(program.size(), 0);
  live_reg[size_t(program.back().dst)] = 1;
  for (size_t i = program.size(); i-- > 0;) {
    const ReduceStep& s = program[i];
    if (!live_reg[size_t(s.dst)]) continue;
    keep[i] = 1;
    if (reads_a(s.op)) live_reg[size_t(s.a)] = 1;
    if (reads_b(s.op)) live_reg[size_t(s.b)] = 1;
  }
  for (size_t i = 0; i < program.size(); ++i)
    if (keep[i]) steps_.push_back(program[i]);

  // Slots: a register's slot is freed after its last read. A step may write
  // the slot of an operand it reads last (element-wise: read before write).
  std::vector<int64_t> last_read(size_t(registers), -1);
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (reads_a(steps_[i].op)) last_read[size_t(steps_[i].a)] = int64_t(i);
    if (reads_b(steps_[i].op)) last_read[size_t(steps_[i].b)] = int64_t(i);
  }
  std::vector<int32_t> slot_of(size_t(registers), -1), free_slots;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const ReduceStep& s = steps_[i];
    const int32_t a = reads_a(s.op) ? slot_of[size_t(s.a)] : -1;
    const int32_t b = reads_b(s.op) ? slot_of[size_t(s.b)] : -1;
    if (a >= 0 && last_read[size_t(s.a)] == int64_t(i)) free_slots.push_back(a);
    if (b >= 0 && b != a && last_read[size_t(s.b)] == int64_t(i)) free_slots.push_back(b);
    int32_t d;
    if (!free_slots.empty()) {
      d = free_slots.back();
      free_slots.pop_back();
    } else {
      d = num_slots_++;
    }
    if (num_slots_ > kMaxSlots)
      bad_program(profile, heads, i, "needs more than " + std::to_string(kMaxSlots) + " live registers");
    slot_of[size_t(s.dst)] = d;
    slot_a_.push_back(a);
    slot_b_.push_back(b);
    slot_dst_.push_back(d);
  }
}

void ReductionProgram::run(const float* dots, const float* weights, const float* scales, int count,
                           float* logits) const {
  if (count < 0 || count > kBlock)
    throw InvalidInput("count", std::to_string(count) + " tokens in one block (at most " + std::to_string(kBlock) + ")");
  if (count == 0) return;
  const Profile& p = profile_;
  if (p.weights == Precision::bf16) p.require_weights(std::span<const float>(weights, size_t(heads_)));
  if (!p.applies_k_scale) scales = nullptr;

  alignas(64) float slots[kMaxSlots][kBlock];
  alignas(64) float r[kBlock];
  const HeadValues head_values{dots, scales, count, p.head_stage, p.reduce};
  const auto step_fn = p.reduce == Precision::fp32 ? run_fp32 : run_bf16;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const ReduceStep& s = steps_[i];
    float w = 0.0f;
    if (reads_head(s.op)) {
      head_values.load(s.head, r);
      w = weights[s.head];
    }
    step_fn(s.op, w, r, slot_a_[i] >= 0 ? slots[slot_a_[i]] : nullptr, slot_b_[i] >= 0 ? slots[slot_b_[i]] : nullptr,
            scales, count, slots[slot_dst_[i]]);
  }

  const float* result = slots[slot_dst_.back()];
  const float nan = std::bit_cast<float>(p.nan_bits);
  const bool to_bf16 = p.logits == Precision::bf16 && p.reduce != Precision::bf16;
  for (int t = 0; t < count; ++t) {
    float v = to_bf16 ? detail::bf16_of(result[t]) : result[t];
    logits[t] = std::isnan(v) ? nan : v;
  }
}

}  // namespace dsa
