// Checked arithmetic for sizes from file fields (dsa/checked.hpp).
#include "dsa/checked.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace dsa {
namespace {

TEST(Checked, ProductsAndSumsThatFitAreExact) {
  EXPECT_EQ(uint64_t(6408) * 3, checked_mul<uint64_t>(6408, 3, "count"));
  EXPECT_EQ(int64_t(1) << 62, checked_mul<int64_t>(int64_t(1) << 31, int64_t(1) << 31, "n"));
  EXPECT_EQ(std::numeric_limits<int32_t>::max(), checked_add<int32_t>(std::numeric_limits<int32_t>::max() - 1, 1, "n"));
  EXPECT_EQ(int64_t(2 * 3 * 7), checked_product<int64_t>(std::vector<int>{2, 3, 7}, "shape"));
}

TEST(Checked, OverflowIsBadInputNamingTheField) {
  try {
    checked_mul<uint64_t>(3 + (uint64_t(1) << 61), 6408, "count");  // wraps to 3 x 6408 unchecked
    ADD_FAILURE() << "no throw";
  } catch (const InvalidInput& e) {
    EXPECT_EQ("count", e.argument());
    EXPECT_NE(std::string(e.what()).find("overflows 64-bit"), std::string::npos) << e.what();
  }
  EXPECT_THROW(checked_add<uint32_t>(std::numeric_limits<uint32_t>::max(), 1, "bytes"), InvalidInput);
  EXPECT_THROW(checked_mul<int64_t>(std::numeric_limits<int64_t>::min(), -1, "n"), InvalidInput);
  EXPECT_THROW(checked_product<int64_t>(std::vector<int64_t>{1 << 30, 1 << 30, 1 << 30}, "shape"), InvalidInput);
}

TEST(Checked, AProductRefusesAValueOutsideItsType) {
  // A negative dimension read into an unsigned size would wrap to a huge one.
  EXPECT_THROW(checked_product<uint64_t>(std::vector<int64_t>{4, -1}, "shape"), InvalidInput);
  EXPECT_THROW(checked_product<int32_t>(std::vector<int64_t>{int64_t(1) << 40}, "shape"), InvalidInput);
}

}  // namespace
}  // namespace dsa
