// What a matrix-unit model is made of (internal): one trait per model, in
// models/, listed once in registry.hpp. Everything else (the scalar entry
// points, the bulk chain_dots, the dump checker, the names) is written against
// these fields, so a new model is its Model value, its trait, one line of the
// registry and its tests.
//
// A trait declares:
//   kModel, kName        its Model value and name (models.hpp)
//   kInstruction         the instruction it models, in PTX / ISA words
//   kK                   K of one instruction
//   kOperands            what A and B hold (e4m3fn, e4m3fnuz, or MXFP4 with its scales)
//   kSubnormals          the alignment exponent of an fp8 subnormal (operands.hpp)
//   kNan                 the bits of every NaN result
//   kDump                the headerless dump record of one instruction: M x N, trailer
//   kZeroOperandsApart   whether a dump checker judges MMA-Sim's zero-operand
//                        convention apart (its dumps come from MMA-Sim)
//   lane_of(k)           where code k of a slice goes: the sets the datapath sums
//                        apart become contiguous runs of lanes
//   Datapath             the arithmetic: fraction bits, rounding of the terms and of
//                        the result, as the parameters of the building blocks in
//                        datapaths/. Datapath::step is the scalar kernel (any C);
//                        Datapath::block_step, where it exists, the SIMD kernel of
//                        chains from zero (chain_blocks.hpp); without it the bulk
//                        path runs the scalar kernel pair by pair.
// How instructions join into a chain (Accumulation) is not part of a model: the
// drivers (lanes.hpp, chain_dots.cpp) apply it to any trait.
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string_view>

#include "dsa/mma/models.hpp"
#include "operands.hpp"

namespace dsa::mma::detail {

enum class NanBits : uint8_t {
  nvidia,  // 0x7FFFFFFF whatever NaN went in (seen on the H200: data/hardware/RESULTS.md)
  ieee,    // the IEEE default quiet NaN (CDNA3's models)
};

inline float nan_of(NanBits n) {
  return n == NanBits::nvidia ? std::bit_cast<float>(0x7FFFFFFFu) : std::numeric_limits<float>::quiet_NaN();
}

// What follows the fp32 arrays of a headerless record (../shared/data/README.md).
enum class DumpTrailer : uint8_t {
  none,          // no field: the mode is the record index % 4 (the H200 mma.sync dump)
  mode,          // i32 mode
  mode_scale_d,  // i32 mode, i32 scale_d (0: C is ignored)
};

struct DumpShape {
  int m = 0, n = 0;
  DumpTrailer trailer = DumpTrailer::mode;
};

template <class T>
concept ModelTrait = requires(int k) {
  { T::kModel } -> std::convertible_to<Model>;
  { T::kName } -> std::convertible_to<std::string_view>;
  { T::kInstruction } -> std::convertible_to<std::string_view>;
  { T::kK } -> std::convertible_to<int>;
  { T::kOperands } -> std::convertible_to<Operands>;
  { T::kSubnormals } -> std::convertible_to<Subnormals>;
  { T::kNan } -> std::convertible_to<NanBits>;
  { T::kDump } -> std::convertible_to<DumpShape>;
  { T::kZeroOperandsApart } -> std::convertible_to<bool>;
  { T::lane_of(k) } -> std::convertible_to<int>;
  typename T::Datapath;
};

template <class T>
concept HasBlockKernel = requires {
  &T::Datapath::block_step;
};

}  // namespace dsa::mma::detail
