#include "operands.hpp"

#include <bit>

namespace dsa::mma::detail {
namespace {

OperandTable build(Fp8Format format, Subnormals subnormals, ZeroOperands zeros) {
  // e4m3fn: bias 7, NaN 0x7f/0xff; e4m3fnuz: bias 8, NaN 0x80 only, no -0.
  const int bias = format == Fp8Format::e4m3fn ? 7 : 8;
  OperandTable t{};
  for (int code = 0; code < 256; ++code) {
    const bool negative = code & 0x80;
    const int e = (code >> 3) & 0xf, f = code & 7;
    const bool nan = format == Fp8Format::e4m3fn ? (code & 0x7f) == 0x7f : code == 0x80;
    t.nan[code] = nan;
    t.neg[code] = negative ? ~uint64_t{0} : 0;
    if (nan) {
      t.mag[code] = 0;
      t.exp[code] = kNoTermExponent;
      continue;
    }
    // value = sig * 2^(e - bias - 3) for normals (sig = 8 + f), f * 2^(1 - bias - 3) for subnormals;
    // in units of 2^-10 the shift is what is left of the exponent.
    const int emin = 1 - bias;
    if (e > 0) {
      t.mag[code] = uint32_t(8 + f) << (e - bias - 3 + kOperandShift);
      t.exp[code] = int16_t(e - bias);
    } else {
      t.mag[code] = uint32_t(f) << (emin - 3 + kOperandShift);
      if (f == 0)
        t.exp[code] = zeros == ZeroOperands::no_term ? kNoTermExponent : int16_t(-126);
      else if (subnormals == Subnormals::as_is)
        t.exp[code] = int16_t(emin);
      else
        t.exp[code] = int16_t(emin - 3 + (std::bit_width(unsigned(f)) - 1));
    }
    if (t.mag[code] == 0) t.neg[code] = 0;  // -0 is a zero like +0
  }
  return t;
}

}  // namespace

const OperandTable& operand_table(Fp8Format format, Subnormals subnormals, ZeroOperands zeros) {
  static const OperandTable tables[2][2][2] = {
      {{build(Fp8Format::e4m3fn, Subnormals::as_is, ZeroOperands::no_term),
        build(Fp8Format::e4m3fn, Subnormals::as_is, ZeroOperands::exponent_m126)},
       {build(Fp8Format::e4m3fn, Subnormals::normalised, ZeroOperands::no_term),
        build(Fp8Format::e4m3fn, Subnormals::normalised, ZeroOperands::exponent_m126)}},
      {{build(Fp8Format::e4m3fnuz, Subnormals::as_is, ZeroOperands::no_term),
        build(Fp8Format::e4m3fnuz, Subnormals::as_is, ZeroOperands::exponent_m126)},
       {build(Fp8Format::e4m3fnuz, Subnormals::normalised, ZeroOperands::no_term),
        build(Fp8Format::e4m3fnuz, Subnormals::normalised, ZeroOperands::exponent_m126)}},
  };
  return tables[format == Fp8Format::e4m3fnuz][subnormals == Subnormals::normalised]
               [zeros == ZeroOperands::exponent_m126];
}

Fp32Parts split_fp32(float v) {
  const uint32_t bits = std::bit_cast<uint32_t>(v);
  const uint32_t be = (bits >> 23) & 0xff, frac = bits & 0x7fffff;
  Fp32Parts p;
  p.neg = bits >> 31;
  if (be == 0) {  // zero or subnormal: frac * 2^-149, alignment exponent -126
    p.sig = frac;
    p.exp = -149;
    p.align = -126;
  } else {
    p.sig = frac | 0x800000;
    p.exp = int(be) - 150;
    p.align = int(be) - 127;
  }
  return p;
}

}  // namespace dsa::mma::detail
