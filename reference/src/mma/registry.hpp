// The one table of matrix-unit models (internal): every trait of models/, once.
// The names, the scalar and bulk entry points and the dump checker reach a
// model only through it.
#pragma once

#include <string>
#include <type_traits>

#include "dsa/error.hpp"
#include "models/cdna3_mfma_f32_16x16x32_fp8.hpp"
#include "models/cdna3_mfma_f32_32x32x16_fp8.hpp"
#include "models/sm100_tcgen05_f8f6f4_e4m3.hpp"
#include "models/sm100_tcgen05_mxf4_k64.hpp"
#include "models/sm90_mma_sync_e4m3.hpp"
#include "models/sm90_wgmma_e4m3.hpp"
#include "trait.hpp"

namespace dsa::mma::detail {

template <ModelTrait... T>
struct ModelList {
  static constexpr int kSize = sizeof...(T);
};

using Registry = ModelList<Sm90MmaSyncE4m3, Sm90WgmmaE4m3, Sm100Tcgen05F8f6f4E4m3, Sm100Tcgen05Mxf4K64,
                           Cdna3Mfma16x16x32Fp8, Cdna3Mfma32x32x16Fp8>;

template <class F, class... T>
auto visit_model(Model m, F& f, ModelList<T...>) -> std::common_type_t<decltype(f(T{}))...> {
  using R = std::common_type_t<decltype(f(T{}))...>;
  if constexpr (std::is_void_v<R>) {
    if (!((m == T::kModel ? (f(T{}), true) : false) || ...))
      throw InvalidInput("model", "model id " + std::to_string(int(m)) + " has no instruction");
  } else {
    R r{};
    if (!((m == T::kModel ? (r = f(T{}), true) : false) || ...))
      throw InvalidInput("model", "model id " + std::to_string(int(m)) + " has no instruction");
    return r;
  }
}

// Calls f(Trait{}) with the trait of m. Model::exact is not an instruction: InvalidInput("model").
template <class F>
auto with_model(Model m, F&& f) {
  return visit_model(m, f, Registry{});
}

// Calls f(Trait{}) for every model, in the table's order.
template <class F, class... T>
void for_each_model_in(F& f, ModelList<T...>) {
  (f(T{}), ...);
}
template <class F>
void for_each_model(F&& f) {
  for_each_model_in(f, Registry{});
}

}  // namespace dsa::mma::detail
