// Model names, operand decoding into lanes, and the scalar entry points.
#include "dsa/mma/models.hpp"

#include <array>
#include <cmath>
#include <string>

#include "dsa/error.hpp"
#include "exact_sum.hpp"
#include "lanes.hpp"

namespace dsa::mma {
namespace {

struct ModelInfo {
  Model model;
  std::string_view name;
  int k;
  Fp8Format format;
  detail::Subnormals subnormals;
};

constexpr std::array<ModelInfo, 6> kModels{{
    {Model::exact, "exact", 32, Fp8Format::e4m3fn, detail::Subnormals::as_is},
    {Model::sm90_mma_sync_e4m3, "sm90_mma_sync_e4m3", 32, Fp8Format::e4m3fn, detail::Subnormals::normalised},
    {Model::sm90_wgmma_e4m3, "sm90_wgmma_e4m3", 32, Fp8Format::e4m3fn, detail::Subnormals::as_is},
    {Model::sm100_tcgen05_f8f6f4_e4m3, "sm100_tcgen05_f8f6f4_e4m3", 32, Fp8Format::e4m3fn, detail::Subnormals::as_is},
    {Model::cdna3_mfma_f32_16x16x32_fp8, "cdna3_mfma_f32_16x16x32_fp8", 32, Fp8Format::e4m3fnuz,
     detail::Subnormals::as_is},
    {Model::cdna3_mfma_f32_32x32x16_fp8, "cdna3_mfma_f32_32x32x16_fp8", 16, Fp8Format::e4m3fnuz,
     detail::Subnormals::as_is},
}};

const ModelInfo& info(Model m) {
  for (const auto& i : kModels)
    if (i.model == m) return i;
  throw InvalidInput("model", "unknown model id " + std::to_string(int(m)));
}

}  // namespace

std::string_view to_string(Model m) { return info(m).name; }

Model parse_model(std::string_view name) {
  for (const auto& i : kModels)
    if (i.name == name) return i.model;
  std::string known;
  for (const auto& i : kModels) known += (known.empty() ? "" : ", ") + std::string(i.name);
  throw InvalidInput("model", "unknown model '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<Model> all_models() {
  std::vector<Model> out;
  for (const auto& i : kModels) out.push_back(i.model);
  return out;
}

int instruction_k(Model m) { return info(m).k; }
Fp8Format operand_format(Model m) { return info(m).format; }

namespace detail {

// Where lane order puts code k of a slice (kernels.hpp): the sets the
// datapath sums apart become contiguous runs.
int lane_of(Model m, int k) {
  switch (m) {
    case Model::sm90_mma_sync_e4m3: {  // HMMA 1 takes k mod 4 in {0, 1}, HMMA 2 the rest
      const int r = k % 32, pair = (r / 4) * 2 + (r % 2);
      return k - r + ((r % 4) < 2 ? pair : 16 + pair);
    }
    case Model::cdna3_mfma_f32_16x16x32_fp8:
    case Model::cdna3_mfma_f32_32x32x16_fp8: {  // per group of 16: even k, then odd k
      const int r = k % 16;
      return k - r + (r % 2 ? 8 + r / 2 : r / 2);
    }
    default:
      return k;
  }
}

const OperandTable& model_operands(Model m, ZeroOperands zeros) {
  const ModelInfo& mi = info(m);
  return operand_table(mi.format, mi.subnormals, zeros);
}

void require_k_len(Model m, int64_t k_len) {
  const int k = instruction_k(m);
  if (k_len <= 0 || k_len % k != 0)
    throw InvalidInput("k_len", std::to_string(k_len) + " is not a positive multiple of " + std::to_string(k) +
                                    " (the K of one " + std::string(to_string(m)) + " instruction)");
}

void decode_lanes(Model m, const uint8_t* codes, int k_len, DecodedVector& out, ZeroOperands zeros) {
  const ModelInfo& mi = info(m);
  const OperandTable& t = model_operands(m, zeros);
  out.mag.resize(size_t(k_len));
  out.neg.resize(size_t(k_len));
  out.exp.resize(size_t(k_len));
  out.slice_has_nan.assign(size_t(k_len / mi.k), 0);
  for (int k = 0; k < k_len; ++k) {
    const uint8_t code = codes[k];
    const int lane = lane_of(m, k);
    out.mag[size_t(lane)] = t.mag[code];
    out.neg[size_t(lane)] = t.neg[code];
    out.exp[size_t(lane)] = t.exp[code];
    out.slice_has_nan[size_t(k / mi.k)] |= t.nan[code];
  }
}

float run_instruction(Model m, const Lanes& a, const Lanes& b, bool nan_operand, int slice, float c, bool use_c) {
  return with_policy(m, [&](auto policy) {
    using P = decltype(policy);
    return step_with_nan<P>(a, b, nan_operand, slice * P::kK, c, use_c);
  });
}

float model_nan(Model m) {
  return m == Model::exact ? quiet_nan() : with_policy(m, [](auto policy) { return decltype(policy)::nan(); });
}

float run_chain(Model m, const DecodedVector& a, const DecodedVector& b, int k_len, float c, bool use_c) {
  return with_policy(m, [&](auto policy) {
    using P = decltype(policy);
    return chain_lanes<P>(a.lanes(), a.slice_has_nan.data(), b.lanes(), b.slice_has_nan.data(), k_len / P::kK, c,
                          use_c);
  });
}

float exact_dot(Fp8Format format, const uint8_t* a, const uint8_t* b, int64_t k_len, float c, bool use_c) {
  const OperandTable& t = operand_table(format, Subnormals::as_is);
  if (use_c && !std::isfinite(c)) {
    for (int64_t k = 0; k < k_len; ++k)
      if (t.nan[a[k]] || t.nan[b[k]]) return quiet_nan();
    return c;
  }
  ExactSum sum;
  uint64_t acc = 0;  // two's complement; flushed before it could overflow
  for (int64_t k = 0; k < k_len; ++k) {
    if (t.nan[a[k]] || t.nan[b[k]]) return quiet_nan();
    const uint64_t p = uint64_t(t.mag[a[k]]) * t.mag[b[k]], n = t.neg[a[k]] ^ t.neg[b[k]];
    acc += (p ^ n) - n;
    if ((k & 0xffff) == 0xffff) {
      sum.add(int64_t(acc), -kProductShift);
      acc = 0;
    }
  }
  sum.add(int64_t(acc), -kProductShift);
  if (use_c && c != 0.0f) {
    const Fp32Parts cp = split_fp32(c);
    sum.add(cp.neg ? -int64_t(cp.sig) : int64_t(cp.sig), cp.exp);
  }
  return sum.round(Rounding::nearest_even);
}

}  // namespace detail

namespace {

float scalar_chain(Model m, const uint8_t* a, const uint8_t* b, int k_len, float c, bool use_c) {
  detail::require_k_len(m, k_len);
  if (m == Model::exact) return detail::exact_dot(Fp8Format::e4m3fn, a, b, k_len, c, use_c);
  thread_local detail::DecodedVector da, db;
  detail::decode_lanes(m, a, k_len, da);
  detail::decode_lanes(m, b, k_len, db);
  return detail::run_chain(m, da, db, k_len, c, use_c);
}

}  // namespace

float instruction(Model m, const uint8_t* a, const uint8_t* b, float c, bool use_c) {
  return scalar_chain(m, a, b, instruction_k(m), c, use_c);
}

float chain(Model m, const uint8_t* a, const uint8_t* b, int k_len) {
  return scalar_chain(m, a, b, k_len, 0.0f, false);
}

float chain_from(Model m, const uint8_t* a, const uint8_t* b, int k_len, float c) {
  return scalar_chain(m, a, b, k_len, c, true);
}

}  // namespace dsa::mma
