// The external implementation: any command that reads a case from a
// safetensors file and writes its outputs. The numpy top-k "kernel" of
// python/examples passes; its off-by-one twin is caught and shrunk.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "dsa/dataset/safetensors.hpp"
#include "dsa/error.hpp"
#include "cli_test_support.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/exchange.hpp"
#include "dsa/fuzz/external.hpp"
#include "dsa/fuzz/implementations.hpp"
#include "dsa/oracle/poison.hpp"
#include "fuzz_test_support.hpp"
#include "test_support.hpp"

namespace dsa::fuzz {
namespace {

using test::python_with_numpy;

std::string example(const std::string& script) {
  return shell_quote(test::source_dir() + "/python/examples/" + script);
}

CampaignOptions external_campaign(const std::string& command, int64_t cases) {
  CampaignOptions o;
  o.impl = "external:" + command;
  o.make_impl = [command] { return make_external_ops(command); };
  o.properties = {property::kTopkAgrees};
  o.cases = cases;
  o.batch_cases = 3;
  o.shrink_seconds = 60;
  o.replay_prefix = "dsa-oracle fuzz --impl " + shell_quote(o.impl);
  return o;
}

TEST(FuzzExternal, TheNumpyTopkPassesAndItsOffByOneTwinIsCaughtAndShrunk) {
  const std::string python = python_with_numpy();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";

  const CampaignResult right = run_campaign(external_campaign(python + " " + example("numpy_topk.py"), 5));
  ASSERT_EQ(right.properties.size(), 1u);
  EXPECT_FALSE(right.properties[0].failure) << format_failure(*right.properties[0].failure);
  EXPECT_EQ(right.properties[0].passed, 5);

  const CampaignResult wrong = run_campaign(external_campaign(python + " " + example("numpy_topk_wrong.py"), 60));
  const PropertyResult& p = wrong.properties[0];
  ASSERT_TRUE(p.failure) << "the off-by-one script passed " << p.cases << " cases";
  const CaseSize size = case_size(p.failure->shrunk);
  EXPECT_LE(size.rows, 2) << summary(p.failure->shrunk);
  EXPECT_LE(size.max_visible, 64) << summary(p.failure->shrunk);
  EXPECT_TRUE(p.failure->reproduced());
  EXPECT_NE(p.failure->replay.find("numpy_topk_wrong.py"), std::string::npos);
}

TEST(FuzzExternal, TheNumpyTopkPassesInPersistentModeStartedOnce) {
  const std::string python = python_with_numpy();
  if (python.empty()) GTEST_SKIP() << "no python3 with numpy";
  ExternalOptions eo;
  eo.persistent = true;
  auto command = std::make_shared<ExternalCommand>(python + " " + example("numpy_topk.py"), eo);
  CampaignOptions o = external_campaign("", 8);
  o.make_impl = [command] { return make_external_ops(command); };
  o.limits.logits_elements = 1 << 14;  // the mode is what is tested: numpy's start once, not its top-k at length
  const CampaignResult r = run_campaign(o);
  EXPECT_FALSE(r.properties[0].failure) << format_failure(*r.properties[0].failure);
  EXPECT_EQ(r.properties[0].passed, 8);
  EXPECT_EQ(command->stats().starts, 1);
  // It declares what it takes.
  EXPECT_NE(command->describe().value_or("").find("topk"), std::string::npos);
}

TEST(FuzzExternal, ExitStatusThreeIsUnsupportedAndNeverAPass) {
  // `sh -c CMD` takes the appended --in/--out as its own $0 and $1.
  const CampaignResult r = run_campaign(external_campaign("sh -c 'exit 3'", 3));
  EXPECT_FALSE(r.properties[0].applicable());
  EXPECT_EQ(r.properties[0].passed, 0);
  EXPECT_FALSE(r.properties[0].failure);
}

TEST(FuzzExternal, ACommandThatFailsOrWritesNothingIsAFailure) {
  auto broken = make_external_ops("sh -c 'echo kernel exploded >&2; exit 1'");
  TopkCase c;
  c.k = 2;
  c.rows = {{0, 5, ValueKind::normal, 1}};
  Outcome o = check_case(find_property(property::kTopkAgrees), *broken, c);
  EXPECT_EQ(o.verdict, Verdict::fail);
  EXPECT_NE(o.message.find("kernel exploded"), std::string::npos) << o.message;

  auto silent = make_external_ops("true");
  o = check_case(find_property(property::kTopkAgrees), *silent, c);
  EXPECT_EQ(o.verdict, Verdict::fail);
  EXPECT_NE(o.message.find("wrote no"), std::string::npos) << o.message;

  EXPECT_THROW(make_external_ops("  "), InvalidInput);
  EXPECT_THROW(make_implementation("external:"), InvalidInput);
}

// A command that keeps the case it was given and answers with it unchanged:
// its outputs are the poisoned buffers the case carries.
TEST(FuzzExternal, TheExchangeCarriesEveryInputAndThePoisonedOutputs) {
  const auto dir = std::filesystem::temp_directory_path() / ("dsa_external_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string kept = (dir / "in.safetensors").string();
  auto echo = make_external_ops("sh -c 'cp \"$1\" \"$3\"; cp \"$1\" " + kept + "'");

  DecodeCase c;
  c.seed = 3;
  c.next_n = 2;
  c.padded = true;
  c.element = ElementFormat::e4m3fnuz;
  c.layout = CacheLayout::preshuffle;
  c.head_dim = 128;
  c.requests = {{37, {}, 1, 1}, {20, {}, 2, 2}};
  const DecodeProblem p = make_problem(c);
  Logits out;
  out.rows = p.rows();
  out.width = p.logits_width;
  echo->decode_logits(p, profile_of(c), out);
  for (float v : out.values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    ASSERT_EQ(bits, oracle::kPoisonF32Bits);
  }
  const dataset::Safetensors in = dataset::read_safetensors(kept);
  EXPECT_EQ(in.meta("op"), "decode_logits");
  EXPECT_EQ(in.meta("layout"), "preshuffle");
  EXPECT_EQ(in.meta("fp8"), "e4m3fnuz");
  EXPECT_EQ(in.meta("next_n"), "2");
  EXPECT_EQ(in.u8("q", {2, 2, c.heads, 128}), p.q);
  EXPECT_EQ(in.u8("kv_cache", {p.cache.num_pages, p.cache.block_size, 1, 128 + 4}), p.cache.bytes);
  EXPECT_EQ(in.i32("seq_lens", {2}), p.seq_lens);
  EXPECT_EQ(in.i32("decode_lens", {2}), p.decode_lens);
  EXPECT_EQ(in.i32("block_table", {2, p.max_pages}), p.block_table);
  EXPECT_EQ(in.f32("weights", {p.rows(), c.heads}).size(), p.weights.size());

  // Every op goes through the same exchange; what comes back is the poison, which the oracle sees.
  TopkCase t;
  t.k = 3;
  t.rows = {{2, 9, ValueKind::normal, 1}};
  const Outcome o = check_case(find_property(property::kEveryEntryWritten), *echo, t);
  EXPECT_EQ(o.verdict, Verdict::fail);
  const dataset::Safetensors topk_in = dataset::read_safetensors(kept);
  EXPECT_EQ(topk_in.meta("op"), "prefill_topk");
  EXPECT_EQ(topk_in.i32("ks", {1}), std::vector<int32_t>{2});
  EXPECT_EQ(topk_in.i32("ke", {1}), std::vector<int32_t>{11});
  EXPECT_EQ(topk_in.meta("topk"), "3");
  for (const char* property : {property::kCandidateSelectAgrees, property::kCompactLogitsAgree,
                               property::kPrefillLogitsAgree})
    EXPECT_EQ(check_case(find_property(property), *echo, find_property(property).probes()[0]).verdict, Verdict::fail)
        << property;
  std::filesystem::remove_all(dir);
}

// Issue 10 §2: the exchange is the golden schema. Answered by the golden-case
// code itself (read_case_inputs, compute_expected: what `dsa-oracle
// reference` runs), every property passes: each request is a case the
// reference takes, and each answer reads back through read_outputs.
TEST(FuzzExternal, EveryRequestIsAGoldenCaseTheReferenceAnswers) {
  CampaignOptions o;
  o.impl = "exchange answered by the golden-case code";
  o.make_impl = [] { return make_exchange_ops("golden reference", answer_with_reference); };
  o.cases = test::scaled_count(6);
  o.batch_cases = 3;
  o.limits.max_rows = 8;
  o.limits.logits_elements = 1 << 14;
  o.limits.exact_products = 1 << 18;
  o.limits.model_products = 1 << 16;
  o.replay_prefix = "dsa-oracle fuzz";
  // The ops the golden schema has no form for (the padding moves, the prefill
  // compact logits, the SM100 sparse steps) are unsupported through the exchange.
  const std::set<std::string> no_golden_form = {property::kPaddingRoundTrip,      property::kPrefillCompactEqualsDense,
                                                property::kSkipDecodeFillAgrees,  property::kSparseBlocksAgree,
                                                property::kSparseLogitsAgree,     property::kSparseTopkAgrees};
  const CampaignResult r = run_campaign(o);
  for (const auto& p : r.properties) {
    if (no_golden_form.contains(p.property)) {
      EXPECT_FALSE(p.applicable()) << p.property;
      continue;
    }
    EXPECT_TRUE(p.applicable()) << p.property;
    EXPECT_FALSE(p.failure) << format_failure(*p.failure);
    EXPECT_EQ(p.passed, o.cases) << p.property;
  }
}

// The ops without a fuzz property of their own yet: the mask (in place) and
// the gfx942 fused launch, through the exchange, equal the reference's.
TEST(FuzzExternal, TheMaskAndTheFusedLaunchGoThroughTheExchange) {
  const auto exchange = make_exchange_ops("golden reference", answer_with_reference);
  const auto reference = make_reference_ops();
  CandidateCase cc;
  cc.block_size = 4;
  cc.slots = 3;
  cc.seed = 5;
  cc.requests = {{21, {}, ValueKind::normal, 1}, {9, {}, ValueKind::few_levels, 2}};
  const Logits logits = make_logits(cc);
  const CandidateBlocks blocks = make_candidates(cc, logits);
  Logits a = logits, b = logits;
  exchange->candidate_mask(a, candidate_bounds(cc), blocks, CandidateMask::full);
  reference->candidate_mask(b, candidate_bounds(cc), blocks, CandidateMask::full);
  EXPECT_EQ(std::memcmp(a.values.data(), b.values.data(), a.values.size() * 4), 0);
  EXPECT_THROW(exchange->candidate_mask(a, candidate_bounds(cc), blocks, CandidateMask::strided), Unsupported);

  DecodeCase dc;
  dc.seed = 2;
  dc.requests = {{40, {}, 0, 1}, {17, {}, 0, 2}};
  const DecodeProblem p = make_problem(dc);
  const CandidateBlocks cand = make_candidates(dc, p);
  Logits ca{p.rows(), int64_t(cand.slots) * cand.block_size, {}}, cb = ca;
  ca.values.assign(size_t(ca.rows * ca.width), 0.0f);
  cb.values = ca.values;
  TopkIndices ta{p.rows(), 5, std::vector<int32_t>(size_t(p.rows() * 5), oracle::kPoisonI32)}, tb = ta;
  exchange->candidate_logits_top_k(p, profile_of(dc), cand, ca, ta);
  reference->candidate_logits_top_k(p, profile_of(dc), cand, cb, tb);
  EXPECT_EQ(std::memcmp(ca.values.data(), cb.values.data(), ca.values.size() * 4), 0);
  EXPECT_EQ(ta.indices, tb.indices);
}

// A case the fuzzer handed a kernel goes to `dsa-oracle reference` and
// `dsa-oracle check` as it is: the recorder keeps every request it is given.
TEST(FuzzExternal, KeptRequestsFeedReferenceAndCheckAsTheyAre) {
  const auto dir = std::filesystem::temp_directory_path() / ("dsa_external_kept_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "requests");
  const std::string recorder = "sh -c 'cp \"$1\" " + (dir / "requests").string() + "/$$.safetensors; exit 3'";
  const test::CliRun fuzz = test::run_cli("fuzz --impl " + shell_quote("external:" + recorder) +
                                          " --property every_entry_written,prefill_logits_agree --cases 1 --quiet");
  EXPECT_EQ(fuzz.exit_code, 1) << fuzz.output;  // every call unsupported: nothing checked
  std::set<std::string> ops;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "requests")) {
    const dataset::Safetensors request = dataset::read_safetensors(entry.path().string());
    // Selection-only requests carry no profile; `reference` takes any for them.
    const std::string op = request.meta("op");
    if (op == "describe") continue;  // the command's contract is asked for first; not a case
    const std::string profile = request.metadata.contains("profile") ? request.meta("profile") : "exact";
    if (!ops.insert(op).second) continue;
    EXPECT_EQ(request.meta("schema"), "dsa-oracle/golden/1");
    const std::string golden = (dir / (op + ".golden.safetensors")).string();
    test::CliRun r = test::run_cli("reference --op " + op + " --profile " + profile + " --in " + entry.path().string() +
                                   " --out " + golden);
    ASSERT_EQ(r.exit_code, 0) << op << ": " << r.output;
    // The expected outputs pass; the request's own buffers are poison, never written.
    r = test::run_cli("check --golden " + golden + " --outputs " + golden);
    EXPECT_EQ(r.exit_code, 0) << op << ": " << r.output;
    r = test::run_cli("check --golden " + golden + " --outputs " + entry.path().string());
    EXPECT_EQ(r.exit_code, 1) << op << ": " << r.output;
    EXPECT_NE(r.output.find("never written"), std::string::npos) << op << ": " << r.output;
  }
  EXPECT_EQ(ops, (std::set<std::string>{"prefill_topk", "candidate_select", "candidate_topk", "decode_logits",
                                        "compact_candidate_logits", "prefill_logits"}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dsa::fuzz
