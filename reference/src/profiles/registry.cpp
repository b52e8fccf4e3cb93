// The registry of named profiles and the Profile checks.
#include <algorithm>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>

#include "catalog.hpp"
#include "dsa/error.hpp"
#include "dsa/formats.hpp"

namespace dsa {
namespace {

const std::vector<Profile>& registry() {
  static const std::vector<Profile> all = {profiles::exact(),          profiles::deepgemm_sm90(),
                                           profiles::deepgemm_sm100(), profiles::deepgemm_sm100_bf16(),
                                           profiles::aiter_gfx942_gluon(), profiles::dsa_gfx942(),
                                           profiles::vllm_triton_c4a(),    profiles::dsa_sm90(),
                                           profiles::dsa_sm90_accurate()};
  return all;
}

bool same_steps(const std::vector<ReduceStep>& a, const std::vector<ReduceStep>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const ReduceStep& x, const ReduceStep& y) {
    return x.op == y.op && x.dst == y.dst && x.a == y.a && x.b == y.b && x.head == y.head;
  });
}

// The head-sum program a profile builds for H heads; nothing where it refuses H.
std::optional<std::vector<ReduceStep>> program_for(const Profile& p, int heads) {
  if (p.build_reduction == nullptr) return std::nullopt;
  try {
    return p.build_reduction(heads);
  } catch (const InvalidInput&) {
    return std::nullopt;
  }
}

// The D order a profile's chain consumes (in order without dim_order); nothing where it refuses D.
std::optional<std::vector<int32_t>> dim_order_for(const Profile& p, int head_dim) {
  if (p.dim_order == nullptr) {
    std::vector<int32_t> in_order(static_cast<size_t>(head_dim));
    std::iota(in_order.begin(), in_order.end(), 0);
    return in_order;
  }
  try {
    return p.dim_order(head_dim);
  } catch (const InvalidInput&) {
    return std::nullopt;
  }
}

std::vector<ElementFormat> sorted(std::vector<ElementFormat> formats) {
  std::sort(formats.begin(), formats.end());
  return formats;
}

std::string joined_names() {
  std::string s;
  for (const Profile& p : registry()) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

}  // namespace

namespace profiles {
void require_heads_multiple(const char* profile, int heads, int multiple, const std::string& why) {
  if (heads > 0 && heads % multiple == 0) return;
  throw InvalidInput("heads", "profile " + std::string(profile) + " takes H a positive multiple of " +
                                  std::to_string(multiple) + ", got " + std::to_string(heads) +
                                  (why.empty() ? "" : " (" + why + ")"));
}
}  // namespace profiles

const Profile& find_profile(std::string_view name) {
  for (const Profile& p : registry())
    if (p.name == name) return p;
  throw InvalidInput("profile", "unknown profile '" + excerpt(name) + "' (known: " + joined_names() + ")");
}

std::vector<std::string> profile_names() {
  std::vector<std::string> names;
  for (const Profile& p : registry()) names.push_back(p.name);
  return names;
}

bool same_arithmetic(const Profile& a, const Profile& b) {
  if (a.mma != b.mma || a.mma_mxfp4 != b.mma_mxfp4 || a.accumulation != b.accumulation ||
      sorted(a.elements) != sorted(b.elements) || a.weights != b.weights || a.logits != b.logits ||
      a.applies_k_scale != b.applies_k_scale || a.head_stage.scale_before_relu != b.head_stage.scale_before_relu ||
      a.head_stage.round_relu_to != b.head_stage.round_relu_to ||
      a.head_stage.relu_propagates_nan != b.head_stage.relu_propagates_nan || a.nan_bits != b.nan_bits ||
      a.reduce != b.reduce)
    return false;
  for (int head_dim = 32; head_dim <= 512; head_dim *= 2)
    if (dim_order_for(a, head_dim) != dim_order_for(b, head_dim)) return false;
  for (int heads = 1; heads <= 256; ++heads) {
    const auto program_a = program_for(a, heads), program_b = program_for(b, heads);
    if (program_a.has_value() != program_b.has_value()) return false;
    if (program_a && !same_steps(*program_a, *program_b)) return false;
  }
  return true;
}

bool Profile::accepts(ElementFormat e) const { return std::find(elements.begin(), elements.end(), e) != elements.end(); }

void Profile::require(ElementFormat e) const {
  if (accepts(e)) return;
  std::string formats;
  for (ElementFormat f : elements) formats += (formats.empty() ? "" : ", ") + std::string(to_string(f));
  throw InvalidInput("profile", "profile " + name + " does not take " + std::string(to_string(e)) +
                                    " elements (it takes " + formats + ")");
}

void Profile::require_weights(std::span<const float> w, int heads) const {
  if (weights != Precision::bf16) return;
  for (size_t i = 0; i < w.size(); ++i) {
    if (round_to_bf16(w[i]) == w[i] || (w[i] != w[i])) continue;
    const std::string where = heads > 0 ? "weights[" + std::to_string(i / size_t(heads)) + "][" +
                                              std::to_string(i % size_t(heads)) + "]"
                                        : "weights[" + std::to_string(i) + "]";
    std::ostringstream value;
    value.precision(9);
    value << w[i];
    throw InvalidInput("weights", "profile " + name + " takes bf16 weights, but " + where + " = " + value.str() +
                                      " is not a bf16 value");
  }
}

}  // namespace dsa
