// The committed golden sets (data/golden/<profile>/<preset>) regenerate byte
// for byte: a change that alters the reference's output fails here until the
// sets are regenerated with data/golden/regenerate.sh (and the change reviewed).
#include <gtest/gtest.h>

#include <algorithm>

#include "dsa/dataset/check.hpp"
#include "dsa/dataset/manifest.hpp"
#include "dsa/optimized/implementations.hpp"
#include "golden_test_support.hpp"

namespace dsa::golden_test {
namespace {

std::vector<std::string> committed_sets() {
  std::vector<std::string> sets;
  const fs::path root = fs::path(source_dir()) / "data" / "golden";
  std::error_code ec;
  for (const auto& profile : fs::directory_iterator(root, ec))
    for (const auto& preset : fs::directory_iterator(profile.path(), ec))
      if (fs::exists(preset.path() / "manifest.json"))
        sets.push_back(profile.path().filename().string() + "/" + preset.path().filename().string());
  std::sort(sets.begin(), sets.end());
  return sets;
}

TEST(GoldenRegen, EveryProfileHasASet) {
  const auto sets = committed_sets();
  for (const auto& profile : profile_names())
    EXPECT_TRUE(std::any_of(sets.begin(), sets.end(), [&](const std::string& s) { return s.rfind(profile + "/", 0) == 0; }))
        << "no committed golden set for profile " << profile;
  uintmax_t bytes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(source_dir()) / "data" / "golden"))
    if (entry.is_regular_file()) bytes += entry.file_size();
  EXPECT_LT(bytes, uintmax_t(20) << 20) << "the committed golden sets must stay under 20 MB together";
}

class GoldenRegen : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenRegen, RegeneratesByteForByte) {
  const fs::path committed = fs::path(source_dir()) / "data" / "golden" / GetParam();
  const dataset::Manifest m = dataset::read_manifest((committed / "manifest.json").string());
  EXPECT_EQ(committed.parent_path().filename().string(), m.profile);
  EXPECT_EQ(committed.filename().string(), m.preset);
  TempDir dir;
  const dataset::Manifest fresh = dataset::write_golden_set(dir / "set", {m.preset, m.seed, m.profile, m.size});
  ASSERT_EQ(fresh.cases.size(), m.cases.size());
  for (size_t i = 0; i < m.cases.size(); ++i) {
    EXPECT_EQ(fresh.cases[i].file, m.cases[i].file);
    EXPECT_EQ(fresh.cases[i].sha256, m.cases[i].sha256)
        << m.cases[i].file << " changed: the reference's output (or the case) is not what was committed";
    EXPECT_TRUE(read_bytes(dir / ("set/" + m.cases[i].file)) == read_bytes((committed / m.cases[i].file).string()))
        << m.cases[i].file;
  }
  EXPECT_TRUE(read_bytes(dir / "set/manifest.json") == read_bytes((committed / "manifest.json").string()));
}

// The committed expected outputs, read back, pass the checker as a kernel's outputs would.
TEST_P(GoldenRegen, CommittedSetChecksAgainstItself) {
  const std::string committed = (fs::path(source_dir()) / "data" / "golden" / GetParam()).string();
  const dataset::SetCheck result = dataset::check_golden_set(committed, committed);
  EXPECT_EQ(result.exit_code(), 0) << result.report().to_text();
}

// The reference run in process through IndexerOps (`check --impl reference`)
// passes every case of every committed set, with every stage its own.
TEST_P(GoldenRegen, ReferenceInProcessPasses) {
  const std::string committed = (fs::path(source_dir()) / "data" / "golden" / GetParam()).string();
  const optimized::Implementation& reference = optimized::find_implementation("reference");
  const auto impl = reference.make();
  const dataset::SetCheck result = dataset::check_implementation(committed, *impl, reference.contract);
  EXPECT_EQ(result.exit_code(), 0) << result.report().to_text();
  EXPECT_EQ(result.count(dataset::CaseStatus::passed), result.cases.size());
  for (const auto& c : result.cases) {
    EXPECT_FALSE(c.ops_run.empty()) << c.file;
    EXPECT_TRUE(c.from_golden.empty()) << c.file << ": the reference takes every stage";
  }
}

INSTANTIATE_TEST_SUITE_P(Committed, GoldenRegen, ::testing::ValuesIn(committed_sets()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '/', '_');
                           return name;
                         });

}  // namespace
}  // namespace dsa::golden_test
