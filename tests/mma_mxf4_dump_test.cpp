// Dumps of the block-scaled MXFP4 instruction (tcgen05 kind::mxf4, m64n8k64;
// the layout of ../shared/data/README.md, 6548-byte records) through the dump
// checker and `dsa-oracle mma-check`. No such dump was made outside the project
// yet, so the records here are made by hand, their D values worked out in the
// comments, not by the model.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "build_paths.hpp"
#include "dsa/formats.hpp"
#include "dsa/mma/dump_check.hpp"
#include "mma_test_support.hpp"

namespace dsa::mma {
namespace {

namespace fs = std::filesystem;
using testing::kMxf4;
using testing::mma_check;
using testing::write_temp;

constexpr int kM = 64, kN = 8, kK = 64;

// One record: A[64][32] packed e2m1, SA[64][2], B[8][32], SB[8][2], C[64][8], D[64][8], mode.
struct Mxf4Record {
  uint8_t a[kM][kK / 2] = {};
  uint8_t sa[kM][2];
  uint8_t b[kN][kK / 2] = {};
  uint8_t sb[kN][2];
  float c[kM][kN] = {};
  float d[kM][kN] = {};
  int32_t mode = 0;

  Mxf4Record() {
    std::memset(sa, 127, sizeof sa);  // scales 2^0
    std::memset(sb, 127, sizeof sb);
  }
  static void put(uint8_t* row, int k, float v) {
    const uint8_t nibble = float_to_e2m1(v);
    if (e2m1_to_float(nibble) != v) throw std::invalid_argument("not an e2m1 value");
    row[k / 2] = k % 2 ? uint8_t((row[k / 2] & 0x0f) | (nibble << 4)) : uint8_t((row[k / 2] & 0xf0) | nibble);
  }
  static constexpr size_t kBytes = 6548;
  void append_to(std::vector<uint8_t>& out) const {
    const size_t at = out.size();
    out.resize(at + kBytes);
    uint8_t* dst = out.data() + at;
    auto add = [&](const void* p, size_t n) {
      std::memcpy(dst, p, n);
      dst += n;
    };
    add(a, sizeof a);
    add(sa, sizeof sa);
    add(b, sizeof b);
    add(sb, sizeof sb);
    add(c, sizeof c);
    add(d, sizeof d);
    add(&mode, sizeof mode);
  }
};
static_assert(sizeof(Mxf4Record::a) + sizeof(Mxf4Record::sa) + sizeof(Mxf4Record::b) + sizeof(Mxf4Record::sb) +
                  sizeof(Mxf4Record::c) + sizeof(Mxf4Record::d) + 4 ==
              Mxf4Record::kBytes);

// Every output D[m][n] = A[m] . B[n] (+ C) is +0 (no nonzero product, C = 0) except:
//   D[0][0] = 1.5 * 2 = 3 (A[0][0] = 1.5, B[0][0] = 2, scales 2^0);
//   D[0][3] = 1.5 * 4 = 6 and D[2][0] = 6 * 2 = 12 (the same rows crossed);
//   D[1][2] = C[1][2] = 0.25 (no product: C alone);
//   D[2][3] = 24: A[2][0] = 6, B[3][0] = 4 make 24 at exponent 0 (X = 0, grid
//     2^-35); A[2][32] = -0.5 with SA[2][1] = 2^-40 and B[3][32] = 0.5 make
//     -2^-42, truncated toward zero to 0. (Rounding the exact 24 - 2^-42 toward
//     zero instead would give 23.999998, 0x41bfffff.)
//   D[5][7] = 2^-20 * 3: A[5][16] = 3, B[7][16] = 1, SA[5][0] = 2^-10, SB[7][0] = 2^-10.
Mxf4Record worked_record() {
  Mxf4Record r;
  Mxf4Record::put(r.a[0], 0, 1.5f);
  Mxf4Record::put(r.b[0], 0, 2.0f);
  r.d[0][0] = 3.0f;
  r.d[0][3] = 6.0f;
  r.d[2][0] = 12.0f;
  r.c[1][2] = 0.25f;
  r.d[1][2] = 0.25f;
  Mxf4Record::put(r.a[2], 0, 6.0f);
  Mxf4Record::put(r.b[3], 0, 4.0f);
  Mxf4Record::put(r.a[2], 32, -0.5f);
  r.sa[2][1] = 127 - 40;
  Mxf4Record::put(r.b[3], 32, 0.5f);
  r.d[2][3] = 24.0f;
  Mxf4Record::put(r.a[5], 16, 3.0f);
  Mxf4Record::put(r.b[7], 16, 1.0f);
  r.sa[5][0] = 127 - 10;
  r.sb[7][0] = 127 - 10;
  r.d[5][7] = 3.0f * std::ldexp(1.0f, -20);
  return r;
}

TEST(Mxf4Dumps, TheHeaderlessRecordIsTheSharedLayout) {
  const DumpLayout l = headerless_layout(kMxf4, DumpFormat::single);
  EXPECT_EQ(64, l.m);
  EXPECT_EQ(8, l.n);
  EXPECT_EQ(64, l.k);
  EXPECT_EQ(32, l.code_bytes());
  EXPECT_EQ(2, l.scale_bytes());
  EXPECT_EQ(6548, l.record_bytes(kMxf4, DumpFormat::single));
  // Our chain record (K = 128, two steps): 4096 + 256 + 512 + 32 bytes of operands, five
  // fp32 arrays (C, Dc, D0, Ds0, Ds1) of 2048 bytes, mode and padding.
  const DumpLayout chain = headerless_layout(kMxf4, DumpFormat::chain);
  EXPECT_EQ(15144, chain.record_bytes(kMxf4, DumpFormat::chain));
}

TEST(Mxf4Dumps, HandWorkedRecordsMatchAndAWrongDIsReported) {
  std::vector<uint8_t> bytes;
  worked_record().append_to(bytes);
  Mxf4Record wrong = worked_record();
  wrong.mode = 1;
  wrong.d[2][3] = std::bit_cast<float>(0x41bfffffu);  // the exact sum rounded toward zero: not what the unit writes
  wrong.append_to(bytes);
  const fs::path p = write_temp("two.bin", bytes);
  const DumpCheck r = check_dump(p.string(), kMxf4, DumpFormat::single);
  EXPECT_EQ(2, r.records);
  EXPECT_EQ(2 * kM * kN, r.total.total);
  EXPECT_EQ(2 * kM * kN - 1, r.total.matched);
  ASSERT_EQ(1u, r.mismatches.size());
  EXPECT_EQ(1, r.mismatches[0].record);
  EXPECT_EQ(1, r.mismatches[0].mode);
  EXPECT_EQ(2, r.mismatches[0].m);
  EXPECT_EQ(3, r.mismatches[0].n);
  EXPECT_EQ(0x41bfffffu, r.mismatches[0].expected_bits);
  EXPECT_EQ(std::bit_cast<uint32_t>(24.0f), r.mismatches[0].got_bits);
  EXPECT_EQ(kM * kN, r.by_mode.at(0).matched);
  EXPECT_EQ(1, mma_check("--model sm100_tcgen05_mxf4_k64 '" + p.string() + "'"));
  // The first record alone passes.
  bytes.resize(6548);
  const fs::path one = write_temp("one.bin", bytes);
  EXPECT_TRUE(check_dump(one.string(), kMxf4, DumpFormat::single).passed());
  EXPECT_EQ(0, mma_check("--model sm100_tcgen05_mxf4_k64 '" + one.string() + "'"));
  // Its size is not a whole number of fp8 tcgen05 records (6404 bytes).
  EXPECT_EQ(2, mma_check("--model sm100_tcgen05_f8f6f4_e4m3 '" + one.string() + "'"));
  fs::remove(p);
  fs::remove(one);
}

TEST(Mxf4Dumps, ANanScaleGivesTheUnitsNan) {
  // SB[0][1] = 0xff: every output of column 0 is NaN, whatever its products.
  Mxf4Record r = worked_record();
  r.sb[0][1] = 0xff;
  for (int m = 0; m < kM; ++m) r.d[m][0] = std::bit_cast<float>(0x7fffffffu);
  std::vector<uint8_t> bytes;
  r.append_to(bytes);
  const fs::path p = write_temp("nan.bin", bytes);
  DumpCheckOptions options = default_check_options(kMxf4);
  options.nan_bits_exact = true;
  EXPECT_TRUE(check_dump(p.string(), kMxf4, DumpFormat::single, options).passed());
  fs::remove(p);
}

TEST(Mxf4Dumps, WithOurHeaderScaleDZeroIgnoresC) {
  // Headered records end with mode and scale_d; with scale_d = 0, C[1][2] = 0.25
  // is ignored and D[1][2] is +0.
  Mxf4Record r = worked_record();
  r.d[1][2] = 0.0f;
  std::vector<uint8_t> record;
  r.append_to(record);
  const int32_t scale_d = 0;
  record.resize(record.size() + 4);
  std::memcpy(record.data() + record.size() - 4, &scale_d, 4);
  DumpHeader h{};
  std::memcpy(h.magic, DumpHeader::kMagic, 8);
  h.header_bytes = sizeof(DumpHeader);
  h.format = 0;
  std::strncpy(h.model, "sm100_tcgen05_mxf4_k64", sizeof h.model);
  h.m = kM, h.n = kN, h.k = kK, h.count = 1;
  std::vector<uint8_t> bytes(sizeof h);
  std::memcpy(bytes.data(), &h, sizeof h);
  bytes.resize(sizeof h + record.size());
  std::memcpy(bytes.data() + sizeof h, record.data(), record.size());
  const fs::path p = write_temp("header.bin", bytes);
  const DumpCheck c = check_dump(p.string(), std::nullopt, std::nullopt);
  EXPECT_EQ(kMxf4, c.model);
  EXPECT_TRUE(c.passed()) << c.total.matched << " of " << c.total.total;
  EXPECT_EQ(0, mma_check("'" + p.string() + "'"));
  fs::remove(p);
}

}  // namespace
}  // namespace dsa::mma
