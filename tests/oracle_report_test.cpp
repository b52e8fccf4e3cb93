// Determinism, the poison protocol, and the reports (text and JSON schema
// dsa-oracle/report/1) that collect every comparator's verdict.
#include <gtest/gtest.h>

#include "dsa/error.hpp"
#include "dsa/oracle/float_bits.hpp"
#include "dsa/oracle/report.hpp"
#include "oracle_support.hpp"

namespace dsa::oracle {
namespace {

using nlohmann::json;
using testing::kInf;
using testing::make_indices;
using testing::make_logits;

TEST(OracleDeterminism, SameSetsInAnyOrderPassOtherSetsAreNamed) {
  const TopkIndices a = make_indices(3, 3, {0, 1, 2, 5, 4, -1, 7, 8, 9});
  const TopkIndices b = make_indices(3, 3, {2, 0, 1, -1, 4, 5, 7, 8, 6});
  const auto v = check_determinism(view(a), view(b));
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.rows_differing, 1);
  ASSERT_EQ(v.differing_rows.size(), 1u);
  EXPECT_EQ(v.differing_rows[0].row, 2);
  EXPECT_EQ(v.differing_rows[0].only_first, std::vector<int32_t>{9});
  EXPECT_EQ(v.differing_rows[0].only_second, std::vector<int32_t>{6});
  EXPECT_TRUE(check_determinism(view(a), view(a)).passed);
  const TopkIndices other_shape = make_indices(3, 2, {});
  EXPECT_THROW(check_determinism(view(a), view(other_shape)), InvalidInput);
}

TEST(OraclePoison, TheFloatPoisonIsASignallingNanThatArithmeticNeverReturns) {
  const float p = float_from_bits(kPoisonF32Bits);
  EXPECT_TRUE(std::isnan(p));
  EXPECT_EQ(kPoisonF32Bits & 0x00400000u, 0u);  // quiet bit clear
  EXPECT_EQ(kPoisonBf16AsF32Bits & 0x00400000u, 0u);
  volatile float x = p, one = 1.0f;
  EXPECT_NE(float_bits(x + one), kPoisonF32Bits);  // the result is quietened
  EXPECT_NE(float_bits(x * one), kPoisonF32Bits);
  EXPECT_LT(kPoisonI32, -1);
}

TEST(OraclePoison, SurvivorsAreReportedWithTheirPositions) {
  Logits out = make_logits(3, 5, {});
  fill_poison(out.values);
  // The "kernel" writes rows 0 and 2 over their windows, row 1 leaves column 2.
  const RowBounds bounds{{0, 0, 1}, {3, 4, 5}};
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = bounds.start[size_t(r)]; c < bounds.end[size_t(r)]; ++c)
      if (!(r == 1 && c == 2)) out.row(r)[c] = float(c);
  const auto v = check_written(out, bounds);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.entries_checked, 3 + 4 + 4);
  EXPECT_EQ(v.survivors, 1);
  ASSERT_EQ(v.first_survivors.size(), 1u);
  EXPECT_EQ(v.first_survivors[0].row, 1);
  EXPECT_EQ(v.first_survivors[0].col, 2);
  // Past the rows kernels may leave the buffer as it was; the whole buffer is another matter.
  EXPECT_EQ(check_written(out, "logits").survivors, 1 + 2 + 1 + 1);

  TopkIndices t = make_indices(2, 4, {});
  fill_poison(t.indices);
  std::fill(t.indices.begin(), t.indices.begin() + 7, 0);
  const auto iv = check_written(view(t), "topk_indices");
  EXPECT_EQ(iv.survivors, 1);
  EXPECT_EQ(iv.first_survivors.at(0).row, 1);
  EXPECT_EQ(iv.first_survivors.at(0).col, 3);
}

TEST(OraclePoison, PoisonedBuffersHaveTheOpsShapeAndNothingWritten) {
  const Logits f32 = poisoned_logits(2, 3);
  EXPECT_EQ(f32.rows, 2);
  EXPECT_EQ(f32.width, 3);
  EXPECT_EQ(check_written(f32, "logits").survivors, 6);
  const Logits bf16 = poisoned_logits(1, 4, kPoisonBf16AsF32Bits);
  EXPECT_EQ(check_written(bf16, "sparse_logits", kPoisonBf16AsF32Bits).survivors, 4);
  EXPECT_EQ(check_written(bf16, "sparse_logits", kPoisonF32Bits).survivors, 0);  // another pattern

  const TopkIndices t = poisoned_topk(3, 2);
  EXPECT_EQ(check_written(view(t), "topk_indices").survivors, 6);
  const CandidateBlocks b = poisoned_blocks(2, 3, 8);
  EXPECT_EQ(b.block_size, 8);
  EXPECT_EQ(check_written(view(b), "candidate_blocks").survivors, 6);
  const SparseBlocks s = poisoned_sparse(2, 4, 16);
  EXPECT_EQ(s.width(), 64);
  EXPECT_EQ(check_written(IndexMatrix{s.ids, s.rows, s.num_sparse}, "sparse_block_ids").survivors, 8);
  EXPECT_EQ(check_written(IndexMatrix{s.end, s.rows, 1}, "sparse_end").survivors, 2);

  EXPECT_EQ(poisoned_topk(0, 4).indices.size(), 0u);
  EXPECT_THROW(poisoned_logits(-1, 3), InvalidInput);
  EXPECT_THROW(poisoned_topk(2, -1), InvalidInput);
}

Report failing_report() {
  const Logits expected = make_logits(2, 3, {1, 2, testing::kNaN, 4, 5, 6});
  Logits actual = expected;
  actual.values[4] = -kInf;
  const std::vector<int64_t> lens{3, 3};
  const TopkIndices topk = make_indices(2, 2, {2, 2, 2, 1});
  const TopkIndices again = make_indices(2, 2, {2, 1, 2, 1});
  Report report("case_0007");
  report.add("logits", check_logits(actual, expected, lens));
  report.add("topk", check_topk(view(topk), expected, lens));
  report.add("determinism", check_determinism(view(topk), view(again)));
  report.add("written", check_written(view(topk), "topk_indices"));
  return report;
}

TEST(OracleReport, JsonFollowsTheVersionedSchema) {
  const Report report = failing_report();
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.failed_count(), 3);
  const json j = json::parse(report.to_json().dump());  // well-formed text, NaN included
  EXPECT_EQ(j.at("schema"), "dsa-oracle/report/1");
  EXPECT_EQ(j.at("title"), "case_0007");
  EXPECT_EQ(j.at("passed"), false);
  EXPECT_EQ(j.at("checks_total"), 4);
  EXPECT_EQ(j.at("checks_failed"), 3);
  const auto& checks = j.at("checks");
  ASSERT_EQ(checks.size(), 4u);
  for (const auto& c : checks)
    for (const char* key : {"label", "check", "passed", "summary", "details"}) EXPECT_TRUE(c.contains(key)) << key;
  const auto& logits = checks[0].at("details");
  EXPECT_EQ(checks[0].at("check"), "logits");
  EXPECT_EQ(logits.at("mode"), "bitwise");
  EXPECT_EQ(logits.at("mismatches"), 1);
  EXPECT_EQ(logits.at("nan_matched"), 1);
  const auto& m = logits.at("first_mismatches").at(0);
  EXPECT_EQ(m.at("row"), 1);
  EXPECT_EQ(m.at("col"), 1);
  EXPECT_EQ(m.at("actual"), "-inf");
  EXPECT_EQ(m.at("expected"), 5.0);
  EXPECT_EQ(m.at("actual_bits"), "0xff800000");
  EXPECT_EQ(m.at("expected_bits"), "0x40a00000");
  const auto& topk = checks[1].at("details");
  EXPECT_EQ(checks[1].at("check"), "topk");
  EXPECT_EQ(topk.at("duplicates"), 1);
  EXPECT_EQ(topk.at("failed_rows").at(0).at("row"), 0);
  EXPECT_EQ(topk.at("failed_rows").at(0).at("cut"), 2.0);
  EXPECT_EQ(checks[2].at("details").at("rows_differing"), 1);
  EXPECT_EQ(checks[3].at("passed"), true);
  EXPECT_EQ(checks[3].at("details").at("poison_bits"), "0x80005a5a");
}

TEST(OracleReport, TextPutsFailuresFirstWithTheirTables) {
  const std::string text = failing_report().to_text();
  EXPECT_EQ(text.rfind("case_0007\n[logits] logits: FAIL", 0), 0u) << text;
  EXPECT_NE(text.find("first differing entries"), std::string::npos);
  EXPECT_NE(text.find("0xff800000"), std::string::npos);
  EXPECT_NE(text.find("[topk] topk: FAIL"), std::string::npos);
  EXPECT_LT(text.find("[determinism] determinism: FAIL"), text.find("[written] written(topk_indices): PASS"));
  EXPECT_NE(text.find("4 checks, 3 failed: FAIL"), std::string::npos);
}

TEST(OracleReport, AppendPrefixesLabelsAndAPassingReportPasses) {
  Report all("campaign");
  const std::vector<int64_t> lens{2};
  const Logits l = make_logits(1, 2, {1, 2});
  Report one;
  one.add("logits", check_logits(l, l, lens));
  all.append(one, "case_1/");
  all.append(one, "case_2/");
  EXPECT_TRUE(all.passed());
  ASSERT_EQ(all.entries().size(), 2u);
  EXPECT_EQ(all.entries()[1].label, "case_2/logits");
  EXPECT_EQ(all.to_json().at("passed"), true);
  all.add(Report::Entry{"case_1/manifest", "manifest", true, "manifest: PASS  sha256 matches", "", json::object()});
  EXPECT_EQ(all.to_json().at("checks").at(2).at("check"), "manifest");
  all.append(failing_report(), "case_3/");
  EXPECT_FALSE(all.passed());
  EXPECT_EQ(all.to_json().at("checks_failed"), 3);
}

TEST(OracleReport, WorstRowsFirstInTheTopkTable) {
  const Logits l = make_logits(3, 4, {3, 2, 1, 0, 3, 2, 1, 0, 3, 2, 1, 0});
  const TopkIndices t = make_indices(3, 2, {0, 2, 3, 3, 0, 1});
  const std::vector<int64_t> lens{4, 4, 4};
  const std::string table = format_table(check_topk(view(t), l, lens));
  EXPECT_LT(table.find("\n        1 "), table.find("\n        0 ")) << table;
}

}  // namespace
}  // namespace dsa::oracle
