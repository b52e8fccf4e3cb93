// `dsa-oracle run`: the main job on defaults. Draws realistic decode steps
// (DeepSeek V3.2 and V4.1 C4A), computes the logits and top-k under the
// `exact` profile, and checks both against an independent brute force; then
// every other implementation of the table on the same steps against the
// reference (run_implementations.hpp: the CPU twins always, a GPU entry where
// its device is, listed as skipped otherwise). With --impl NAME that
// implementation alone computes the ops of the step it takes (its logits only
// if it claims `exact` or any profile), the reference the others, all judged
// against the brute force.
#include <chrono>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <fmt/core.h>

#include "brute_force.hpp"
#include "command_registry.hpp"
#include "run_implementations.hpp"
#include "dsa/candidates.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/implementations.hpp"
#include "dsa/logits.hpp"
#include "dsa/optimized/implementations.hpp"
#include "dsa/oracle/logits_check.hpp"
#include "dsa/oracle/poison.hpp"
#include "dsa/oracle/selection_check.hpp"
#include "dsa/synthetic.hpp"
#include "dsa/topk.hpp"

namespace dsa::cli {
namespace {

struct RunOptions {
  int rows = 4;
  int64_t context = 0;  // tokens; 0 = each case's default
  uint64_t seed = 1;
  bool json = false;
  std::string impl = "reference";
};

// The implementation under test and the ops of a step it computes.
struct UnderTest {
  std::string name;
  std::unique_ptr<IndexerOps> ops;
  bool logits = false;
  bool topk = false;
};

struct CaseResult {
  std::string name;
  int rows;
  int64_t context_tokens, entries;
  int topk;
  double impl_s, brute_force_s;
  int64_t logits_checked, logits_differing;
  int64_t topk_rows_identical;  // equal to the brute force's, slot for slot
  int64_t topk_rows_failed;     // the others, failing the selection rule on the brute force's logits
  bool pass() const { return logits_differing == 0 && topk_rows_failed == 0; }
};

CaseResult run_case(const std::string& name, const SyntheticDecodeConfig& config, int k, uint64_t seed,
                    UnderTest& impl) {
  Rng rng(seed);
  const DecodeProblem problem = make_decode_problem(config, rng);
  const Profile& exact = find_profile("exact");
  const auto t0 = std::chrono::steady_clock::now();
  // Poisoned buffers, as every harness gives them: an entry left unwritten differs from the brute force.
  Logits logits = oracle::poisoned_logits(problem.rows(), problem.logits_width);
  if (impl.logits) {
    impl.ops->decode_logits(problem, exact, logits);
  } else {
    logits = decode_logits(problem, exact).logits;
  }
  TopkIndices topk = oracle::poisoned_topk(problem.rows(), k);
  if (impl.topk)
    impl.ops->topk(logits, topk_row_bounds(problem), topk);
  else
    topk = decode_topk(problem, logits, k);
  const auto t1 = std::chrono::steady_clock::now();

  CaseResult r{name, int(problem.rows()), config.seq_lens.empty() ? 0 : config.seq_lens[0],
               config.seq_lens.empty() ? 0 : config.seq_lens[0] / config.compress_ratio, k, 0, 0, 0, 0, 0, 0};
  std::vector<BruteForceRow> brute(size_t(problem.rows()));
#pragma omp parallel for schedule(dynamic)
  for (int64_t row = 0; row < problem.rows(); ++row) brute[size_t(row)] = brute_force_row(problem, row, k);
  const auto t2 = std::chrono::steady_clock::now();
  // The logits by the oracle's rule (bitwise over [0, L_r), any NaN equal to any NaN; poison never).
  Logits expected{problem.rows(), problem.logits_width, std::vector<float>(logits.values.size(), 0.0f)};
  std::vector<int64_t> lens(size_t(problem.rows()));
  for (int64_t row = 0; row < problem.rows(); ++row) {
    const auto& e = brute[size_t(row)].logits;
    std::copy(e.begin(), e.end(), expected.row(row));
    lens[size_t(row)] = int64_t(e.size());
  }
  oracle::LogitsCheckOptions bitwise;
  bitwise.poison_bits = oracle::kPoisonF32Bits;
  const oracle::LogitsVerdict lv = oracle::check_logits(logits, expected, lens, bitwise);
  r.logits_checked = lv.entries_compared;
  r.logits_differing = lv.mismatches;
  for (int64_t row = 0; row < problem.rows(); ++row) {
    const auto& expect = brute[size_t(row)];
    if (std::equal(expect.topk.begin(), expect.topk.end(), topk.row(row))) {
      ++r.topk_rows_identical;
      continue;
    }
    // Another order or another tie at the cut is legal: the oracle's rule decides.
    const int64_t len = int64_t(expect.logits.size());
    const Logits values{1, std::max<int64_t>(len, 1), len > 0 ? expect.logits : std::vector<float>(1, 0.0f)};
    const TopkIndices one{1, k, std::vector<int32_t>(topk.row(row), topk.row(row) + k)};
    const std::vector<int64_t> lens{len};
    if (!oracle::check_topk(oracle::view(one), values, lens).passed) ++r.topk_rows_failed;
  }
  r.impl_s = std::chrono::duration<double>(t1 - t0).count();
  r.brute_force_s = std::chrono::duration<double>(t2 - t1).count();
  return r;
}

int run(const RunOptions& o) {
  const optimized::Implementation& entry = optimized::find_implementation(o.impl);
  UnderTest impl{entry.name, fuzz::make_implementation(o.impl), entry.takes(Op::decode_logits) && entry.contract.claims_profile("exact"),
                 entry.takes(Op::topk)};
  if (!impl.logits && !impl.topk) {
    fmt::print("{} takes neither of run's ops (decode_logits under the exact profile, topk): nothing checked, which "
               "is not a pass (exit 1); `dsa-oracle check --impl` and `fuzz --impl` reach its ops\n",
               entry.name);
    return kExitCheckFailed;
  }
  const std::string ops_run = impl.logits && impl.topk ? "decode_logits, topk" : impl.logits ? "decode_logits" : "topk";
  if (!o.json) fmt::print(stderr, "run: {} computes {}; the reference the rest\n", impl.name, ops_run);
  struct Step {
    std::string name;
    SyntheticDecodeConfig config;
    int k;
    uint64_t seed;
  };
  std::vector<Step> steps;
  {
    SyntheticDecodeConfig c;  // DeepSeek V3.2: H 64, D 128, page 64, k 2048
    c.batch = o.rows;
    c.seq_lens.assign(size_t(o.rows), int32_t(o.context > 0 ? o.context : 32768));
    steps.push_back({"deepseek_v3.2_decode", c, 2048, o.seed});
  }
  {
    SyntheticDecodeConfig c;  // V4.1 C4A: ratio 4, page 256 tokens = 64 entries, k 512
    c.batch = o.rows;
    c.compress_ratio = 4;
    c.block_size = 64;
    c.seq_lens.assign(size_t(o.rows), int32_t(o.context > 0 ? o.context : 65536));
    steps.push_back({"deepseek_v4.1_c4a_decode", c, 512, o.seed + 1});
  }
  std::vector<CaseResult> results;
  for (const Step& s : steps) {
    if (!o.json) fmt::print(stderr, "run: {}, {} rows of {} tokens...\n", s.name, o.rows, s.config.seq_lens[0]);
    results.push_back(run_case(s.name, s.config, s.k, s.seed, impl));
  }
  // Every other implementation of the table on the same steps (not with --impl: that one alone).
  std::vector<ImplementationRow> others;
  if (o.impl == "reference") {
    std::vector<RunStep> run_steps;
    for (const Step& s : steps) {
      Rng rng(s.seed);  // the problem run_case drew
      run_steps.push_back({s.name, make_decode_problem(s.config, rng), s.k});
    }
    if (!o.json) fmt::print(stderr, "run: every implementation of the table on these steps...\n");
    others = run_implementations(run_steps);
  }
  bool ok = true;
  for (const auto& r : results) ok = ok && r.pass();
  for (const auto& r : others) ok = ok && !r.failed;
  if (o.json) {
    nlohmann::json j = {{"schema", "dsa-oracle/run/1"}, {"profile", "exact"}, {"impl", impl.name}, {"ops_run", ops_run}, {"pass", ok}, {"cases", nlohmann::json::array()}};
    for (const auto& r : results)
      j["cases"].push_back({{"case", r.name}, {"rows", r.rows}, {"context_tokens", r.context_tokens},
                            {"entries", r.entries}, {"topk", r.topk}, {"impl_seconds", r.impl_s},
                            {"brute_force_seconds", r.brute_force_s}, {"logits_checked", r.logits_checked},
                            {"logits_differing", r.logits_differing}, {"topk_rows_identical", r.topk_rows_identical},
                            {"topk_rows_failed", r.topk_rows_failed},
                            {"verdict", r.pass() ? "pass" : "FAIL"}});
    j["implementations"] = nlohmann::json::array();
    for (const auto& r : others)
      j["implementations"].push_back({{"impl", r.impl}, {"op", r.op}, {"steps", r.steps}, {"verdict", r.verdict},
                                      {"failed", r.failed}, {"seconds", r.seconds},
                                      {"reference_seconds", r.reference_seconds}});
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{:<26} {:>5} {:>9} {:>8} {:>6} {:>10} {:>12}  {}\n", "case", "rows", "context", "entries", "k",
               impl.name.substr(0, 10), "brute force", "verdict");
    for (const auto& r : results)
      fmt::print("{:<26} {:>5} {:>9} {:>8} {:>6} {:>9.2f}s {:>11.2f}s  {}\n", r.name, r.rows, r.context_tokens,
                 r.entries, r.topk, r.impl_s, r.brute_force_s,
                 r.pass() ? fmt::format("pass ({} of {} top-k rows identical)", r.topk_rows_identical, r.rows)
                          : fmt::format("FAIL ({} logits differ, {} top-k rows fail the rule)", r.logits_differing,
                                        r.topk_rows_failed));
    fmt::print("{} logits and {} top-k rows of {} ({}) checked against an independent brute force (profile exact): "
               "logits bit for bit (any NaN equal to any NaN: the oracle's logits rule), top-k rows identical or else "
               "by the selection rule\n",
               [&] { int64_t n = 0; for (auto& r : results) n += r.logits_checked; return n; }(),
               [&] { int64_t n = 0; for (auto& r : results) n += r.rows; return n; }(), impl.name, ops_run);
    if (!others.empty()) {
      fmt::print("\n{:<22} {:<14} {:>5} {:>10} {:>10} {:>9}  {}\n", "implementation", "op", "steps", "time",
                 "reference", "ref/impl", "verdict (against the reference, on the steps above)");
      for (const auto& r : others) {
        if (r.steps == 0) {
          fmt::print("{:<22} {:<14} {:>5} {:>10} {:>10} {:>9}  {}\n", r.impl, r.op, 0, "-", "-", "-", r.verdict);
          continue;
        }
        fmt::print("{:<22} {:<14} {:>5} {:>8.2f}ms {:>8.2f}ms {:>8.2f}x  {}\n", r.impl, r.op, r.steps,
                   1e3 * r.seconds, 1e3 * r.reference_seconds, r.seconds > 0 ? r.reference_seconds / r.seconds : 0.0,
                   r.verdict);
      }
    }
  }
  return ok ? kExitOk : kExitCheckFailed;
}

const Registrar run_registrar("run", 10, [](CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  auto* sub = app.add_subcommand("run", "The main job: realistic decode steps, reference vs an independent brute force");
  sub->add_option("--rows", options->rows, "Decode rows (requests) per case")->check(CLI::Range(1, 1024));
  sub->add_option("--context", options->context, "Context length in tokens (default 32768 for V3.2, 65536 for V4.1)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  sub->add_option("--seed", options->seed, "Random seed");
  sub->add_flag("--json", options->json, "Print the results as JSON");
  sub->add_option("--impl", options->impl,
                  "Implementation of the table that computes the step's ops it takes (`fuzz --list` names them)");
  return [options] { return run(*options); };
});

}  // namespace
}  // namespace dsa::cli
