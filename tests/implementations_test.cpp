// The table of implementations: one entry each, factories that make what
// they name, and contracts whose ops are exactly the ops implemented.
#include "dsa/optimized/implementations.hpp"

#include <gtest/gtest.h>

#include <set>

#include "dsa/error.hpp"
#include "dsa/fuzz/implementations.hpp"
#include "ops_test_support.hpp"

namespace dsa::optimized {
namespace {

TEST(Implementations, OneEntryEachTheReferenceFirst) {
  const auto& table = implementations();
  ASSERT_FALSE(table.empty());
  EXPECT_EQ(table.front().name, make_reference_ops()->name());
  std::set<std::string> names;
  for (const Implementation& entry : table) {
    EXPECT_TRUE(names.insert(entry.name).second) << entry.name << " listed twice";
    EXPECT_FALSE(entry.description.empty()) << entry.name;
    EXPECT_FALSE(entry.contract.ops.empty()) << entry.name;
    if (entry.device == Device::cpu) {
      EXPECT_TRUE(entry.available()) << entry.name;
    }
    if (!entry.available()) continue;
    EXPECT_EQ(entry.make()->name(), entry.name);
    EXPECT_EQ(&find_implementation(entry.name), &entry);
  }
  EXPECT_EQ(implementation_names().size(), table.size());
  // The fuzzer's names are the table's, then the one dynamic form.
  const auto fuzz_names = fuzz::implementation_names();
  ASSERT_EQ(fuzz_names.size(), table.size() + 1);
  EXPECT_EQ(fuzz_names.back(), std::string(fuzz::kExternalPrefix) + "COMMAND");
  try {
    find_implementation("no_such_impl");
    ADD_FAILURE() << "an unknown name was found";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "impl");
    EXPECT_NE(std::string(e.what()).find(table.back().name), std::string::npos) << e.what();
  }
}

// The contract's ops are the ops it implements: every op outside throws
// Unsupported, none inside does (an empty call is refused as bad input).
TEST(Implementations, ContractOpsAreTheOpsImplemented) {
  for (const Implementation& entry : implementations()) {
    if (!entry.available()) continue;
    auto impl = entry.make();
    for (const Op op : all_ops()) {
      bool unsupported = false;
      try {
        test::call(*impl, op);
      } catch (const Unsupported&) {
        unsupported = true;
      } catch (const InvalidInput&) {
      }
      EXPECT_EQ(unsupported, !entry.takes(op)) << entry.name << " " << to_string(op);
    }
  }
}

TEST(Implementations, EveryOpHasTheReference) {
  for (const Op op : all_ops()) {
    const auto taking = implementations_taking(op);
    ASSERT_FALSE(taking.empty()) << to_string(op);
    EXPECT_EQ(taking.front(), &implementations().front());
  }
  EXPECT_EQ(to_string(Device::cuda), "cuda");
}

}  // namespace
}  // namespace dsa::optimized
