// `dsa-oracle fuzz`: property-based fuzzing of an implementation under test
// (campaigns, shards, replay, the mutant table) and `dsa-oracle fuzz-merge`,
// which combines the JSON lines of many campaigns. docs/fuzzing.md.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command_registry.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/differential.hpp"
#include "dsa/fuzz/implementations.hpp"
#include "dsa/fuzz/mutants.hpp"
#include "dsa/optimized/implementations.hpp"

namespace dsa::cli {
namespace {

using namespace dsa::fuzz;

struct FuzzOptions {
  std::string impl = "reference";
  std::string against;
  std::string against_ties = "fail";
  std::string mutant;
  std::string mutants;
  std::vector<std::string> properties;
  uint64_t seed = 1;
  std::string shard = "0/1";
  double seconds = 0;
  int64_t cases = 0;
  int32_t batch = 10;
  double mutant_seconds = 60;
  bool all_properties = false;
  std::string replay;
  std::string out;
  bool quiet = false;
  bool list = false;
};

// This program as a shell word, so that printed replay lines run as they are.
std::string program() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? shell_quote(std::string(buf, size_t(n))) : std::string("dsa-oracle");
}

std::pair<int32_t, int32_t> parse_shard(const std::string& s) {
  int32_t i = -1, n = 0;
  char slash = 0;
  std::istringstream in(s);
  if (!(in >> i >> slash >> n) || slash != '/' || !in.eof() || n < 1 || i < 0 || i >= n)
    throw InvalidInput("shard", "'" + s + "' is not i/n with 0 <= i < n");
  return {i, n};
}

const Mutant& find_mutant(const std::string& name) {
  for (const Mutant& m : mutant_catalog())
    if (m.name == name) return m;
  std::vector<std::string> names;
  for (const Mutant& m : mutant_catalog()) names.push_back(m.name);
  throw InvalidInput("mutant", fmt::format("unknown mutant '{}' (known: {})", name, fmt::join(names, ", ")));
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

class JsonLines {
public:
  explicit JsonLines(const std::string& path) {
    if (path.empty()) return;
    file_.open(path, std::ios::out | std::ios::trunc);
    if (!file_) throw InvalidInput("out", "cannot write '" + path + "'");
  }
  void write(const nlohmann::json& j) {
    if (file_.is_open()) file_ << j.dump() << "\n" << std::flush;
  }

private:
  std::ofstream file_;
};

int list_everything() {
  fmt::print("properties:\n");
  for (const auto& p : properties()) fmt::print("  {:<38} {}\n", p.name, p.description);
  fmt::print("properties with --against OLD (each case on both; differential.hpp):\n");
  for (const auto& p : against_properties([] { return make_reference_ops(); }))
    fmt::print("  {:<38} {}\n", p.name, p.description);
  fmt::print("implementations (--impl):\n");
  for (const auto& entry : optimized::implementations())
    fmt::print("  {:<24} {:<5} {:<10} {}\n      {}\n", entry.name, optimized::to_string(entry.device),
               entry.available() ? "available" : "not here", entry.description, describe(entry.contract));
  fmt::print("  {:<24} {:<5} {:<10} {}\n", std::string(kExternalPrefix) + "COMMAND", "any", "",
             "a command run per call in the external exchange (docs/fuzzing.md)");
  fmt::print("mutants (--mutants all, or --mutant NAME):\n");
  for (const Mutant& m : mutant_catalog()) fmt::print("  {:<44} {:<36} {}\n", m.name, m.killed_by, m.bug);
  return kExitOk;
}

int run_mutant_table(const FuzzOptions& o) {
  std::vector<Mutant> chosen;
  if (o.mutants == "all")
    chosen = mutant_catalog();
  else
    for (const std::string& name : split_list(o.mutants)) chosen.push_back(find_mutant(name));
  MutantOptions m;
  m.seed = o.seed;
  m.seconds_per_mutant = o.mutant_seconds;
  m.all_properties = o.all_properties;
  m.batch_cases = o.batch;
  m.replay_prefix = program() + " fuzz";
  m.progress = o.quiet ? nullptr : &std::cerr;
  const std::vector<MutantResult> results = run_mutants(chosen, m);
  JsonLines out(o.out);
  for (const auto& r : results) out.write(mutant_record(r));
  fmt::print("{}", format_mutant_table(results));
  for (const auto& r : results)
    if (!r.killed) return kExitCheckFailed;
  return kExitOk;
}

int run_fuzz(const FuzzOptions& o) {
  if (o.list) return list_everything();
  if (!o.mutants.empty() && !o.against.empty())
    throw InvalidInput("against", "--against holds one implementation (or --mutant) to another, not the mutant table");
  if (!o.mutants.empty()) return run_mutant_table(o);

  CampaignOptions c;
  if (!o.mutant.empty()) {
    const Mutant& m = find_mutant(o.mutant);
    c.impl = "mutant " + m.name;
    c.make_impl = m.make;
    c.replay_prefix = program() + " fuzz --mutant " + shell_quote(m.name);
  } else {
    make_implementation(o.impl);  // an unknown name fails here, before any work
    c.impl = o.impl;
    c.make_impl = [name = o.impl] { return make_implementation(name); };
    c.replay_prefix = program() + " fuzz --impl " + shell_quote(o.impl);
  }
  if (!o.against.empty()) {
    make_implementation(o.against);
    c.against = o.against;
    c.make_against = [name = o.against] { return make_implementation(name); };
    c.against_options.ties_legal = o.against_ties == "legal";
    c.impl += " against " + o.against;
    c.replay_prefix += " --against " + shell_quote(o.against);
    if (c.against_options.ties_legal) c.replay_prefix += " --against-ties legal";
  }
  const std::vector<Property> against =
      c.make_against ? against_properties(c.make_against, c.against_options) : std::vector<Property>{};
  for (const std::string& p : o.properties)
    for (const std::string& name : split_list(p))
      c.properties.push_back(c.make_against ? find_property_in(against, name).name : find_property(name).name);

  if (!o.replay.empty()) {
    if (c.properties.size() != 1) throw InvalidInput("property", "--replay needs exactly one --property");
    const Outcome outcome = replay(c.make_impl, c.properties[0], o.replay, c.make_against, c.against_options);
    const FuzzCase fc = case_from_json(nlohmann::json::parse(o.replay));
    fmt::print("replay {} on {}:\n{}", c.properties[0], c.impl, describe(fc));
    switch (outcome.verdict) {
      case Verdict::pass: fmt::print("PASS\n"); return kExitOk;
      case Verdict::unsupported: fmt::print("UNSUPPORTED: {}\n", outcome.message); return kExitOk;
      case Verdict::fail: fmt::print("FAIL\n{}\n", outcome.message); return kExitCheckFailed;
    }
  }

  std::tie(c.shard, c.shards) = parse_shard(o.shard);
  c.seed = o.seed;
  c.seconds = o.seconds;
  c.cases = o.cases;
  if (c.seconds <= 0 && c.cases <= 0) c.seconds = 60;
  c.batch_cases = o.batch;
  c.progress = o.quiet ? nullptr : &std::cerr;
  JsonLines out(o.out);
  c.record = [&out](const nlohmann::json& j) { out.write(j); };
  const CampaignResult result = run_campaign(c);
  fmt::print("{}", format_campaign(c, result));
  for (const auto& p : result.properties)
    if (p.failure) fmt::print("\n{}", format_failure(*p.failure));
  return result.passed() ? kExitOk : kExitCheckFailed;
}

const Registrar fuzz_registrar("fuzz", 40, [](CLI::App& app) {
  auto options = std::make_shared<FuzzOptions>();
  auto* sub = app.add_subcommand("fuzz", "Property-based fuzzing of an implementation under test (docs/fuzzing.md)");
  sub->add_option("--impl", options->impl, "reference, cpu_radix_topk, cpu_persistent_topk, cpu_compact_candidates, "
                                           "or external:COMMAND")
      ->capture_default_str();
  sub->add_option("--against", options->against,
                  "Hold --impl (or --mutant) to this implementation: both run on every case, by the differential "
                  "properties against_logits and against_selections (docs/regression.md)");
  sub->add_option("--against-ties", options->against_ties,
                  "--against: sets that differ only among ties at the cut 'fail' (not identical) or are 'legal'")
      ->check(CLI::IsMember({"fail", "legal"}))
      ->capture_default_str();
  sub->add_option("--mutant", options->mutant, "Fuzz one mutant of the catalog instead of --impl");
  sub->add_option("--mutants", options->mutants, "The mutant table: 'all' or a comma-separated list of mutants");
  sub->add_option("--property", options->properties,
                  "Properties to run (repeat or comma-separate; default: all but the opt-in logits_agree_clean; with "
                  "--against: against_logits and against_selections)");
  sub->add_option("--seed", options->seed, "Seed of the campaign")->capture_default_str();
  sub->add_option("--shard", options->shard, "This machine's share i/n of the seed space")->capture_default_str();
  sub->add_option("--seconds", options->seconds, "Time budget of the whole campaign (default 60 without --cases)");
  sub->add_option("--cases", options->cases, "Cases per property (this shard)");
  sub->add_option("--batch", options->batch, "Cases per RapidCheck run (one seed each)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub->add_option("--mutant-seconds", options->mutant_seconds, "Budget of each mutant in the table")
      ->capture_default_str();
  sub->add_flag("--all-properties", options->all_properties, "Mutant table: run every property, not only the killer");
  sub->add_option("--replay", options->replay, "Replay one case (the JSON a failure printed) of one --property");
  sub->add_option("--out", options->out, "Write the results as JSON lines to this file");
  sub->add_flag("--quiet", options->quiet, "No progress line");
  sub->add_flag("--list", options->list, "List the properties, implementations and mutants");
  return [options] { return run_fuzz(*options); };
});

struct MergeOptions {
  std::vector<std::string> files;
  std::string out;
};

int run_merge(const MergeOptions& o) {
  std::vector<nlohmann::json> records;
  for (const std::string& path : o.files) {
    std::ifstream in(path);
    if (!in) throw InvalidInput("files", "cannot read '" + path + "'");
    std::string line;
    for (int64_t n = 1; std::getline(in, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        records.push_back(nlohmann::json::parse(line));
      } catch (const nlohmann::json::exception& e) {
        throw InvalidInput("files", fmt::format("{} line {}: not JSON ({})", path, n, e.what()));
      }
    }
  }
  const MergeResult m = merge_records(records);
  fmt::print("{}", format_merge(m));
  if (!o.out.empty()) {
    std::ofstream out(o.out, std::ios::trunc);
    if (!out) throw InvalidInput("out", "cannot write '" + o.out + "'");
    out << nlohmann::json{{"schema", kFuzzSchema}, {"type", "summary"}, {"passed", m.passed},
                          {"properties", m.summary}, {"failures", m.failures}}
               .dump(2)
        << "\n";
  }
  return m.passed ? kExitOk : kExitCheckFailed;
}

const Registrar merge_registrar("fuzz-merge", 41, [](CLI::App& app) {
  auto options = std::make_shared<MergeOptions>();
  auto* sub = app.add_subcommand("fuzz-merge", "Combine the JSON lines of fuzz campaigns (shards) into a summary");
  sub->add_option("files", options->files, "JSON-lines files written by `dsa-oracle fuzz --out`")->required();
  sub->add_option("--out", options->out, "Write the summary as JSON to this file");
  return [options] { return run_merge(*options); };
});

}  // namespace
}  // namespace dsa::cli
