#include "operand_draw.hpp"

#include <cfloat>
#include <cmath>

#include "fp_codes.hpp"

namespace probes {
namespace {

constexpr int kSlice = 32;  // K of one instruction

void fill(const Tile& t, Rng& rng, uint8_t (*draw)(Rng&)) {
  for (int m = 0; m < t.rows; ++m)
    for (int k = 0; k < t.depth; ++k) t.at_a(m, k) = draw(rng);
  for (int n = 0; n < t.cols; ++n)
    for (int k = 0; k < t.depth; ++k) t.at_b(n, k) = draw(rng);
}

uint8_t small_normal(Rng& rng) { return e4m3_in_fields(rng, 3, 10); }

// Flips the lowest mantissa bit of about a quarter of the codes (never into a NaN).
uint8_t perturbed(Rng& rng, uint8_t code) {
  if (!rng.chance(0.25) || (code & 0x7f) == 0) return code;
  const uint8_t flipped = code ^ 1;
  return e4m3_is_nan(flipped) ? code : flipped;
}

void half_negated(Rng& rng, const Tile& t) {
  fill(t, rng, e4m3_random);
  for (int s = 0; s < t.depth; s += kSlice) {
    for (int m = 0; m < t.rows; ++m)
      for (int k = 0; k < kSlice / 2; ++k) t.at_a(m, s + k + kSlice / 2) = e4m3_negate(t.at_a(m, s + k));
    // With B repeated the pairs cancel to the perturbation: deep cancellation.
    for (int n = 0; n < t.cols; ++n)
      if (rng.below(2))
        for (int k = 0; k < kSlice / 2; ++k) t.at_b(n, s + k + kSlice / 2) = perturbed(rng, t.at_b(n, s + k));
  }
}

// B[n][k] depends only on k mod 2 and (k / 4) mod 4, so B[k] = B[k + 2] for k mod 4 in {0, 1}
// and B[k] = B[k + 16]: the pairs of A below cancel exactly. The sign of B[n][k] depends on k
// alone, so a row of A can make every product -0 (where IEEE sums would give -0).
void exact_pairs(Rng& rng, const Tile& t) {
  auto pattern = [](int k) { return ((k >> 2) & 3) * 2 + (k & 1); };
  for (int s = 0; s < t.depth; s += kSlice) {
    uint8_t sign[8];
    for (auto& bit : sign) bit = uint8_t(rng.below(2) << 7);
    for (int n = 0; n < t.cols; ++n) {
      uint8_t base[8];
      for (int j = 0; j < 8; ++j)
        base[j] = uint8_t(((rng.chance(0.1) ? 0 : e4m3_random(rng)) & 0x7f) | sign[j]);
      for (int k = 0; k < kSlice; ++k) t.at_b(n, s + k) = base[pattern(k)];
    }
    for (int m = 0; m < t.rows; ++m) {
      auto a = [&](int k) -> uint8_t& { return t.at_a(m, s + k); };
      switch (m % 4) {
        case 0:  // no nonzero product: every product -0 (m % 8 == 0) or +-0 codes at random
          for (int k = 0; k < kSlice; ++k)
            a(k) = m % 8 == 0 ? uint8_t(kE4m3NegZero ^ sign[pattern(k)]) : e4m3_signed_zero(rng);
          break;
        case 1:  // k and k + 16: the same HMMA group of mma.sync
          for (int k = 0; k < kSlice / 2; ++k) {
            a(k) = rng.chance(0.1) ? e4m3_signed_zero(rng) : e4m3_random(rng);
            a(k + kSlice / 2) = e4m3_negate(a(k));
          }
          break;
        case 2:  // k and k + 2 (k mod 4 in {0, 1}): one in each HMMA group of mma.sync
          for (int k = 0; k < kSlice; ++k) {
            if ((k & 3) >= 2) continue;
            a(k) = rng.chance(0.1) ? e4m3_signed_zero(rng) : e4m3_random(rng);
            a(k + 2) = e4m3_negate(a(k));
          }
          break;
        default: {  // signed zeros and a single cancelling pair of products
          for (int k = 0; k < kSlice; ++k) a(k) = e4m3_signed_zero(rng);
          const int k0 = int(rng.below(kSlice / 2));
          a(k0) = e4m3_random(rng);
          a(k0 + kSlice / 2) = e4m3_negate(a(k0));
          break;
        }
      }
    }
  }
}

uint8_t subnormal_heavy(Rng& rng) {
  const uint32_t r = rng.below(100);
  if (r < 50) return e4m3_in_fields(rng, 0, 0);
  if (r < 65) return e4m3_signed_zero(rng);
  if (r < 90) return e4m3_in_fields(rng, 1, 5);
  return e4m3_in_fields(rng, 6, 15);
}

// NaN codes: sprinkled at random, plus a row whose NaN meets only zero codes of B
// and a column whose NaN meets only zero codes of A (is NaN * 0 a NaN term?).
void nan_codes(Rng& rng, const Tile& t, int k_begin, int k_end) {
  const double p = 1.0 / 96;
  for (int m = 0; m < t.rows; ++m)
    for (int k = k_begin; k < k_end; ++k)
      if (rng.chance(p)) t.at_a(m, k) = e4m3_nan(rng);
  for (int n = 0; n < t.cols; ++n)
    for (int k = k_begin; k < k_end; ++k)
      if (rng.chance(p)) t.at_b(n, k) = e4m3_nan(rng);
  const int width = k_end - k_begin;
  if (rng.below(2)) {
    const int m = int(rng.below(uint32_t(t.rows))), k = k_begin + int(rng.below(uint32_t(width)));
    t.at_a(m, k) = e4m3_nan(rng);
    for (int n = 0; n < t.cols; ++n) t.at_b(n, k) = e4m3_signed_zero(rng);
  } else {
    const int n = int(rng.below(uint32_t(t.cols))), k = k_begin + int(rng.below(uint32_t(width)));
    t.at_b(n, k) = e4m3_nan(rng);
    for (int m = 0; m < t.rows; ++m) t.at_a(m, k) = e4m3_signed_zero(rng);
  }
}

void zero_products(Rng& rng, const Tile& t) {
  fill(t, rng, e4m3_random);
  const uint32_t how = rng.below(4);
  for (int k = 0; k < t.depth; ++k) {
    const bool zero_a = how == 0 || (how >= 2 && rng.below(2));
    if (zero_a)
      for (int m = 0; m < t.rows; ++m) t.at_a(m, k) = e4m3_signed_zero(rng);
    else
      for (int n = 0; n < t.cols; ++n) t.at_b(n, k) = e4m3_signed_zero(rng);
  }
}

void scaled_slices(Rng& rng, const Tile& t) {
  for (int k = 0; k < t.depth; ++k) {
    const bool large = k < kSlice;
    for (int m = 0; m < t.rows; ++m) t.at_a(m, k) = large ? e4m3_in_fields(rng, 10, 14) : e4m3_in_fields(rng, 1, 6);
    for (int n = 0; n < t.cols; ++n) t.at_b(n, k) = large ? e4m3_in_fields(rng, 10, 14) : e4m3_in_fields(rng, 1, 6);
  }
}

// Odd slices undo the even slice before them: A negated, B repeated (exactly or nearly).
void cancel_slices(Rng& rng, const Tile& t, bool exact) {
  fill(t, rng, small_normal);
  if (exact) {
    for (int m = 0; m < t.rows; ++m)
      for (int k = 0; k < t.depth; ++k)
        if (m % 4 == 0 || rng.chance(0.1)) t.at_a(m, k) = e4m3_signed_zero(rng);
  }
  for (int s = kSlice; s < t.depth; s += 2 * kSlice) {
    for (int m = 0; m < t.rows; ++m)
      for (int k = 0; k < kSlice; ++k) t.at_a(m, s + k) = e4m3_negate(t.at_a(m, s - kSlice + k));
    for (int n = 0; n < t.cols; ++n)
      for (int k = 0; k < kSlice; ++k) {
        const uint8_t code = t.at_b(n, s - kSlice + k);
        t.at_b(n, s + k) = exact ? code : perturbed(rng, code);
      }
  }
}

}  // namespace

void draw_operands(Rng& rng, Operands kind, const Tile& t) {
  switch (kind) {
    case Operands::uniform:
      fill(t, rng, e4m3_random);
      break;
    case Operands::large_a:
      fill(t, rng, e4m3_random);
      for (int m = 0; m < t.rows; ++m)
        for (int k = 0; k < t.depth; ++k)
          if (rng.chance(0.25)) t.at_a(m, k) = e4m3_in_fields(rng, 12, 15);
      break;
    case Operands::narrow:
      fill(t, rng, [](Rng& r) { return e4m3_in_fields(r, 6, 8); });
      break;
    case Operands::half_negated:
      half_negated(rng, t);
      break;
    case Operands::exact_pairs:
      exact_pairs(rng, t);
      break;
    case Operands::sparse:
      fill(t, rng, [](Rng& r) { return r.chance(0.85) ? e4m3_signed_zero(r) : e4m3_random(r); });
      break;
    case Operands::subnormal:
      fill(t, rng, subnormal_heavy);
      break;
    case Operands::nan:
      fill(t, rng, e4m3_random);
      nan_codes(rng, t, 0, t.depth);
      break;
    case Operands::zero_products:
      zero_products(rng, t);
      break;
    case Operands::scaled_slices:
      scaled_slices(rng, t);
      break;
    case Operands::cancel_slices:
      cancel_slices(rng, t, false);
      break;
    case Operands::exact_cancel_slices:
      cancel_slices(rng, t, true);
      break;
    case Operands::nan_slice: {
      fill(t, rng, small_normal);
      const int s = kSlice * int(rng.below(uint32_t(t.depth / kSlice)));
      nan_codes(rng, t, s, s + kSlice);
      break;
    }
    case Operands::small_integers:
      fill(t, rng, [](Rng& r) { return e4m3_exact(int(r.below(7)) - 3); });
      break;
  }
}

namespace {

float special_value(Rng& rng) {
  static const uint32_t kSpecials[] = {
      0x7f800000u, 0xff800000u,  // +-inf
      0x7fc00000u, 0xffc00000u,  // quiet NaNs
      0x7f800001u, 0x7fa00000u,  // signalling NaNs
      0x7fc0deadu,               // a payload
      0x7f7fffffu, 0xff7fffffu,  // +-FLT_MAX
      0x00000000u, 0x80000000u,  // +-0
  };
  return f32_from_bits(kSpecials[rng.below(sizeof(kSpecials) / sizeof(kSpecials[0]))]);
}

float accum_value(Rng& rng, Accum kind) {
  switch (kind) {
    case Accum::zero:
      return 0.0f;
    case Accum::products:
      return f32_random(rng, -12, 18);
    case Accum::wide:
      return rng.below(2) ? f32_random(rng, -12, 18) : f32_random(rng, -149, 127);
    case Accum::tiny:
      return rng.chance(0.05) ? (rng.below(2) ? -0.0f : 0.0f) : f32_random(rng, -149, -100);
    case Accum::small:
      return f32_random(rng, -24, -6);
    case Accum::huge:
      return rng.chance(0.05) ? (rng.below(2) ? FLT_MAX : -FLT_MAX) : f32_random(rng, 20, 127);
    case Accum::signed_zero: {
      const uint32_t r = rng.below(10);
      return r < 4 ? 0.0f : r < 8 ? -0.0f : accum_value(rng, Accum::wide);
    }
    case Accum::special:
      return rng.chance(0.3) ? special_value(rng) : accum_value(rng, Accum::wide);
    case Accum::any: {
      const uint32_t r = rng.below(20);
      if (r < 3) return 0.0f;
      if (r < 5) return -0.0f;
      if (r < 9) return accum_value(rng, Accum::tiny);
      if (r < 16) return accum_value(rng, Accum::products);
      return accum_value(rng, Accum::huge);
    }
    case Accum::small_integers:
      return float(int(rng.below(9)) - 4);
  }
  return 0.0f;
}

}  // namespace

void draw_accum(Rng& rng, Accum kind, const Tile& t) {
  for (int m = 0; m < t.rows; ++m)
    for (int n = 0; n < t.cols; ++n) t.set_c(m, n, accum_value(rng, kind));
}

}  // namespace probes
