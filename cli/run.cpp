// `dsa-oracle run`: the main job on defaults. Draws realistic decode steps
// (DeepSeek V3.2 and V4.1 C4A), computes the reference logits and top-k under
// the `exact` profile, and checks both against an independent brute force.
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <fmt/core.h>

#include "brute_force.hpp"
#include "command_registry.hpp"
#include "dsa/logits.hpp"
#include "dsa/synthetic.hpp"
#include "dsa/topk.hpp"

namespace dsa::cli {
namespace {

struct RunOptions {
  int rows = 4;
  int64_t context = 0;  // tokens; 0 = each case's default
  uint64_t seed = 1;
  bool json = false;
};

struct CaseResult {
  std::string name;
  int rows;
  int64_t context_tokens, entries;
  int topk;
  double reference_s, brute_force_s;
  int64_t logits_checked, logits_differing, topk_rows_differing;
  bool pass() const { return logits_differing == 0 && topk_rows_differing == 0; }
};

CaseResult run_case(const std::string& name, const SyntheticDecodeConfig& config, int k, uint64_t seed) {
  Rng rng(seed);
  const DecodeProblem problem = make_decode_problem(config, rng);
  const auto t0 = std::chrono::steady_clock::now();
  const LogitsResult logits = decode_logits(problem, find_profile("exact"));
  const TopkIndices topk = decode_topk(problem, logits.logits, k);
  const auto t1 = std::chrono::steady_clock::now();

  CaseResult r{name, int(problem.rows()), config.seq_lens.empty() ? 0 : config.seq_lens[0],
               config.seq_lens.empty() ? 0 : config.seq_lens[0] / config.compress_ratio, k, 0, 0, 0, 0, 0};
  std::vector<BruteForceRow> brute(size_t(problem.rows()));
#pragma omp parallel for schedule(dynamic)
  for (int64_t row = 0; row < problem.rows(); ++row) brute[size_t(row)] = brute_force_row(problem, row, k);
  const auto t2 = std::chrono::steady_clock::now();
  for (int64_t row = 0; row < problem.rows(); ++row) {
    const auto& expect = brute[size_t(row)];
    for (size_t n = 0; n < expect.logits.size(); ++n) {
      ++r.logits_checked;
      if (std::memcmp(&expect.logits[n], logits.logits.row(row) + n, sizeof(float)) != 0) ++r.logits_differing;
    }
    if (!std::equal(expect.topk.begin(), expect.topk.end(), topk.row(row))) ++r.topk_rows_differing;
  }
  r.reference_s = std::chrono::duration<double>(t1 - t0).count();
  r.brute_force_s = std::chrono::duration<double>(t2 - t1).count();
  return r;
}

int run(const RunOptions& o) {
  std::vector<CaseResult> results;
  {
    SyntheticDecodeConfig c;  // DeepSeek V3.2: H 64, D 128, page 64, k 2048
    c.batch = o.rows;
    c.seq_lens.assign(size_t(o.rows), int32_t(o.context > 0 ? o.context : 32768));
    if (!o.json) fmt::print(stderr, "run: DeepSeek V3.2 decode, {} rows of {} tokens...\n", o.rows, c.seq_lens[0]);
    results.push_back(run_case("deepseek_v3.2_decode", c, 2048, o.seed));
  }
  {
    SyntheticDecodeConfig c;  // V4.1 C4A: ratio 4, page 256 tokens = 64 entries, k 512
    c.batch = o.rows;
    c.compress_ratio = 4;
    c.block_size = 64;
    c.seq_lens.assign(size_t(o.rows), int32_t(o.context > 0 ? o.context : 65536));
    if (!o.json) fmt::print(stderr, "run: DeepSeek V4.1 C4A decode, {} rows of {} tokens...\n", o.rows, c.seq_lens[0]);
    results.push_back(run_case("deepseek_v4.1_c4a_decode", c, 512, o.seed + 1));
  }
  bool ok = true;
  for (const auto& r : results) ok = ok && r.pass();
  if (o.json) {
    nlohmann::json j = {{"schema", "dsa-oracle/run/1"}, {"profile", "exact"}, {"pass", ok}, {"cases", nlohmann::json::array()}};
    for (const auto& r : results)
      j["cases"].push_back({{"case", r.name}, {"rows", r.rows}, {"context_tokens", r.context_tokens},
                            {"entries", r.entries}, {"topk", r.topk}, {"reference_seconds", r.reference_s},
                            {"brute_force_seconds", r.brute_force_s}, {"logits_checked", r.logits_checked},
                            {"logits_differing", r.logits_differing}, {"topk_rows_differing", r.topk_rows_differing},
                            {"verdict", r.pass() ? "pass" : "FAIL"}});
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{:<26} {:>5} {:>9} {:>8} {:>6} {:>10} {:>12}  {}\n", "case", "rows", "context", "entries", "k",
               "reference", "brute force", "verdict");
    for (const auto& r : results)
      fmt::print("{:<26} {:>5} {:>9} {:>8} {:>6} {:>9.2f}s {:>11.2f}s  {}\n", r.name, r.rows, r.context_tokens,
                 r.entries, r.topk, r.reference_s, r.brute_force_s,
                 r.pass() ? "pass" : fmt::format("FAIL ({} logits, {} top-k rows differ)", r.logits_differing,
                                                 r.topk_rows_differing));
    fmt::print("{} logits and {} top-k rows checked bit for bit against an independent brute force (profile exact)\n",
               [&] { int64_t n = 0; for (auto& r : results) n += r.logits_checked; return n; }(),
               [&] { int64_t n = 0; for (auto& r : results) n += r.rows; return n; }());
  }
  return ok ? kExitOk : kExitCheckFailed;
}

const Registrar registrar("run", 10, [](CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  auto* sub = app.add_subcommand("run", "The main job: realistic decode steps, reference vs an independent brute force");
  sub->add_option("--rows", options->rows, "Decode rows (requests) per case")->check(CLI::Range(1, 1024));
  sub->add_option("--context", options->context, "Context length in tokens (default 32768 for V3.2, 65536 for V4.1)")
      ->check(CLI::Range(int64_t(1), int64_t(1) << 24));
  sub->add_option("--seed", options->seed, "Random seed");
  sub->add_flag("--json", options->json, "Print the results as JSON");
  return [options] { return run(*options); };
});

}  // namespace
}  // namespace dsa::cli
