// Issue 11 §1: nothing from outside crashes the tool. Replay descriptions are
// validated like every other input (exit 2 naming the field), sizes past 64
// bits or past the machine's memory are refused up front with the estimate
// and the bound, and no message embeds an unbounded input.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_test_support.hpp"
#include "dsa/checked.hpp"
#include "dsa/dataset/json_input.hpp"
#include "dsa/dataset/manifest.hpp"
#include "dsa/dataset/safetensors.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/cases.hpp"
#include "dsa/fuzz/generators.hpp"
#include "fuzz_test_support.hpp"
#include "test_support.hpp"

namespace dsa {
namespace {

namespace fs = std::filesystem;

std::string replay_error(const std::string& json) {
  try {
    fuzz::case_from_json(dataset::parse_json(json, "replay"));
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "replay") << e.what();
    return e.what();
  }
  return "<accepted>";
}

// A fixed memory bound, so that "more than the machine has" means the same on every machine.
class MemoryLimit {
public:
  explicit MemoryLimit(const char* value) {
    if (const char* old = std::getenv("DSA_MEMORY_LIMIT")) old_ = old;
    setenv("DSA_MEMORY_LIMIT", value, 1);
  }
  ~MemoryLimit() {
    if (old_.empty()) unsetenv("DSA_MEMORY_LIMIT");
    else setenv("DSA_MEMORY_LIMIT", old_.c_str(), 1);
  }

private:
  std::string old_;
};

const std::string kTopk = R"({"kind":"topk","k":4,"width_pad":0,"tail":"garbage","seed":1,"rows":[[0,5,"normal",1]]})";

std::string with(std::string json, const std::string& from, const std::string& to) {
  const size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return json.replace(at, from.size(), to);
}

std::string decode_case(const std::string& field, const std::string& value) {
  fuzz::DecodeCase c;
  c.seed = 1;
  c.requests = {{20, {}, 0, 1}};
  nlohmann::json j = fuzz::to_json(c);
  j[field] = nlohmann::json::parse(value);
  return j.dump();
}

TEST(InputBounds, MessagesAreBoundedWhateverTheyQuote) {
  const std::string mega(1 << 20, 'q');
  const InvalidInput e(mega, "value '" + mega + "'");
  EXPECT_LE(std::string(e.what()).size(), InvalidInput::kMaxMessage + 100);
  EXPECT_LE(e.argument().size(), InvalidInput::kMaxMessage + 100);
  EXPECT_EQ(excerpt("ab\ncd", 80), "ab\\x0acd");
  EXPECT_EQ(excerpt(mega, 4), "qqqq... (1048576 bytes)");
  EXPECT_NE(std::string(InvalidInput("profile", "x").what()).find("profile: x"), std::string::npos);
}

// checked_mul and friends have their own test (checked_test.cpp); here the memory bound.
TEST(InputBounds, TheMemoryBoundRefusesWithTheEstimate) {
  EXPECT_THROW(require_memory("topk", 1e30, "a top-k"), InvalidInput);
  EXPECT_NO_THROW(require_memory("topk", 1e6, "a top-k"));
  const MemoryLimit limit("1M");
  EXPECT_EQ(memory_bound_bytes(), uint64_t(1) << 20);
  try {
    require_memory("topk", 2e6, "a top-k");
    ADD_FAILURE() << "2 MB passed a 1 MiB bound";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "topk");
    EXPECT_NE(std::string(e.what()).find("needs an estimated 1.9 MiB, more than the memory bound of 1.0 MiB"),
              std::string::npos)
        << e.what();
  }
}

// Each refused with the field named, instead of a division by zero, a wrap or a throw inside the property.
TEST(InputBounds, ReplayDescriptionsAreValidated) {
  EXPECT_EQ(replay_error(kTopk), "<accepted>");
  EXPECT_NE(replay_error(with(kTopk, "[0,5,", "[9223372036854775000,5000,")).find("rows[0] start + len"),
            std::string::npos);
  EXPECT_NE(replay_error(with(kTopk, "\"k\":4", "\"k\":4294967297")).find("field 'k'"), std::string::npos);
  EXPECT_NE(replay_error(with(kTopk, "\"k\":4", "\"k\":2.5")).find("field 'k'"), std::string::npos);
  EXPECT_NE(replay_error(with(kTopk, "\"k\":4", "\"k\":0")).find("field 'k': 0 is outside"), std::string::npos);
  EXPECT_NE(replay_error(with(kTopk, "\"seed\":1", "\"seed\":-1")).find("field 'seed'"), std::string::npos);
  EXPECT_NE(replay_error(with(kTopk, "\"rows\":[", "\"rows\":{\"a\":[") + "}").find("field 'rows'"), std::string::npos);
  EXPECT_NE(replay_error(decode_case("block_size", "0")).find("field 'block_size': 0 is outside"), std::string::npos);
  EXPECT_NE(replay_error(decode_case("compress_ratio", "0")).find("field 'compress_ratio'"), std::string::npos);
  EXPECT_NE(replay_error(decode_case("head_dim", "48")).find("not a multiple of 32"), std::string::npos);
  EXPECT_NE(replay_error(decode_case("element", "\"e5m2\"")).find("e5m2"), std::string::npos);
  EXPECT_NE(replay_error(decode_case("profile", "\"nope\"")).find("unknown profile"), std::string::npos);
  EXPECT_NE(replay_error(decode_case("requests", "[]")).find("at least one request"), std::string::npos);

  fuzz::CandidateCase cand;
  cand.requests = {{20, {}, fuzz::ValueKind::normal, 1}};
  nlohmann::json j = fuzz::to_json(cand);
  j["block_size"] = 0;
  EXPECT_NE(replay_error(j.dump()).find("field 'block_size'"), std::string::npos);

  fuzz::PrefillCase pre;
  pre.num_k = 16;
  pre.rows = {{10, 10, 1}};
  EXPECT_NE(replay_error(fuzz::to_json(pre).dump()).find("past num_k = 16"), std::string::npos);

  std::string deep(100000, '[');
  EXPECT_NE(replay_error(deep).find("nested deeper"), std::string::npos);
}

TEST(InputBounds, ReplaySizesPastMemoryAreRefusedWithTheEstimate) {
  const MemoryLimit limit("8G");
  const std::string message = replay_error(with(with(kTopk, "\"k\":4", "\"k\":2147483647"), "[[0,5,\"normal\",1]]",
                                                "[[0,5,\"normal\",1],[0,5,\"normal\",2],[0,5,\"normal\",3]]"));
  EXPECT_NE(message.find("needs an estimated"), std::string::npos) << message;
  EXPECT_NE(message.find("memory bound of"), std::string::npos) << message;
  EXPECT_NE(replay_error(with(kTopk, "\"width_pad\":0", "\"width_pad\":1000000000000")).find("1000000000005 columns"),
            std::string::npos);
  EXPECT_NE(replay_error(decode_case("heads", "2147483647")).find("needs an estimated"), std::string::npos);
}

TEST(InputBounds, EveryGeneratedCasePassesValidation) {
  const fuzz::GenLimits limits;
  for (const auto& c : test::sample(fuzz::gen_topk_case(limits), test::scaled_count(15), 1))
    EXPECT_NO_THROW(fuzz::validate_case(c)) << fuzz::to_json(c).dump();
  for (const auto& c : test::sample(fuzz::gen_candidate_case(limits), test::scaled_count(15), 2))
    EXPECT_NO_THROW(fuzz::validate_case(c)) << fuzz::to_json(c).dump();
  for (const auto& c : test::sample(fuzz::gen_decode_case(limits), test::scaled_count(8), 3))
    EXPECT_NO_THROW(fuzz::validate_case(c)) << fuzz::to_json(c).dump();
  for (const auto& c : test::sample(fuzz::gen_prefill_case(limits), test::scaled_count(8), 4))
    EXPECT_NO_THROW(fuzz::validate_case(c)) << fuzz::to_json(c).dump();
}

TEST(InputBounds, TheCommandLineExitsTwoNamingTheField) {
  const std::string bad = "'" + with(kTopk, "[0,5,", "[9223372036854775000,5000,") + "'";
  test::CliRun r = test::run_cli("fuzz --impl reference --property topk_agrees --replay " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("rows[0] start + len"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("threw"), std::string::npos) << r.output;

  r = test::run_cli("fuzz --impl reference --property logits_agree --replay '" + decode_case("block_size", "0") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("block_size"), std::string::npos) << r.output;
  r = test::run_cli("fuzz --impl reference --property topk_agrees --replay '{\"kind\":'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not valid JSON"), std::string::npos) << r.output;

  // Sizes "within limits" that need more than the machine has: refused before any work.
  r = test::run_cli("golden --preset v32_decode --size 4096x16777216 --out " +
                        (fs::temp_directory_path() / ("dsa_bounds_" + std::to_string(::getpid()))).string(),
                    "DSA_MEMORY_LIMIT=8G");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("size: preset v32_decode at size 4096x16777216"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("needs an estimated"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(fs::temp_directory_path() / ("dsa_bounds_" + std::to_string(::getpid()))));

  // A user's file without `topk`, and the flag asking for k = 2^31 - 1.
  dataset::Safetensors user =
      dataset::read_safetensors(test::source_dir() + "/data/golden/exact/edge/edge_00_short_rows.safetensors");
  user.metadata.erase("topk");
  const fs::path in = fs::temp_directory_path() / ("dsa_bounds_in_" + std::to_string(::getpid()) + ".safetensors");
  const fs::path out = fs::temp_directory_path() / ("dsa_bounds_" + std::to_string(::getpid()) + ".safetensors");
  dataset::write_safetensors(in.string(), user);
  r = test::run_cli("reference --op decode_topk --profile exact --in " + in.string() + " --out " + out.string() +
                        " --topk 2147483647",
                    "DSA_MEMORY_LIMIT=8G");
  fs::remove(in);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("topk"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("needs an estimated"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

// A device where a file is expected (mma-check /dev/zero read forever before),
// and budgets of 0, below 0 or NaN (they fell back to the 60-s default before):
// exit 2 at once, naming the path or the option.
TEST(InputBounds, DevicesAndEmptyBudgetsAreRefusedByName) {
  test::CliRun r = test::run_cli("mma-check /dev/zero");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'/dev/zero' is not a regular file"), std::string::npos) << r.output;
  r = test::run_cli("reference --op decode_topk --profile exact --in /dev/zero --out " +
                    (fs::temp_directory_path() / ("dsa_bounds_dev_" + std::to_string(::getpid()))).string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is not a regular file"), std::string::npos) << r.output;
  for (const std::string& bad : {std::string("--seconds -1"), std::string("--seconds nan"), std::string("--seconds 0"),
                                 std::string("--timeout 0"), std::string("--shrink-seconds inf")}) {
    r = test::run_cli("fuzz --impl reference --quiet " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.output;
    EXPECT_NE(r.output.find("must be a finite number of seconds above 0"), std::string::npos) << r.output;
  }
  r = test::run_cli("fuzz-merge /dev/zero");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is not a regular file"), std::string::npos) << r.output;
  r = test::run_cli("fuzz --impl reference --quiet --cases 1 --contract /dev/null");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("contract: applies to external commands only"), std::string::npos) << r.output;
  r = test::run_cli("fuzz --impl reference --quiet --cases 0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--cases: must be at least 1, got 0"), std::string::npos) << r.output;
}


TEST(InputBounds, ManifestsAreBoundedAndListEachCaseOnce) {
  dataset::Manifest m;
  m.preset = "edge";
  m.profile = "exact";
  m.size = "small";
  m.generator = "test";
  dataset::ManifestCase c;
  c.file = "a.safetensors";
  c.sha256 = std::string(64, '0');
  c.op = "decode_topk";
  c.profile = "exact";
  m.cases = {c, c};
  try {
    dataset::parse_manifest(dataset::to_json(m), "manifest.json");
    ADD_FAILURE() << "a case listed twice was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("'a.safetensors' is listed twice"), std::string::npos) << e.what();
  }
  EXPECT_THROW(dataset::parse_json(std::string(300000, '['), "manifest.json"), InvalidInput);
}

}  // namespace
}  // namespace dsa
