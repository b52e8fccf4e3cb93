// MI300 (gfx942) v_mfma_f32_16x16x32_fp8_fp8, e4m3fnuz operands (NUMERICS
// "MI300"; the published model, MMA-Sim amd.py). No MI300 here: pinned by
// hand-worked tests.
#pragma once

#include "../datapaths/cdna3_group.hpp"
#include "../trait.hpp"

namespace dsa::mma::detail {

// Even k then odd k within each group of 16 (Cdna3Group16's halves).
constexpr int cdna3_lane_of(int k) {
  const int r = k % 16;
  return k - r + (r % 2 ? 8 + r / 2 : r / 2);
}

// A group of 16: halves with 24 fraction bits, the product sum with 31, C with
// 24 and dropped more than 25 binades below, rounded to nearest even.
using Cdna3Fp8Group = Cdna3Group16<24, 31, 24, 25>;

struct Cdna3Mfma16x16x32Fp8 {
  static constexpr Model kModel = Model::cdna3_mfma_f32_16x16x32_fp8;
  static constexpr std::string_view kName = "cdna3_mfma_f32_16x16x32_fp8";
  static constexpr std::string_view kInstruction = "v_mfma_f32_16x16x32_fp8_fp8";
  static constexpr int kK = 32;
  static constexpr Operands kOperands = Operands::e4m3fnuz;
  static constexpr Subnormals kSubnormals = Subnormals::as_is;
  static constexpr NanBits kNan = NanBits::ieee;
  static constexpr DumpShape kDump{16, 16, DumpTrailer::mode};
  static constexpr bool kZeroOperandsApart = true;  // its dumps come from MMA-Sim
  static constexpr int lane_of(int k) { return cdna3_lane_of(k); }
  // Two groups of 16 in sequence, each rounded to fp32 and the next one's C.
  using Datapath = GroupsInSequence<Cdna3Fp8Group, 2>;
};

}  // namespace dsa::mma::detail
