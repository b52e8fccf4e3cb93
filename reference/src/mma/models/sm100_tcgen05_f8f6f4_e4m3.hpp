// Blackwell tcgen05.mma kind::f8f6f4 k32, e4m3 x e4m3 (NUMERICS "B200"; the
// published model, MMA-Sim). No B200 here: pinned by hand-worked tests.
#pragma once

#include "../datapaths/fused_sum.hpp"
#include "../trait.hpp"

namespace dsa::mma::detail {

struct Sm100Tcgen05F8f6f4E4m3 {
  static constexpr Model kModel = Model::sm100_tcgen05_f8f6f4_e4m3;
  static constexpr std::string_view kName = "sm100_tcgen05_f8f6f4_e4m3";
  static constexpr std::string_view kInstruction = "tcgen05.mma.cta_group::1.kind::f8f6f4 (e4m3 x e4m3, K = 32)";
  static constexpr int kK = 32;
  static constexpr Operands kOperands = Operands::e4m3fn;
  static constexpr Subnormals kSubnormals = Subnormals::as_is;
  static constexpr NanBits kNan = NanBits::nvidia;
  static constexpr DumpShape kDump{64, 8, DumpTrailer::mode};
  static constexpr bool kZeroOperandsApart = true;  // its dumps come from MMA-Sim
  static constexpr int lane_of(int k) { return k; }
  // One fused sum of the 32 products and C, 25 fraction bits, each term
  // truncated toward zero, the result rounded toward zero to fp32.
  using Datapath = CInTheSum<FusedSum<32, 25, 24>>;
};

}  // namespace dsa::mma::detail
