// Hopper mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (NUMERICS "H200
// (sm_90)"): ptxas emulates it with two HMMA.16816.F32 over the k mod 4 halves,
// then an ordinary fp32 add of C. Checked on every output of the H200 dumps.
#pragma once

#include "../datapaths/fused_sum.hpp"
#include "../trait.hpp"

namespace dsa::mma::detail {

struct Sm90MmaSyncE4m3 {
  static constexpr Model kModel = Model::sm90_mma_sync_e4m3;
  static constexpr std::string_view kName = "sm90_mma_sync_e4m3";
  static constexpr std::string_view kInstruction = "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32";
  static constexpr int kK = 32;
  static constexpr Operands kOperands = Operands::e4m3fn;
  // The emulation unpacks e4m3 to f16 first: a subnormal gets its f16 (normalised) exponent.
  static constexpr Subnormals kSubnormals = Subnormals::normalised;
  static constexpr NanBits kNan = NanBits::nvidia;
  static constexpr DumpShape kDump{16, 8, DumpTrailer::none};
  static constexpr bool kZeroOperandsApart = false;  // H200 dumps
  // HMMA 1 takes k mod 4 in {0, 1} (lanes 0-15), HMMA 2 the rest (lanes 16-31).
  static constexpr int lane_of(int k) {
    const int r = k % 32, pair = (r / 4) * 2 + (r % 2);
    return k - r + ((r % 4) < 2 ? pair : 16 + pair);
  }
  // Each HMMA: 16 products and its accumulator, 25 fraction bits, truncated
  // toward zero, rounded toward zero to fp32; the first from +0, the second
  // accumulating the first; D = that + C, rounded to nearest even.
  using Datapath = PartsThenAddC<FusedSum<16, 25, 24>, 2>;
};

}  // namespace dsa::mma::detail
