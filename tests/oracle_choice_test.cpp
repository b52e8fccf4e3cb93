// Two selections compared by what they chose: ties either way agree, a
// different value or -1 count does not, -inf choices are ignored on request,
// and a side holding an index outside its row is named.
#include <gtest/gtest.h>

#include "dsa/error.hpp"
#include "dsa/oracle/choice_check.hpp"
#include "oracle_support.hpp"

namespace dsa::oracle {
namespace {

using testing::kInf;
using testing::make_indices;
using testing::make_logits;

// Row 0 [0, 5): 4 2 2 1 -inf; row 1 [2, 6): 0 0 7 3 (columns 2..5).
const Logits kValues = make_logits(2, 6, {4, 2, 2, 1, -kInf, 0, /*row 1*/ 9, 9, 0, 0, 7, 3});
const RowBounds kBounds{{0, 2}, {5, 6}};

ChoiceVerdict compare(std::vector<int32_t> a, std::vector<int32_t> b, bool above_neg_inf_only = false) {
  return check_same_choice(view(make_indices(2, 3, std::move(a))), "first", view(make_indices(2, 3, std::move(b))),
                           "second", kValues, kBounds, above_neg_inf_only);
}

TEST(OracleChoice, TiesAndOrderMayDiffer) {
  EXPECT_TRUE(compare({0, 1, 3, 2, 3, 0}, {2, 0, 3, 3, 2, 1}).passed);  // 2 and 2 swap; row 1: 0 and 0 swap
}

TEST(OracleChoice, ADifferentValueIsNamed) {
  const auto v = compare({0, 1, 2, 2, 3, 0}, {0, 1, 3, 2, 3, 0});
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.rows_differing, 1);
  ASSERT_EQ(v.first_rows.size(), 1u);
  EXPECT_EQ(v.first_rows[0].row, 0);
  EXPECT_EQ(v.first_rows[0].only_first, std::vector<float>{2});
  EXPECT_EQ(v.first_rows[0].only_second, std::vector<float>{1});
  EXPECT_NE(format_table(v).find("values only in first: [2]"), std::string::npos);
}

TEST(OracleChoice, MinusOneCountsUnlessOnlyValuesAboveNegInfCount) {
  // Row 0: -inf (column 4) against -1.
  const auto v = compare({0, 1, 4, 2, 3, 0}, {0, 1, -1, 2, 3, 0});
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.first_rows.at(0).first_minus_one, 0);
  EXPECT_EQ(v.first_rows.at(0).second_minus_one, 1);
  EXPECT_TRUE(compare({0, 1, 4, 2, 3, 0}, {0, 1, -1, 2, 3, 0}, true).passed);
}

TEST(OracleChoice, IndicesOutsideTheRowOrRepeatedAreNamed) {
  const auto outside = compare({0, 1, 2, 2, 3, 4}, {0, 1, 2, 2, 3, 0});  // row 1 has 4 columns
  ASSERT_EQ(outside.first_rows.size(), 1u);
  EXPECT_NE(outside.first_rows[0].problem.find("first: slot 2 holds 4"), std::string::npos);
  const auto repeated = compare({0, 1, 2, 2, 3, 0}, {0, 0, 2, 2, 3, 0});
  EXPECT_NE(repeated.first_rows.at(0).problem.find("second: slot 1 repeats index 0"), std::string::npos);
}

TEST(OracleChoice, ShapesThatDifferAreInvalidInput) {
  EXPECT_THROW(
      check_same_choice(view(make_indices(2, 3, {})), "a", view(make_indices(2, 2, {})), "b", kValues, kBounds),
      InvalidInput);
  EXPECT_THROW(check_same_choice(view(make_indices(2, 3, {})), "a", view(make_indices(2, 3, {})), "b", kValues,
                                 RowBounds{{0, 0}, {5, 7}}),
               InvalidInput);
}

}  // namespace
}  // namespace dsa::oracle
