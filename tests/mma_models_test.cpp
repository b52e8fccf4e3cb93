// The models' interface: names, shapes, and that every entry point (one
// instruction, chains, bulk chain_dots) computes the same chain.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "dsa/error.hpp"
#include "dsa/formats.hpp"
#include "dsa/mma/models.hpp"
#include "dsa/profile.hpp"
#include "dsa/rng.hpp"
#include "mma_test_support.hpp"

namespace dsa::mma {
namespace {

using testing::bits;

// The models that read fp8 codes (exact among them); the block-scaled ones are tested in mma_sm100_rules_test.cpp.
std::vector<Model> fp8_models() {
  std::vector<Model> out;
  for (Model m : all_models())
    if (operands(m) != Operands::mxfp4) out.push_back(m);
  return out;
}

std::vector<Model> instruction_models() {
  std::vector<Model> out;
  for (Model m : fp8_models())
    if (m != Model::exact) out.push_back(m);
  return out;
}

// Random non-NaN codes of the model's format, with a share of zeros and of
// wide exponents, so that truncation happens often.
std::vector<uint8_t> random_codes(Rng& rng, Fp8Format f, size_t n) {
  std::vector<uint8_t> out(n);
  for (auto& c : out) {
    do {
      c = rng.bernoulli(0.1) ? 0 : uint8_t(rng.next_u32());
    } while (fp8_is_nan(f, c));
  }
  return out;
}

TEST(MmaModels, NamesRoundTrip) {
  for (Model m : all_models()) EXPECT_EQ(m, parse_model(to_string(m)));
  EXPECT_EQ(Model::sm90_wgmma_e4m3, parse_model("sm90_wgmma_e4m3"));
  EXPECT_THROW(parse_model("sm90_wgmma"), InvalidInput);
  EXPECT_EQ(16, instruction_k(Model::cdna3_mfma_f32_32x32x16_fp8));
  EXPECT_EQ(32, instruction_k(Model::cdna3_mfma_f32_16x16x32_fp8));
  EXPECT_EQ(Fp8Format::e4m3fnuz, operand_format(Model::cdna3_mfma_f32_16x16x32_fp8));
  EXPECT_EQ(Fp8Format::e4m3fn, operand_format(Model::sm100_tcgen05_f8f6f4_e4m3));
  // kind::mxf4 is its own model: K = 64, block-scaled operands, no fp8 format.
  EXPECT_EQ(Model::sm100_tcgen05_mxf4_k64, parse_model("sm100_tcgen05_mxf4_k64"));
  EXPECT_EQ(64, instruction_k(Model::sm100_tcgen05_mxf4_k64));
  EXPECT_EQ(Operands::mxfp4, operands(Model::sm100_tcgen05_mxf4_k64));
  EXPECT_EQ(Operands::e4m3fn, operands(Model::sm100_tcgen05_f8f6f4_e4m3));
  EXPECT_THROW(operand_format(Model::sm100_tcgen05_mxf4_k64), InvalidInput);
  for (Model m : all_models()) EXPECT_EQ(m == Model::exact, instruction_name(m).empty()) << to_string(m);
}

TEST(MmaModels, EveryProfileHasAModelThatReadsEachOfItsFormats) {
  // A profile names one model for fp8 entries and one for MXFP4 entries: each
  // format it takes must reach a model that reads it (exact reads every format).
  for (const std::string& name : profile_names()) {
    const Profile& p = find_profile(name);
    for (ElementFormat e : p.elements) {
      const Model m = p.mma_for(e);
      if (m == Model::exact) continue;
      if (e == ElementFormat::mxfp4)
        EXPECT_EQ(Operands::mxfp4, operands(m)) << name << ": " << to_string(m);
      else
        EXPECT_EQ(fp8_of(e), operand_format(m)) << name << ": " << to_string(m);
    }
  }
  EXPECT_EQ(Model::sm100_tcgen05_mxf4_k64, find_profile("deepgemm_sm100_bf16").mma_for(ElementFormat::mxfp4));
  EXPECT_EQ(Model::sm100_tcgen05_f8f6f4_e4m3, find_profile("deepgemm_sm100_bf16").mma_for(ElementFormat::e4m3fn));
}

TEST(MmaModels, BlockScaledModelsRefuseFp8EntryPointsAndTheOthersMxfp4Ones) {
  std::vector<uint8_t> codes(64, 0x22), scales(2, 127);
  float out = 0;
  const Model mx = Model::sm100_tcgen05_mxf4_k64, fp8 = Model::sm100_tcgen05_f8f6f4_e4m3;
  EXPECT_THROW(instruction(mx, codes.data(), codes.data(), 0.0f, false), InvalidInput);
  EXPECT_THROW(chain(mx, codes.data(), codes.data(), 64), InvalidInput);
  EXPECT_THROW(chain_dots(mx, codes.data(), 1, codes.data(), 1, 64, &out), InvalidInput);
  EXPECT_THROW(instruction_mxfp4(fp8, codes.data(), scales.data(), codes.data(), scales.data(), 0.0f, false),
               InvalidInput);
  EXPECT_THROW(chain_dots_mxfp4(fp8, codes.data(), scales.data(), 1, codes.data(), scales.data(), 1, 64, &out),
               InvalidInput);
}

TEST(MmaModels, RejectsBadLengths) {
  std::vector<uint8_t> codes(64, 0x38);
  for (Model m : fp8_models()) {
    EXPECT_THROW(chain(m, codes.data(), codes.data(), 48 % instruction_k(m) ? 48 : 8), InvalidInput);
    EXPECT_THROW(chain(m, codes.data(), codes.data(), 0), InvalidInput);
  }
  float out = 0;
  EXPECT_THROW(chain_dots(Model::sm90_wgmma_e4m3, codes.data(), 0, codes.data(), 1, 32, &out), InvalidInput);
}

// Operand vectors of several kinds: the bulk kernels (chain_blocks.hpp) take
// shortcuts that hold only for chains from zero, checked here against the
// scalar kernels pair by pair.
enum class Draw {
  uniform,
  quantised,
  cancelling,
  subnormal,
  sparse,
  with_nan,
  small_integers,
  narrow,
  narrow_with_tiny,
  rising,
  falling,  // each slice of 16 a few binades above (below) the one before: C far from the products
};

std::vector<uint8_t> draw_rows(Rng& rng, Fp8Format f, Draw draw, int rows, int d) {
  std::vector<uint8_t> out(size_t(rows) * d);
  for (int r = 0; r < rows; ++r) {
    uint8_t* row = out.data() + size_t(r) * d;
    for (int i = 0; i < d; ++i) {
      uint8_t c = 0;
      switch (draw) {
        case Draw::uniform:
          c = uint8_t(rng.next_u32());
          break;
        case Draw::quantised:
          c = float_to_fp8(f, float(rng.normal() * fp8_max(f) / 4));
          break;
        case Draw::cancelling:  // the second half negates the first: sums cancel to the last bits
          c = i < d / 2 ? uint8_t(rng.next_u32()) : float_to_fp8(f, -fp8_to_float(f, row[i - d / 2]));
          break;
        case Draw::subnormal:
          c = uint8_t((rng.next_u32() & 0x97) | (rng.bernoulli(0.5) ? 0 : 0x08));
          break;
        case Draw::sparse:
          c = rng.bernoulli(0.85) ? 0 : uint8_t(rng.next_u32());
          break;
        case Draw::with_nan:
          c = rng.bernoulli(0.01) ? (f == Fp8Format::e4m3fn ? 0x7f : 0x80) : uint8_t(rng.next_u32());
          break;
        case Draw::small_integers:
          c = float_to_fp8(f, float(rng.uniform_int(-7, 7)));
          break;
        case Draw::narrow:  // exponent fields within a window of 4 per row: no bit lost, mostly
        case Draw::narrow_with_tiny: {
          const int window = int((uint32_t(r) * 2654435761u >> 8) % 12);
          c = uint8_t((rng.next_u32() & 0x87) | ((window + rng.uniform_int(0, 3)) << 3));
          if (draw == Draw::narrow_with_tiny && rng.bernoulli(0.02)) c = uint8_t(rng.uniform_int(1, 15));
          break;
        }
        case Draw::rising:
        case Draw::falling: {
          const int slice = (i / 16) % 4, step = draw == Draw::rising ? slice : 3 - slice;
          c = uint8_t((rng.next_u32() & 0x87) | ((1 + 4 * step + rng.uniform_int(0, 2)) << 3));
          break;
        }
      }
      if (draw != Draw::with_nan && fp8_is_nan(f, c)) c = 0;
      row[i] = c;
    }
  }
  return out;
}

TEST(MmaModels, ChainDotsIsTheChainOfEveryPair) {
  Rng rng(7);
  for (Model m : fp8_models())
    for (Draw draw : {Draw::uniform, Draw::quantised, Draw::cancelling, Draw::subnormal, Draw::sparse, Draw::with_nan,
                      Draw::small_integers, Draw::narrow, Draw::narrow_with_tiny, Draw::rising, Draw::falling})
      for (int d : {instruction_k(m), 128, 256}) {
        const Fp8Format f = operand_format(m);
        const int heads = 4, tokens = 1 + int(rng.uniform_int(0, 40));  // partial blocks too
        const auto q = draw_rows(rng, f, draw, heads, d), k = draw_rows(rng, f, draw, tokens, d);
        std::vector<float> out(size_t(heads) * tokens);
        chain_dots(m, q.data(), heads, k.data(), tokens, d, out.data());
        for (int n = 0; n < tokens; ++n)
          for (int h = 0; h < heads; ++h) {
            const float expected = chain(m, q.data() + h * d, k.data() + n * d, d), got = out[size_t(n) * heads + h];
            if (std::isnan(expected)) {
              ASSERT_TRUE(std::isnan(got)) << to_string(m) << " draw " << int(draw) << " d " << d;
            } else {
              ASSERT_EQ(bits(expected), bits(got))
                  << to_string(m) << " draw " << int(draw) << " d " << d << " token " << n << " head " << h;
            }
          }
      }
}

TEST(MmaModels, ChainIsInstructionsInSequence) {
  Rng rng(11);
  for (Model m : instruction_models()) {
    const int ik = instruction_k(m), len = 4 * ik;
    for (int trial = 0; trial < 50; ++trial) {
      const auto a = random_codes(rng, operand_format(m), size_t(len)),
                 b = random_codes(rng, operand_format(m), size_t(len));
      const float c = float(rng.normal() * std::ldexp(1.0, int(rng.uniform_int(-30, 30))));
      float acc = instruction(m, a.data(), b.data(), c, true), zero = instruction(m, a.data(), b.data(), c, false);
      for (int j = 1; j < 4; ++j) {
        acc = instruction(m, a.data() + j * ik, b.data() + j * ik, acc, true);
        zero = instruction(m, a.data() + j * ik, b.data() + j * ik, zero, true);
      }
      ASSERT_EQ(bits(acc), bits(chain_from(m, a.data(), b.data(), len, c))) << to_string(m);
      ASSERT_EQ(bits(zero), bits(chain(m, a.data(), b.data(), len))) << to_string(m);
    }
  }
}

TEST(MmaModels, PromotedChainsAddEachInstructionFromZeroInFp32) {
  // Accumulation::promoted: each instruction from zero, its D added to an fp32
  // accumulator by an ordinary add. Spelled out here with single instructions;
  // the bulk path must give the same bits.
  Rng rng(29);
  for (Model m : instruction_models())
    for (Draw draw : {Draw::uniform, Draw::quantised, Draw::cancelling, Draw::with_nan, Draw::rising}) {
      const Fp8Format f = operand_format(m);
      const int ik = instruction_k(m), d = 128, heads = 3, tokens = 11;
      const auto q = draw_rows(rng, f, draw, heads, d), k = draw_rows(rng, f, draw, tokens, d);
      std::vector<float> out(size_t(heads) * tokens);
      chain_dots(m, q.data(), heads, k.data(), tokens, d, out.data(), Accumulation::promoted);
      for (int n = 0; n < tokens; ++n)
        for (int h = 0; h < heads; ++h) {
          const uint8_t *a = q.data() + h * d, *b = k.data() + n * d;
          float expected = instruction(m, a, b, 0.0f, false);
          for (int j = 1; j < d / ik; ++j) expected += instruction(m, a + j * ik, b + j * ik, 0.0f, false);
          const float c = float(rng.normal());
          float from_c = c;
          for (int j = 0; j < d / ik; ++j) from_c += instruction(m, a + j * ik, b + j * ik, 0.0f, false);
          const float scalar = chain(m, a, b, d, Accumulation::promoted), bulk = out[size_t(n) * heads + h];
          const float scalar_from_c = chain_from(m, a, b, d, c, Accumulation::promoted);
          if (std::isnan(expected)) {
            ASSERT_TRUE(std::isnan(scalar) && std::isnan(bulk)) << to_string(m);
            ASSERT_EQ(bits(instruction(m, a, b, std::numeric_limits<float>::quiet_NaN(), true)), bits(bulk))
                << to_string(m) << ": the unit's NaN";
          } else {
            ASSERT_EQ(bits(expected), bits(scalar)) << to_string(m) << " draw " << int(draw);
            ASSERT_EQ(bits(expected), bits(bulk)) << to_string(m) << " draw " << int(draw);
            ASSERT_EQ(bits(from_c), bits(scalar_from_c)) << to_string(m) << " draw " << int(draw);
          }
        }
    }
  // The exact model has no instructions to promote.
  std::vector<uint8_t> codes(32, 0x38);
  float out = 0;
  EXPECT_THROW(chain(Model::exact, codes.data(), codes.data(), 32, Accumulation::promoted), InvalidInput);
  EXPECT_THROW(chain_dots(Model::exact, codes.data(), 1, codes.data(), 1, 32, &out, Accumulation::promoted),
               InvalidInput);
}

TEST(MmaModels, CdnaFormsAgreeOnGroups) {
  // 16x16x32 is two groups of 16 in sequence: a chain of two 32x32x16 groups.
  Rng rng(13);
  for (int trial = 0; trial < 200; ++trial) {
    const auto a = random_codes(rng, Fp8Format::e4m3fnuz, 32), b = random_codes(rng, Fp8Format::e4m3fnuz, 32);
    const float c = float(rng.normal());
    ASSERT_EQ(bits(instruction(Model::cdna3_mfma_f32_16x16x32_fp8, a.data(), b.data(), c, true)),
              bits(chain_from(Model::cdna3_mfma_f32_32x32x16_fp8, a.data(), b.data(), 32, c)));
  }
}

TEST(MmaModels, NarrowSumsAreExactInEveryModel) {
  // Small integers (|a|, |b| <= 7 with one exponent): every partial sum fits
  // 13 bits, so every model gives the exact value.
  Rng rng(17);
  for (Model m : fp8_models()) {
    const Fp8Format f = operand_format(m);
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<uint8_t> a(128), b(128);
      for (int k = 0; k < 128; ++k) {
        a[size_t(k)] = float_to_fp8(f, float(rng.uniform_int(-7, 7)));
        b[size_t(k)] = float_to_fp8(f, float(rng.uniform_int(-7, 7)));
      }
      double exact = 0;
      for (int k = 0; k < 128; ++k) exact += double(fp8_to_float(f, a[size_t(k)])) * fp8_to_float(f, b[size_t(k)]);
      EXPECT_EQ(bits(float(exact)), bits(chain(m, a.data(), b.data(), 128))) << to_string(m);
    }
  }
}

TEST(MmaModels, ExactIsOneRoundingOfTheExactSum) {
  Rng rng(19);
  for (int trial = 0; trial < 200; ++trial) {
    const auto a = random_codes(rng, Fp8Format::e4m3fn, 256), b = random_codes(rng, Fp8Format::e4m3fn, 256);
    double exact = 0;  // exact in double (NUMERICS "Exact sums")
    for (int k = 0; k < 256; ++k) exact += double(e4m3fn_to_float(a[size_t(k)])) * e4m3fn_to_float(b[size_t(k)]);
    ASSERT_EQ(bits(float(exact)), bits(chain(Model::exact, a.data(), b.data(), 256)));
  }
  // With C: 2^100 + 1 rounds to 2^100, 2^-100 + a product keeps the product.
  std::vector<uint8_t> one(32, 0);
  one[0] = 0x38;  // 1.0
  EXPECT_EQ(bits(std::ldexp(1.0f, 100)),
            bits(chain_from(Model::exact, one.data(), one.data(), 32, std::ldexp(1.0f, 100))));
  // 64 + 2^-18 is a tie in fp32 (ulp 2^-17); C = 2^-149 breaks it upward.
  // A double sum would lose the C and round the tie to even (64).
  std::vector<uint8_t> a(32, 0), b(32, 0);
  a[0] = b[0] = float_to_e4m3fn(8);
  a[1] = b[1] = float_to_e4m3fn(std::ldexp(1.0f, -9));
  EXPECT_EQ(bits(64.0f + std::ldexp(1.0f, -17)),
            bits(chain_from(Model::exact, a.data(), b.data(), 32, std::ldexp(1.0f, -149))));
  EXPECT_EQ(bits(64.0f), bits(chain(Model::exact, a.data(), b.data(), 32)));
}

TEST(MmaModels, ExactDotsReadEitherFormat) {
  Rng rng(23);
  for (Fp8Format f : {Fp8Format::e4m3fn, Fp8Format::e4m3fnuz}) {
    const auto q = random_codes(rng, f, 2 * 64), k = random_codes(rng, f, 3 * 64);
    std::vector<float> out(6);
    exact_dots(f, q.data(), 2, k.data(), 3, 64, out.data());
    for (int n = 0; n < 3; ++n)
      for (int h = 0; h < 2; ++h) {
        double sum = 0;  // exact in double (NUMERICS "Exact sums")
        for (int d = 0; d < 64; ++d)
          sum += double(fp8_to_float(f, q[size_t(h * 64 + d)])) * fp8_to_float(f, k[size_t(n * 64 + d)]);
        EXPECT_EQ(bits(float(sum)), bits(out[size_t(n * 2 + h)]));
      }
  }
}

TEST(MmaModels, ModelsDifferWhereTheDatapathsDiffer) {
  // Cancellation with a small remainder: 13-bit wgmma loses it, 25-bit models keep it.
  std::vector<uint8_t> a(32, 0), b(32, 0);
  a[0] = float_to_e4m3fn(256), b[0] = float_to_e4m3fn(256);
  a[1] = float_to_e4m3fn(-256), b[1] = float_to_e4m3fn(240);
  a[2] = float_to_e4m3fn(0.1875f), b[2] = float_to_e4m3fn(std::ldexp(1.0f, -6));
  const float wgmma = instruction(Model::sm90_wgmma_e4m3, a.data(), b.data(), 0, false);
  const float tc = instruction(Model::sm100_tcgen05_f8f6f4_e4m3, a.data(), b.data(), 0, false);
  EXPECT_EQ(4096.0f, wgmma);
  EXPECT_EQ(4096.0f + std::ldexp(1.0f, -9), tc);
}

}  // namespace
}  // namespace dsa::mma
