// Blackwell tcgen05.mma kind::mxf4 k64: e2m1 x e2m1 with one ue8m0 scale per 32
// (NUMERICS "B200"; the published model, MMA-Sim). DeepGEMM's SM100 FP4 indexer
// issues it with UMMA_K = 64, two chained for D = 128, the first with accumulate
// off (impls/sm100_fp4_paged_mqa_logits.cuh, read from source only). No B200
// here: pinned by hand-worked tests.
#pragma once

#include "../datapaths/block_scaled_groups.hpp"
#include "../trait.hpp"

namespace dsa::mma::detail {

struct Sm100Tcgen05Mxf4K64 {
  static constexpr Model kModel = Model::sm100_tcgen05_mxf4_k64;
  static constexpr std::string_view kName = "sm100_tcgen05_mxf4_k64";
  static constexpr std::string_view kInstruction =
      "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X (e2m1 x e2m1, ue8m0 per 32, K = 64)";
  static constexpr int kK = 64;
  static constexpr Operands kOperands = Operands::mxfp4;
  static constexpr Subnormals kSubnormals = Subnormals::as_is;  // unused: a group aligns on its scales
  static constexpr NanBits kNan = NanBits::nvidia;
  static constexpr DumpShape kDump{64, 8, DumpTrailer::mode};
  // MMA-Sim's zero-operand convention has no counterpart here: a group's
  // exponent is its scales', and the group rule (datapaths/block_scaled_groups.hpp)
  // is NUMERICS's ruling.
  static constexpr bool kZeroOperandsApart = false;
  static constexpr int lane_of(int k) { return k; }
  // Groups of 16 products summed exactly, each at its scales' exponent; 35
  // fraction bits, truncation toward zero; the result toward zero to fp32, +-inf beyond it.
  using Datapath = BlockScaledGroups<64, 16, 35>;
};

}  // namespace dsa::mma::detail
