// Hopper wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3 (native QGMMA;
// NUMERICS "H200 (sm_90a)"). Checked on every output of the H200 dumps and on
// DeepGEMM's real SM90 kernel.
#pragma once

#include "../datapaths/fused_sum.hpp"
#include "../trait.hpp"

namespace dsa::mma::detail {

struct Sm90WgmmaE4m3 {
  static constexpr Model kModel = Model::sm90_wgmma_e4m3;
  static constexpr std::string_view kName = "sm90_wgmma_e4m3";
  static constexpr std::string_view kInstruction = "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3";
  static constexpr int kK = 32;
  static constexpr Operands kOperands = Operands::e4m3fn;
  static constexpr Subnormals kSubnormals = Subnormals::as_is;
  static constexpr NanBits kNan = NanBits::nvidia;
  static constexpr DumpShape kDump{64, 8, DumpTrailer::mode_scale_d};
  static constexpr bool kZeroOperandsApart = false;  // H200 dumps
  static constexpr int lane_of(int k) { return k; }
  // One fused sum of the 32 products and C, 13 fraction bits, each term
  // truncated toward zero, the result truncated to e8m13 (14 significant bits).
  // No fast path: 13 bits almost never hold every product of real data (none of
  // the bench's 1.4 million instructions), so its test costs more than it saves.
  using Datapath = CInTheSum<FusedSum<32, 13, 14, false>>;
};

}  // namespace dsa::mma::detail
