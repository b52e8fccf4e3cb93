// Baselines (dataset/baseline.hpp): an implementation's outputs recorded on a
// golden set, and a later version held to them, run in process or read from
// an outputs folder; the numerics report where they differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "dsa/dataset/baseline.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/optimized/implementations.hpp"
#include "golden_test_support.hpp"
#include "wrong_selections.hpp"

namespace dsa::golden_test {
namespace {

using dataset::CaseStatus;
using test::HighestIndexFirst;
using test::SwapsBelowTheCut;

Contract every_op() {
  Contract c;
  for (const Op op : all_ops()) c.ops.insert(op);
  return c;
}

dataset::Recording record(IndexerOps& impl, const std::string& set, const std::string& out,
                          const Contract& contract = every_op()) {
  return dataset::record_baseline(committed(set), impl, contract, out,
                                  dataset::describe_baseline(impl.name(), "v1", committed(set)));
}

// Row 1, column 5 of the decode logits one ulp up.
class OneUlpOff : public ForwardingOps {
public:
  OneUlpOff() : ForwardingOps("one_ulp_off") {}
  void decode_logits(const DecodeProblem& p, const Profile& profile, Logits& out) override {
    inner().decode_logits(p, profile, out);
    if (out.rows > 1) out.row(1)[5] = std::nextafter(out.row(1)[5], INFINITY);
  }
};

// The decode logits under another profile's arithmetic: a kernel that is not bit-exact.
class Sm90Arithmetic : public ForwardingOps {
public:
  Sm90Arithmetic() : ForwardingOps("sm90_arithmetic") {}
  void decode_logits(const DecodeProblem& p, const Profile&, Logits& out) override {
    inner().decode_logits(p, find_profile("deepgemm_sm90"), out);
  }
};

TEST(Baseline, RecordedReferencePassesItsOwnBaseline) {
  TempDir dir;
  auto reference = make_reference_ops();
  const dataset::Recording rec = record(*reference, "exact/v32_decode", dir / "base");
  EXPECT_EQ(rec.exit_code(), 0);
  ASSERT_EQ(rec.count("recorded"), 3u);
  EXPECT_EQ(rec.cases[0].outputs, (std::vector<std::string>{"logits", "topk_indices"}));
  EXPECT_TRUE(rec.cases[0].from_golden.empty());
  // The files are a golden set: manifest, hashes, and the baseline's metadata.
  const dataset::Recording back = dataset::read_recording(dir / "base");
  EXPECT_EQ(back.info.impl, "reference");
  EXPECT_EQ(back.info.version, "v1");
  EXPECT_FALSE(back.info.machine.empty());
  EXPECT_EQ(back.info.date.size(), 20u);  // 2026-01-01T00:00:00Z
  EXPECT_EQ(back.manifest.cases.size(), 3u);
  const Safetensors file = dataset::read_safetensors(dir / "base/v32_decode_00_nn1.safetensors");
  EXPECT_EQ(file.meta("baseline_impl"), "reference");
  EXPECT_EQ(file.meta("outputs"), "logits,topk_indices");

  const dataset::BaselineCheck r = dataset::check_baseline(dir / "base", *reference, every_op());
  EXPECT_EQ(r.exit_code(), 0) << r.set.report().to_text();
  EXPECT_EQ(r.set.count(CaseStatus::passed), 3u);
  EXPECT_EQ(r.rows_tie_changes, 0);
  EXPECT_EQ(r.cases_logits_differ, 0);
  EXPECT_TRUE(r.numerics.empty());  // nothing differs
  const auto j = r.to_json();
  EXPECT_EQ(j["baseline"]["impl"], "reference");
  EXPECT_EQ(j["exit_code"], 0);
}

TEST(Baseline, OneUlpOffFailsNamingTheEntryAndTheNumericsShowIt) {
  TempDir dir;
  auto reference = make_reference_ops();
  record(*reference, "exact/v32_decode", dir / "base");
  OneUlpOff changed;
  const dataset::BaselineCheck r = dataset::check_baseline(dir / "base", changed, every_op());
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.set.count(CaseStatus::failed), 3u);
  const std::string text = r.set.report().to_text();
  EXPECT_NE(text.find("1 of"), std::string::npos) << text;
  bool named = false;
  for (const auto& e : r.set.cases[0].report.entries()) {
    if (e.check != "logits" || e.passed) continue;
    const auto& first = e.details["first_mismatches"][0];
    EXPECT_EQ(first["row"], 1);
    EXPECT_EQ(first["col"], 5);
    EXPECT_EQ(first["ulps"], 1);
    EXPECT_NE(e.summary.find("[vs baseline]"), std::string::npos);
    named = true;
  }
  EXPECT_TRUE(named) << text;
  // The top-k read the changed logits; its sets are the same all the same.
  EXPECT_EQ(r.cases_logits_differ, 3);
  ASSERT_EQ(r.numerics.cases().size(), 3u);
  EXPECT_EQ(r.numerics.headline().rfind("the change moved the worst error from 0 to 1 fp32 ulp and the median from 0 to 0",
                                        0),
            0u)
      << r.numerics.headline();
  EXPECT_EQ(r.numerics.eps_needed(false), 0.0);
}

TEST(Baseline, ATieBreakChangePassesAndIsReportedApart) {
  TempDir dir;
  auto reference = make_reference_ops();
  record(*reference, "exact/edge", dir / "base");
  HighestIndexFirst changed;
  const dataset::BaselineCheck r = dataset::check_baseline(dir / "base", changed, every_op());
  EXPECT_EQ(r.exit_code(), 0) << r.set.report().to_text();
  EXPECT_GT(r.rows_tie_changes, 0);
  bool listed = false;
  for (const auto& c : r.set.cases)
    for (const auto& e : c.report.entries())
      if (e.check == "baseline_selection" && e.details["rows_tie_changes"].get<int64_t>() > 0) {
        EXPECT_TRUE(e.passed);
        EXPECT_FALSE(e.details["tie_changes"].empty());
        EXPECT_NE(e.table.find("ties"), std::string::npos) << e.table;
        listed = true;
      }
  EXPECT_TRUE(listed);
}

TEST(Baseline, AnotherValueChosenFails) {
  TempDir dir;
  auto reference = make_reference_ops();
  record(*reference, "exact/v32_decode", dir / "base");
  SwapsBelowTheCut wrong;
  const dataset::BaselineCheck r = dataset::check_baseline(dir / "base", wrong, every_op());
  EXPECT_EQ(r.exit_code(), 1);
  const std::string text = r.set.report().to_text();
  EXPECT_NE(text.find("topk_indices vs baseline: FAIL"), std::string::npos) << text;
  EXPECT_NE(text.find("chose other values"), std::string::npos) << text;
}

TEST(Baseline, ANotBitExactKernelGetsANumericsReport) {
  TempDir dir;
  auto reference = make_reference_ops();
  record(*reference, "exact/v32_decode", dir / "base");
  Sm90Arithmetic changed;
  dataset::BaselineCheckOptions options;
  options.numerics = dataset::NumericsMode::all;
  const dataset::BaselineCheck r = dataset::check_baseline(dir / "base", changed, every_op(), options);
  EXPECT_EQ(r.exit_code(), 1);
  const auto base = r.numerics.overall_baseline(oracle::UlpUnit::fp32);
  const auto now = r.numerics.overall_current(oracle::UlpUnit::fp32);
  ASSERT_TRUE(base && now);
  EXPECT_EQ(base->exact_bits, base->entries);  // the baseline is the exact profile itself
  EXPECT_EQ(now->entries, base->entries);
  EXPECT_GT(now->ulps.max, 0);
  EXPECT_LT(now->exact_bits, now->entries);
  EXPECT_GT(now->max_abs_error, 0);
  EXPECT_LT(now->rel.max, 1e-3);  // 13-bit products: small against the terms
  const auto j = r.numerics.to_json();
  EXPECT_EQ(j["schema"], "dsa-oracle/numerics/1");
  EXPECT_TRUE(j["has_baseline"].get<bool>());
  EXPECT_EQ(j["cases"].size(), 3u);
  EXPECT_FALSE(j["overall"]["fp32"]["new"]["histogram"].empty());
  EXPECT_NE(r.numerics.to_text().find("tolerances needed"), std::string::npos);
  EXPECT_NE(r.numerics.to_svg().find("<svg"), std::string::npos);
  // The tolerant check with the tolerance the report names passes the logits.
  dataset::BaselineCheckOptions tolerant;
  tolerant.check.tolerance = 2 * now->max_abs_error;
  tolerant.numerics = dataset::NumericsMode::none;
  const dataset::BaselineCheck t = dataset::check_baseline(dir / "base", changed, every_op(), tolerant);
  for (const auto& c : t.set.cases)
    for (const auto& e : c.report.entries())
      if (e.check == "logits") {
        EXPECT_TRUE(e.passed) << e.summary;
      }
}

TEST(Baseline, AStageFromTheSourceIsKeptAndNeverCompared) {
  TempDir dir;
  const optimized::Implementation& twin = optimized::find_implementation("cpu_radix_topk");
  auto topk_only = twin.make();
  const dataset::Recording rec = record(*topk_only, "exact/v32_decode", dir / "base", twin.contract);
  ASSERT_EQ(rec.exit_code(), 0);
  EXPECT_EQ(rec.cases[0].outputs, std::vector<std::string>{"topk_indices"});
  EXPECT_EQ(rec.cases[0].from_golden, std::vector<std::string>{"logits"});
  // The reference writes the logits too: not the baseline's own, so not compared.
  auto reference = make_reference_ops();
  const dataset::BaselineCheck r = dataset::check_baseline(dir / "base", *reference, every_op());
  EXPECT_EQ(r.exit_code(), 0) << r.set.report().to_text();
  EXPECT_EQ(r.not_compared[0], std::vector<std::string>{"logits"});
  // A kernel that writes no longer what its baseline wrote fails.
  record(*reference, "exact/v32_decode", dir / "full");
  const dataset::BaselineCheck less = dataset::check_baseline(dir / "full", *topk_only, twin.contract);
  EXPECT_EQ(less.exit_code(), 1);
  EXPECT_NE(less.set.report().to_text().find("the baseline holds logits but the new implementation wrote none"),
            std::string::npos);
}

TEST(Baseline, OutputsMadeElsewhereRecordAndCheck) {
  TempDir dir;
  fs::create_directories(dir / "outputs");
  // The user's script wrote the golden set's own expected outputs, one file per case.
  const dataset::Manifest m = dataset::read_manifest(committed("exact/v32_decode") + "/manifest.json");
  for (const auto& c : m.cases) {
    const dataset::GoldenCase g = dataset::read_golden_case(dataset::read_safetensors(committed("exact/v32_decode") + "/" + c.file));
    Safetensors out;
    dataset::put_outputs(out, g, g.expected);
    dataset::write_safetensors(dir / ("outputs/" + c.file), out);
  }
  const dataset::Recording rec = dataset::record_baseline_outputs(
      committed("exact/v32_decode"), dir / "outputs", dir / "base", dataset::describe_baseline("my_script", "abc123", ""));
  ASSERT_EQ(rec.exit_code(), 0);
  EXPECT_EQ(dataset::check_baseline_outputs(dir / "base", dir / "outputs").exit_code(), 0);
  // One logit changed in one file: that case fails, the others pass.
  const std::string first = dir / ("outputs/" + m.cases[0].file);
  Safetensors changed = dataset::read_safetensors(first);
  const dataset::GoldenCase g = dataset::read_golden_case(dataset::read_safetensors(committed("exact/v32_decode") + "/" + m.cases[0].file));
  dataset::GoldenOutputs o = dataset::read_outputs(changed, g);
  o.logits->row(0)[0] = -o.logits->row(0)[0];
  Safetensors again;
  dataset::put_outputs(again, g, o);
  dataset::write_safetensors(first, again);
  const dataset::BaselineCheck r = dataset::check_baseline_outputs(dir / "base", dir / "outputs");
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(r.set.count(CaseStatus::failed), 1u);
  // A missing outputs file is bad input, naming it.
  fs::remove(first);
  const dataset::BaselineCheck missing = dataset::check_baseline_outputs(dir / "base", dir / "outputs");
  EXPECT_EQ(missing.exit_code(), 2);
  EXPECT_NE(missing.set.cases[0].error.find("missing"), std::string::npos) << missing.set.cases[0].error;
}

TEST(Baseline, AFolderOfCasesWithoutAManifestIsASource) {
  TempDir dir;
  fs::create_directories(dir / "in");
  fs::copy_file(committed("exact/v32_decode") + "/v32_decode_00_nn1.safetensors", dir / "in/one.safetensors");
  auto reference = make_reference_ops();
  const dataset::Recording rec = dataset::record_baseline(dir / "in", *reference, every_op(), dir / "base",
                                                          dataset::describe_baseline("reference", "v1", dir / "in"));
  EXPECT_EQ(rec.exit_code(), 0);
  ASSERT_EQ(rec.cases.size(), 1u);
  EXPECT_EQ(rec.cases[0].file, "one.safetensors");
  EXPECT_EQ(dataset::check_baseline(dir / "base", *reference, every_op()).exit_code(), 0);
  // Recording again replaces the baseline; into a golden set that is not one, or into the source, is refused.
  EXPECT_EQ(dataset::record_baseline(dir / "in", *reference, every_op(), dir / "base",
                                     dataset::describe_baseline("reference", "v2", dir / "in"))
                .exit_code(),
            0);
  EXPECT_EQ(dataset::read_recording(dir / "base").info.version, "v2");
  EXPECT_THROW(dataset::record_baseline(dir / "in", *reference, every_op(), committed("exact/v32_decode"), {}), InvalidInput);
  EXPECT_THROW(dataset::record_baseline(dir / "in", *reference, every_op(), dir / "in", {}), InvalidInput);
}

TEST(Baseline, BadBaselinesAreBadInput) {
  TempDir dir;
  auto reference = make_reference_ops();
  try {
    dataset::check_baseline(committed("exact/v32_decode"), *reference, every_op());
    FAIL() << "a golden set is not a baseline";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.argument(), "baseline");
  }
  record(*reference, "exact/v32_decode", dir / "base");
  std::vector<uint8_t> bytes = read_bytes(dir / "base/v32_decode_01_nn2.safetensors");
  bytes.back() ^= 1;
  write_bytes(dir / "base/v32_decode_01_nn2.safetensors", bytes);
  const dataset::BaselineCheck r = dataset::check_baseline(dir / "base", *reference, every_op());
  EXPECT_EQ(r.exit_code(), 2);
  EXPECT_EQ(r.set.cases[1].status, CaseStatus::bad_input);
  EXPECT_NE(r.set.cases[1].error.find("manifest hash"), std::string::npos) << r.set.cases[1].error;
  EXPECT_EQ(r.set.cases[0].status, CaseStatus::passed);
}

TEST(Baseline, WhatTheNewOneDoesNotTakeIsNotRunAndNothingCheckedIsNoPass) {
  TempDir dir;
  auto reference = make_reference_ops();
  record(*reference, "exact/v32_decode", dir / "base");
  ForwardingOps nothing("takes_nothing");
  const dataset::BaselineCheck r = dataset::check_baseline(dir / "base", nothing, Contract{});
  EXPECT_EQ(r.set.count(CaseStatus::not_run), 3u);
  EXPECT_TRUE(r.set.checked_nothing());
  EXPECT_EQ(r.exit_code(), 1);
}

}  // namespace
}  // namespace dsa::golden_test
