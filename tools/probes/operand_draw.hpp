// What goes into the probes' dumps: A, B and C of one record, drawn from a
// seeded Rng by named kinds, so a mode of a dump is one line of a table
// ({operands, accumulator, scale_d}) and the hard cases of NUMERICS.md (NaN
// codes, -0, exactly cancelling sums, fp8 and fp32 subnormals, huge C) are
// each one kind.
#pragma once

#include <cstdio>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "probe_rng.hpp"

namespace probes {

// One record's inputs: A[rows][depth], B[cols][depth] e4m3 codes, C[rows][cols] f32.
struct Tile {
  int rows, cols, depth;
  uint8_t* a;
  uint8_t* b;
  uint8_t* c;  // f32, little-endian, not necessarily aligned

  uint8_t& at_a(int m, int k) const { return a[size_t(m) * depth + k]; }
  uint8_t& at_b(int n, int k) const { return b[size_t(n) * depth + k]; }
  void set_c(int m, int n, float value) const { std::memcpy(c + (size_t(m) * cols + n) * 4, &value, 4); }
  float get_c(int m, int n) const {
    float value;
    std::memcpy(&value, c + (size_t(m) * cols + n) * 4, 4);
    return value;
  }
};

enum class Operands {
  uniform,              // every code but the NaNs
  large_a,              // uniform, a quarter of A with exponent fields 12..15
  narrow,               // exponent fields 6..8 only
  half_negated,         // each 32-slice: A[k + 16] = -A[k]; half the B rows repeat with a few perturbed
  exact_pairs,          // rows by m % 4: all +-0 codes; k/k+16 pairs cancel; k/k+2 pairs cancel (across
                        // mma.sync's two HMMA groups); +-0 codes with one cancelling pair
  sparse,               // uniform, 85 % of the codes +0 or -0
  subnormal,            // half the codes fp8 subnormals, the rest zeros, small and a few large normals
  nan,                  // uniform with 0x7f / 0xff codes sprinkled, and rows/cols where a NaN meets only zeros
  zero_products,        // every product has a +-0 operand (all of A, all of B, or one of each pair)
  scaled_slices,        // K = 128: slice 0 large exponents, slices 1-3 small
  cancel_slices,        // K = 128: slice 1 = -slice 0 and slice 3 = -slice 2 in A, B nearly repeated
  exact_cancel_slices,  // as cancel_slices with B repeated exactly (+-0 codes too): exact zero sums
  nan_slice,            // K = 128: NaN codes in one slice only
  small_integers,       // |value| <= 3: every sum exact; the mapping tests
};

enum class Accum {
  zero,         // +0
  products,     // binades -12..18, the size of the products
  wide,         // half products' size, half any binade -149..127
  tiny,         // binades -149..-100 (fp32 subnormals below -126), a few +-0
  small,        // binades -24..-6, the size of fp8-subnormal products
  huge,         // binades 20..127
  signed_zero,  // 40 % +0, 40 % -0, the rest wide
  special,      // +-inf, NaNs (quiet, signalling, negative, with payloads), +-FLT_MAX, +-0 among wide
  any,          // +0, -0, tiny, products' size and huge mixed
  small_integers,
};

struct ModeSpec {
  const char* name;
  Operands operands;
  Accum accum;
  int scale_d;  // 1, or 0: the instruction ignores C (wgmma only)
};

// The modes of a K = 128 chain dump, the same for both instructions' probes (a record's mode number
// is its index here), so that their chain dumps are drawn alike and can be set side by side.
inline constexpr ModeSpec kChainModes[] = {
    {"uniform", Operands::uniform, Accum::products, 1},
    {"narrow exponents", Operands::narrow, Accum::products, 1},
    {"scaled slices", Operands::scaled_slices, Accum::products, 1},
    {"cancellation across slices", Operands::cancel_slices, Accum::products, 1},
    {"NaN codes in one slice, C inf/NaN", Operands::nan_slice, Accum::special, 1},
    {"exact cancellation, C = +-0", Operands::exact_cancel_slices, Accum::signed_zero, 1},
    {"fp8 subnormals, tiny C", Operands::subnormal, Accum::tiny, 1},
    {"sparse zeros, huge C", Operands::sparse, Accum::huge, 1},
};

// Prints a dump's mode numbers and names into the run log.
inline void print_modes(const char* file, const ModeSpec* modes, int count, int first) {
  std::printf("%s modes:", file);
  for (int i = 0; i < count; ++i) std::printf(" %d=%s;", first + i, modes[i].name);
  std::printf("\n");
}

void draw_operands(Rng& rng, Operands kind, const Tile& tile);
void draw_accum(Rng& rng, Accum kind, const Tile& tile);

}  // namespace probes
