// Issue 11 §3: files and folders. A folder (or a symlink to one) where a file
// is expected is named and the other cases are still judged; outputs are
// checked writable before any work; stale temporary files are removed and
// named; manifests that repeat a case or disagree with its op are refused;
// fuzz-merge errors name the file, the line and the field; check --ops; and
// the reports' wording (entries, +-inf, never written, extra blocks).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "cli_test_support.hpp"
#include "dsa/dataset/temp_files.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/report.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "test_support.hpp"

namespace dsa {
namespace {

namespace fs = std::filesystem;

class FolderScratch {
public:
  FolderScratch() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() / ("dsa_files_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~FolderScratch() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  fs::path operator/(const std::string& name) const { return root_ / name; }

private:
  fs::path root_;
};

const fs::path kEdge = fs::path(test::source_dir()) / "data" / "golden" / "exact" / "edge";

// A copy of the committed edge set: its golden files double as the outputs of a perfect kernel.
fs::path copy_edge(const FolderScratch& s, const std::string& name) {
  fs::copy(kEdge, s / name, fs::copy_options::recursive);
  return s / name;
}

TEST(FilesAndFolders, AFolderWhereACaseFileGoesIsNamedAndTheRestIsJudged) {
  const FolderScratch s;
  const fs::path golden = copy_edge(s, "golden"), outputs = copy_edge(s, "outputs");
  fs::remove(outputs / "edge_01_ties.safetensors");
  fs::create_directory(outputs / "edge_01_ties.safetensors");
  fs::remove(outputs / "edge_02_neg_inf_rows.safetensors");
  fs::create_directory(s / "elsewhere");
  fs::create_directory_symlink(s / "elsewhere", outputs / "edge_02_neg_inf_rows.safetensors");
  const test::CliRun r = test::run_cli("check --golden " + golden.string() + " --outputs " + outputs.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("edge_01_ties.safetensors: is a folder"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("edge_02_neg_inf_rows.safetensors: is a folder"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("7 cases: 5 passed, 0 failed, 2 bad input"), std::string::npos) << r.output;

  fs::remove(golden / "manifest.json");
  fs::create_directory(golden / "manifest.json");
  const test::CliRun m = test::run_cli("check --golden " + golden.string() + " --outputs " + outputs.string());
  EXPECT_EQ(m.exit_code, 2) << m.output;
  EXPECT_NE(m.output.find("manifest.json: is a folder"), std::string::npos) << m.output;
}

TEST(FilesAndFolders, OutputsAreCheckedWritableBeforeAnyWork) {
  const FolderScratch s;
  const std::string in = (kEdge / "edge_00_short_rows.safetensors").string();
  test::CliRun r = test::run_cli("reference --op decode_topk --profile exact --in " + in + " --out " +
                                 (s / "no_such_folder" / "x.safetensors").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
  fs::create_directory(s / "a_folder");
  r = test::run_cli("reference --op decode_topk --profile exact --in " + in + " --out " + (s / "a_folder").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is a folder, not a file"), std::string::npos) << r.output;
  std::ofstream(s / "a_file") << "x";
  r = test::run_cli("golden --preset edge --out " + (s / "a_file").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is a file, not a folder"), std::string::npos) << r.output;
}

TEST(FilesAndFolders, StaleTemporaryFilesAreRemovedAndNamed) {
  const FolderScratch s;
  // A PID no process has (the kernel's limit is below 2^22).
  const fs::path stale = s / ".x.safetensors.tmp.9999999";
  std::ofstream(stale) << "half a file";
  const fs::path mine = s / (".y.safetensors.tmp." + std::to_string(::getpid()));
  std::ofstream(mine) << "being written";
  const test::CliRun r =
      test::run_cli("reference --op decode_topk --profile exact --in " + (kEdge / "edge_00_short_rows.safetensors").string() +
                    " --out " + (s / "x.safetensors").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("removed .x.safetensors.tmp.9999999"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(mine));  // a live writer's file stays

  // What a signal handler removes: the registered file of a write in progress.
  dataset::register_temp_file(mine.string());
  dataset::remove_registered_temp_files();
  EXPECT_FALSE(fs::exists(mine));
  dataset::unregister_temp_file(mine.string());
}

TEST(FilesAndFolders, AManifestWhoseOpDisagreesWithItsFileIsRefused) {
  const FolderScratch s;
  const fs::path golden = copy_edge(s, "golden");
  std::ifstream in(golden / "manifest.json");
  std::string text{std::istreambuf_iterator<char>(in), {}};
  in.close();
  const std::string from = "\"op\": \"candidate_select\"";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"op\": \"candidate_topk\"");
  std::ofstream(golden / "manifest.json") << text;
  const test::CliRun r = test::run_cli("check --golden " + golden.string() + " --outputs " + kEdge.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("holds op candidate_select but the manifest lists it as op candidate_topk"), std::string::npos)
      << r.output;
}

TEST(FilesAndFolders, CheckOpsJudgesOnlyThoseAndReportsTheOthersNotRun) {
  const test::CliRun r =
      test::run_cli("check --golden " + kEdge.string() + " --outputs " + kEdge.string() + " --ops decode_topk");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("4 passed, 0 failed, 0 bad input, 3 not run"), std::string::npos) << r.output;
  const test::CliRun bad = test::run_cli("check --golden " + kEdge.string() + " --outputs " + kEdge.string() + " --ops topq");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
}

TEST(FilesAndFolders, FuzzMergeNamesTheFileTheLineAndTheField) {
  const FolderScratch s;
  std::ofstream(s / "a.jsonl") << R"({"schema":"dsa-oracle/fuzz/1","type":"campaign"})" << "\n"
                               << R"({"schema":"dsa-oracle/fuzz/1","type":"property","impl":"x","property":"p","cases":"7"})"
                               << "\n";
  test::CliRun r = test::run_cli("fuzz-merge " + (s / "a.jsonl").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("a.jsonl line 2: field \"cases\" is \"7\""), std::string::npos) << r.output;
  std::ofstream(s / "empty.jsonl") << "\n";
  r = test::run_cli("fuzz-merge " + (s / "empty.jsonl").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("nothing to merge"), std::string::npos) << r.output;
  EXPECT_EQ(test::run_cli("fuzz-merge --allow-empty " + (s / "empty.jsonl").string()).exit_code, 0);
}

TEST(FilesAndFolders, ReportsNameWhatHappened) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Logits expected{1, 4, {1.0f, 2.0f, -kInf, 3.0f}};
  Logits actual = expected;
  actual.values[0] = kInf;   // +inf where a finite value belongs
  actual.values[2] = 5.0f;   // finite where -inf belongs
  oracle::fill_poison(std::span<float>(actual.values.data() + 3, 1));  // never written
  oracle::LogitsCheckOptions o;
  o.poison_bits = oracle::kPoisonF32Bits;
  const oracle::LogitsVerdict v = oracle::check_logits(actual, expected, std::vector<int64_t>{4}, o);
  EXPECT_EQ(v.inf_vs_finite, 2);
  EXPECT_EQ(v.never_written, 1);
  const std::string table = oracle::format_table(v);
  EXPECT_NE(table.find("1 never written"), std::string::npos) << table;
  EXPECT_NE(table.find("2 +-inf against a finite value"), std::string::npos) << table;
  EXPECT_NE(table.find("inf, expected finite"), std::string::npos) << table;
  EXPECT_NE(table.find("finite, expected inf"), std::string::npos) << table;
  EXPECT_EQ(table.find("max |diff|"), std::string::npos) << table;  // no finite pair differs: no distance to show

  const oracle::LogitsVerdict ok = oracle::check_logits(expected, expected, std::vector<int64_t>{4});
  EXPECT_NE(oracle::format_table(ok).find("4 entries"), std::string::npos);
  EXPECT_EQ(oracle::format_table(ok).find("entrys"), std::string::npos);

  // A block past the row's end (scoring -inf) is an extra block, even in a slot that must hold -1.
  const Logits scores{1, 4, {kInf, 5.0f, -kInf, -kInf}};
  const std::vector<int32_t> blocks = {0, 1, 3};
  const oracle::SelectionVerdict sv = oracle::check_candidate_blocks(oracle::IndexMatrix{blocks, 1, 3}, scores);
  EXPECT_EQ(sv.extra, 1);
  EXPECT_EQ(sv.out_of_range, 0);
}

}  // namespace
}  // namespace dsa
