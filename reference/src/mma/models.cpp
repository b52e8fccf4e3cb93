// Model names and shapes from the registry, and the scalar entry points.
#include "dsa/mma/models.hpp"

#include <array>
#include <cmath>
#include <string>

#include "dsa/error.hpp"
#include "exact_sum.hpp"
#include "lanes.hpp"

namespace dsa::mma {
namespace {

struct Info {
  Model model;
  std::string_view name;
  std::string_view instruction;
  int k;
  Operands operands;
};

template <class... T>
constexpr std::array<Info, sizeof...(T) + 1> make_infos(detail::ModelList<T...>) {
  return {{{Model::exact, "exact", "", 32, Operands::e4m3fn},
           {T::kModel, T::kName, T::kInstruction, T::kK, T::kOperands}...}};
}

constexpr auto kInfos = make_infos(detail::Registry{});

const Info& info(Model m) {
  for (const auto& i : kInfos)
    if (i.model == m) return i;
  throw InvalidInput("model", "unknown model id " + std::to_string(int(m)));
}

std::string block_scaled_error(Model m) {
  return std::string(to_string(m)) + " is block-scaled (MXFP4): use instruction_mxfp4 or chain_dots_mxfp4";
}

}  // namespace

std::string_view to_string(Model m) { return info(m).name; }

std::string_view to_string(Operands o) {
  switch (o) {
    case Operands::e4m3fn:
      return "e4m3fn";
    case Operands::e4m3fnuz:
      return "e4m3fnuz";
    case Operands::mxfp4:
      return "mxfp4";
  }
  return "?";
}

std::string_view to_string(Accumulation a) { return a == Accumulation::chained ? "chained" : "promoted"; }

Model parse_model(std::string_view name) {
  for (const auto& i : kInfos)
    if (i.name == name) return i.model;
  std::string known;
  for (const auto& i : kInfos) known += (known.empty() ? "" : ", ") + std::string(i.name);
  throw InvalidInput("model", "unknown model '" + std::string(name) + "' (known: " + known + ")");
}

std::vector<Model> all_models() {
  std::vector<Model> out;
  for (const auto& i : kInfos) out.push_back(i.model);
  return out;
}

std::string_view instruction_name(Model m) { return info(m).instruction; }
int instruction_k(Model m) { return info(m).k; }
Operands operands(Model m) { return info(m).operands; }

Fp8Format operand_format(Model m) {
  const Operands o = operands(m);
  if (o == Operands::mxfp4) throw InvalidInput("model", block_scaled_error(m));
  return detail::fp8_format_of(o);
}

namespace detail {

void require_k_len(Model m, int64_t k_len) {
  const int k = instruction_k(m);
  if (k_len <= 0 || k_len % k != 0)
    throw InvalidInput("k_len", std::to_string(k_len) + " is not a positive multiple of " + std::to_string(k) +
                                    " (the K of one " + std::string(to_string(m)) + " instruction)");
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

void require_chained_for_exact(Model m, Accumulation acc) {
  if (m == Model::exact && acc != Accumulation::chained)
    throw InvalidInput("accumulation", "exact is one rounding of the exact sum: it has no instructions to promote");
}

float scalar_chain(Model m, const uint8_t* a, const uint8_t* b, int k_len, float c, bool use_c, Accumulation acc) {
  detail::require_k_len(m, k_len);
  require_chained_for_exact(m, acc);
  if (m == Model::exact) return detail::exact_dot(Fp8Format::e4m3fn, a, b, k_len, c, use_c);
  return detail::with_model(m, [&](auto trait) -> float {
    using T = decltype(trait);
    if constexpr (T::kOperands == Operands::mxfp4) {
      throw InvalidInput("model", block_scaled_error(m));
    } else {
      thread_local detail::DecodedVector da, db;
      detail::decode_lanes<T>(a, nullptr, k_len, da);
      detail::decode_lanes<T>(b, nullptr, k_len, db);
      return detail::chain_lanes<T>(da, db, k_len / T::kK, c, use_c, acc);
    }
  });
}

}  // namespace

float instruction(Model m, const uint8_t* a, const uint8_t* b, float c, bool use_c) {
  return scalar_chain(m, a, b, instruction_k(m), c, use_c, Accumulation::chained);
}

float instruction_mxfp4(Model m, const uint8_t* a_packed, const uint8_t* a_scales, const uint8_t* b_packed,
                        const uint8_t* b_scales, float c, bool use_c) {
  if (m == Model::exact) throw InvalidInput("model", "exact is not an instruction (chain_dots_mxfp4 takes it)");
  return detail::with_model(m, [&](auto trait) -> float {
    using T = decltype(trait);
    if constexpr (T::kOperands != Operands::mxfp4) {
      throw InvalidInput("model", std::string(T::kName) + " is not block-scaled: use instruction");
    } else {
      thread_local detail::DecodedVector da, db;
      detail::decode_lanes<T>(a_packed, a_scales, T::kK, da);
      detail::decode_lanes<T>(b_packed, b_scales, T::kK, db);
      return detail::chain_lanes<T>(da, db, 1, c, use_c, Accumulation::chained);
    }
  });
}

float chain(Model m, const uint8_t* a, const uint8_t* b, int k_len, Accumulation acc) {
  return scalar_chain(m, a, b, k_len, 0.0f, false, acc);
}

float chain_from(Model m, const uint8_t* a, const uint8_t* b, int k_len, float c, Accumulation acc) {
  return scalar_chain(m, a, b, k_len, c, true, acc);
}

}  // namespace dsa::mma
