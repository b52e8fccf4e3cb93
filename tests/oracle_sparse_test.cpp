// The SM100 sparse form's ids and ends: equality, with the first differing
// slot of each row named, counts complete, shapes refused by name.
#include <gtest/gtest.h>

#include "dsa/error.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/sparse_check.hpp"

namespace dsa::oracle {
namespace {

SparseBlocks three_rows() {
  return SparseBlocks{3, 4, 8, {0, 1, 2, 2, /*row 1*/ 5, 5, 5, 5, /*row 2*/ 1, 3, 4, 6}, {20, 0, 32}};
}

TEST(OracleSparse, EqualIdsAndEndsPass) {
  const auto v = check_sparse_blocks(three_rows(), three_rows());
  EXPECT_TRUE(v.passed);
  EXPECT_EQ(v.rows, 3);
  EXPECT_NE(summary_line(v).find("PASS"), std::string::npos);
}

TEST(OracleSparse, EachDifferenceIsCountedAndTheFirstNamed) {
  SparseBlocks a = three_rows();
  a.ids[2] = 3, a.ids[3] = 3;  // row 0: slots 2 and 3
  a.end[1] = 8;                // row 1: the end only
  a.ids[11] = 7;               // row 2: the last slot
  const auto v = check_sparse_blocks(a, three_rows());
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.rows_differing, 3);
  EXPECT_EQ(v.ids_differing, 3);
  EXPECT_EQ(v.ends_differing, 1);
  ASSERT_EQ(v.first_rows.size(), 3u);
  EXPECT_EQ(v.first_rows[0].first_slot, 2);
  EXPECT_EQ(v.first_rows[0].actual_id, 3);
  EXPECT_EQ(v.first_rows[0].expected_id, 2);
  EXPECT_EQ(v.first_rows[0].slots_differing, 2);
  EXPECT_EQ(v.first_rows[1].first_slot, -1);
  EXPECT_EQ(v.first_rows[1].actual_end, 8);
  EXPECT_EQ(v.first_rows[1].expected_end, 0);
  EXPECT_EQ(check_sparse_blocks(a, three_rows(), 1).first_rows.size(), 1u);
  Report report;
  report.add("case/sparse_block_ids", v);
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.to_json()["checks"][0]["check"], "sparse_blocks");
  EXPECT_EQ(report.to_json()["checks"][0]["details"]["differing_rows"][2]["first_slot"], 3);
}

TEST(OracleSparse, ShapesThatDifferAreInvalidInput) {
  SparseBlocks fewer = three_rows();
  fewer.ids.pop_back();
  EXPECT_THROW(check_sparse_blocks(fewer, three_rows()), InvalidInput);
  SparseBlocks other_sbk = three_rows();
  other_sbk.sparse_block_kv = 16;
  EXPECT_THROW(check_sparse_blocks(other_sbk, three_rows()), InvalidInput);
  SparseBlocks no_end = three_rows();
  no_end.end.clear();
  EXPECT_THROW(check_sparse_blocks(three_rows(), no_end), InvalidInput);
}

}  // namespace
}  // namespace dsa::oracle
