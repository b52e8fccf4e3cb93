// MI300 (gfx942) v_mfma_f32_32x32x16_fp8_fp8, e4m3fnuz operands: one group of 16
// of the CDNA3 datapath. MMA-Sim's outputs are in ../shared/data.
#pragma once

#include "cdna3_mfma_f32_16x16x32_fp8.hpp"

namespace dsa::mma::detail {

struct Cdna3Mfma32x32x16Fp8 {
  static constexpr Model kModel = Model::cdna3_mfma_f32_32x32x16_fp8;
  static constexpr std::string_view kName = "cdna3_mfma_f32_32x32x16_fp8";
  static constexpr std::string_view kInstruction = "v_mfma_f32_32x32x16_fp8_fp8";
  static constexpr int kK = 16;
  static constexpr Operands kOperands = Operands::e4m3fnuz;
  static constexpr Subnormals kSubnormals = Subnormals::as_is;
  static constexpr NanBits kNan = NanBits::ieee;
  static constexpr DumpShape kDump{32, 32, DumpTrailer::mode};
  static constexpr bool kZeroOperandsApart = true;  // its dumps come from MMA-Sim
  static constexpr int lane_of(int k) { return cdna3_lane_of(k); }
  using Datapath = GroupsInSequence<Cdna3Fp8Group, 1>;
};

}  // namespace dsa::mma::detail
