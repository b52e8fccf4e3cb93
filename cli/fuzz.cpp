// `dsa-oracle fuzz`: property-based fuzzing of an implementation under test
// (campaigns, shards, replay, the mutant table) and `dsa-oracle fuzz-merge`,
// which combines the JSON lines of many campaigns. docs/fuzzing.md.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command_registry.hpp"
#include "dsa/dataset/json_input.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/campaign.hpp"
#include "dsa/fuzz/contract_json.hpp"
#include "dsa/fuzz/differential.hpp"
#include "dsa/fuzz/external.hpp"
#include "dsa/fuzz/implementations.hpp"
#include "dsa/fuzz/interrupt.hpp"
#include "dsa/fuzz/mutants.hpp"
#include "dsa/input_file.hpp"
#include "dsa/optimized/implementations.hpp"
#include "option_checks.hpp"
#include "signals.hpp"

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
  double shrink_seconds = CampaignOptions{}.shrink_seconds;
  double mutant_seconds = 60;
  bool all_properties = false;
  std::string replay;
  int32_t replay_attempts = 1;
  std::string out;
  bool quiet = false;
  bool list = false;
  bool keep_going = false;
  bool require_all = false;
  bool allow_empty = false;
  // External commands.
  double timeout = 10;
  bool persistent = false;
  std::string keep = "dsa-fuzz-kept";
  std::string contract;  // a contract file for an external command
  // Narrowing a campaign (on top of the implementation's contract).
  std::string profile;
  std::vector<int32_t> page_sizes;
  std::vector<std::string> layouts;
  std::string next_n;
};

// The implementation's contract narrowed by --profile, --page-size, --layout and --next-n.
Contract narrowed(Contract c, const FuzzOptions& o) {
  if (!o.profile.empty()) {
    find_profile(o.profile);
    if (!c.profile.empty() && c.profile != o.profile)
      throw InvalidInput("profile", "'" + o.profile + "', but the implementation's arithmetic is " + c.profile +
                                        "'s (its contract)");
    c.profile = o.profile;
  }
  const auto intersect = [](auto& have, const auto& want) {
    if (want.empty()) return;
    if (have.empty()) {
      have = want;
      return;
    }
    std::erase_if(have, [&](const auto& v) { return std::find(want.begin(), want.end(), v) == want.end(); });
  };
  std::vector<CacheLayout> layouts;
  for (const std::string& name : o.layouts) layouts.push_back(parse_cache_layout(name));
  const bool had_layouts = !c.cache_layouts.empty(), had_pages = !c.page_sizes.empty();
  intersect(c.cache_layouts, layouts);
  intersect(c.page_sizes, o.page_sizes);
  if ((had_layouts && !layouts.empty() && c.cache_layouts.empty()) || (had_pages && !o.page_sizes.empty() && c.page_sizes.empty()))
    throw InvalidInput(c.cache_layouts.empty() && had_layouts ? "layout" : "page-size",
                       "none of the values given is in the implementation's contract (" + describe(c) + ")");
  if (!o.next_n.empty()) {
    int32_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream in(o.next_n);
    if (!(in >> lo) || lo < 1) throw InvalidInput("next-n", "'" + o.next_n + "' is not N or MIN-MAX (N >= 1)");
    hi = lo;
    if (in >> dash) {
      if (dash != '-' || !(in >> hi) || hi < lo) throw InvalidInput("next-n", "'" + o.next_n + "' is not N or MIN-MAX");
    }
    c.min_next_n = std::max(c.min_next_n, lo);
    c.max_next_n = std::min(c.max_next_n, hi);
  }
  return c;
}

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
    if (std::filesystem::is_directory(path)) throw InvalidInput("out", "'" + path + "' is a folder, not a file");
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
  JsonLines out(o.out);  // writable, checked before any work
  const std::vector<MutantResult> results = run_mutants(chosen, m);
  for (const auto& r : results) out.write(mutant_record(r));
  fmt::print("{}", format_mutant_table(results));
  for (const auto& r : results)
    if (!r.killed) return kExitCheckFailed;
  return kExitOk;
}

// The external command's options as a replay line must repeat them.
std::string external_flags(const FuzzOptions& o) {
  std::string flags;
  if (o.persistent) flags += " --persistent";
  if (o.timeout != 10) flags += fmt::format(" --timeout {}", o.timeout);
  return flags;
}

// The input an external command failed on, kept for the user to run it on by hand.
void keep_failed_input(const ExternalCommand& command, const std::string& folder, Failure& f) {
  if (folder.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  const std::string path =
      (std::filesystem::path(folder) / fmt::format("{}-{:016x}.safetensors", f.property, f.batch_seed)).string();
  try {
    if (command.keep_last_failed(path)) f.kept_input = path;
  } catch (const InvalidInput& e) {
    f.kept_input = std::string("(could not be kept: ") + e.what() + ")";
  }
}

int run_fuzz(const FuzzOptions& o) {
  if (o.list) return list_everything();
  if (!o.mutants.empty() && !o.against.empty())
    throw InvalidInput("against", "--against holds one implementation (or --mutant) to another, not the mutant table");
  if (!o.mutants.empty()) return run_mutant_table(o);

  CampaignOptions c;
  std::shared_ptr<ExternalCommand> external;
  if (!o.mutant.empty()) {
    const Mutant& m = find_mutant(o.mutant);
    c.impl = "mutant " + m.name;
    c.make_impl = m.make;
    c.replay_prefix = program() + " fuzz --mutant " + shell_quote(m.name);
  } else if (o.impl.starts_with(kExternalPrefix)) {
    // One command for the whole campaign: its folder, its persistent process.
    ExternalOptions eo;
    eo.timeout_seconds = o.timeout;
    eo.persistent = o.persistent;
    external = std::make_shared<ExternalCommand>(o.impl.substr(kExternalPrefix.size()), eo);
    // What it takes: a contract file, else its answer to `describe`, else anything.
    if (!o.contract.empty()) {
      const std::string text = read_input_text(o.contract, "contract");
      c.limits.draw = contract_from_json(dataset::parse_json(text, o.contract), o.contract);
    } else {
      std::optional<std::string> declared;
      try {
        declared = external->describe();
      } catch (const Interrupted&) {
        // A signal while the command is asked for its contract: the campaign
        // below stops before its first call and prints and writes what ran (nothing).
      }
      if (declared)
        c.limits.draw = contract_from_json(dataset::parse_json(*declared, "the command's describe answer"),
                                           "the command's describe answer");
      else if (!external->describe_failure().empty() && !o.quiet)
        std::cerr << "note: no contract declared (its `describe` call: " << external->describe_failure()
                  << "); every draw is offered to it. Give one with --contract FILE.\n";
    }
    c.impl = o.impl;
    c.make_impl = [external] { return make_external_ops(external); };
    c.replay_prefix = program() + " fuzz --impl " + shell_quote(o.impl) + external_flags(o);
    c.setup_error = [external] { return external->setup_error(); };
    c.on_failure = [external, keep = o.keep](Failure& f) { keep_failed_input(*external, keep, f); };
  } else {
    // The external command's options would be ignored: say so rather than run without them.
    if (!o.contract.empty()) throw InvalidInput("contract", "applies to external commands only (--impl external:COMMAND)");
    if (o.persistent) throw InvalidInput("persistent", "applies to external commands only (--impl external:COMMAND)");
    make_implementation(o.impl);  // an unknown name fails here, before any work
    c.limits.draw = implementation_contract(o.impl);
    c.impl = o.impl;
    c.make_impl = [name = o.impl] { return make_implementation(name); };
    c.replay_prefix = program() + " fuzz --impl " + shell_quote(o.impl);
  }
  if (!o.against.empty()) {
    make_implementation(o.against);
    // Each case goes to both: drawn inside both contracts.
    c.limits.draw = both(c.limits.draw, implementation_contract(o.against), o.impl, o.against);
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
  c.limits.draw = narrowed(c.limits.draw, o);

  if (!o.replay.empty()) {
    if (c.properties.size() != 1) throw InvalidInput("property", "--replay needs exactly one --property");
    const FuzzCase fc = case_from_json(dataset::parse_json(o.replay, "replay"));  // validated before any work
    ReplayOutcome outcome;
    try {
      outcome = replay(c.make_impl, c.properties[0], o.replay, c.make_against, c.against_options, o.replay_attempts);
    } catch (const Interrupted&) {
      fmt::print("replay stopped by signal {}\n", stop_signal());
      return 128 + stop_signal();
    }
    fmt::print("replay {} on {}:\n{}", c.properties[0], c.impl, describe(fc));
    // Which attempt failed, where more than one was asked for (a run-dependent failure passes some).
    const std::string attempts =
        o.replay_attempts == 1 ? std::string()
        : outcome.failed_on   ? fmt::format(" on attempt {} of {}", outcome.failed_on, o.replay_attempts)
                              : fmt::format(" ({} attempts)", outcome.attempts);
    switch (outcome.verdict) {
      case Verdict::pass: fmt::print("PASS{}\n", attempts); return kExitOk;
      // A replay that checked nothing is not a pass.
      case Verdict::unsupported: fmt::print("UNSUPPORTED (nothing checked): {}\n", outcome.message); return kExitCheckFailed;
      case Verdict::fail:
        if (external && !o.keep.empty()) {
          Failure f;
          f.property = c.properties[0];
          keep_failed_input(*external, o.keep, f);
          if (!f.kept_input.empty()) outcome.message += "\ninput kept: " + f.kept_input;
        }
        fmt::print("FAIL{}\n{}\n", attempts, outcome.message);
        return kExitCheckFailed;
    }
  }

  std::tie(c.shard, c.shards) = parse_shard(o.shard);
  c.seed = o.seed;
  c.seconds = o.seconds;
  c.cases = o.cases;
  if (c.seconds <= 0 && c.cases <= 0) c.seconds = 60;
  c.batch_cases = o.batch;
  if (!(o.shrink_seconds > 0)) throw InvalidInput("shrink-seconds", "must be positive");
  c.shrink_seconds = o.shrink_seconds;
  c.keep_going = o.keep_going;
  c.progress = o.quiet ? nullptr : &std::cerr;
  JsonLines out(o.out);  // writable, checked before any work
  c.record = [&out](const nlohmann::json& j) { out.write(j); };
  const CampaignResult result = run_campaign(c);
  for (const auto& p : result.properties) {
    if (p.failure) fmt::print("\n{}", format_failure(*p.failure));
    for (const auto& f : p.later_failures) fmt::print("\n{}", format_failure(f));
  }
  fmt::print("\n{}", format_campaign(c, result));
  if (result.stop_signal) return 128 + result.stop_signal;
  if (!result.passed()) return kExitCheckFailed;
  if (result.checked_nothing()) {
    if (o.allow_empty) {
      fmt::print("--allow-empty: exiting 0 although nothing was checked\n");
      return kExitOk;
    }
    return kExitCheckFailed;
  }
  if (o.require_all && !result.unchecked().empty()) {
    fmt::print("--require-all: {} applicable propert{} checked no case\n", result.unchecked().size(),
               result.unchecked().size() == 1 ? "y" : "ies");
    return kExitCheckFailed;
  }
  return kExitOk;
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
  sub->add_option("--seconds", options->seconds, "Time budget of the whole campaign (default 60 without --cases)")
      ->check(positive_seconds());
  sub->add_option("--cases", options->cases, "Cases per property (this shard)")->check(at_least(1));
  sub->add_option("--batch", options->batch, "Cases per RapidCheck run (one seed each)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub->add_option("--shrink-seconds", options->shrink_seconds,
                  "Longest time one failure is shrunk (kept within --seconds; a failure found at its end gets up to 2 s)")
      ->check(positive_seconds())
      ->capture_default_str();
  sub->add_option("--mutant-seconds", options->mutant_seconds, "Budget of each mutant in the table")
      ->check(positive_seconds())
      ->capture_default_str();
  sub->add_flag("--all-properties", options->all_properties, "Mutant table: run every property, not only the killer");
  sub->add_option("--replay", options->replay, "Replay one case (the JSON a failure printed) of one --property");
  sub->add_option("--replay-attempts", options->replay_attempts,
                  "Replay on a fresh instance up to this many times, until one fails (a run-dependent failure)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub->add_option("--out", options->out, "Write the results as JSON lines to this file");
  sub->add_flag("--quiet", options->quiet, "No progress line");
  sub->add_flag("--list", options->list, "List the properties, implementations and mutants");
  sub->add_flag("--keep-going", options->keep_going,
                "Go on after a failure and collect the distinct failures of each property (up to 10)");
  sub->add_flag("--require-all", options->require_all, "Exit 1 when an applicable property checked no case");
  sub->add_flag("--allow-empty", options->allow_empty, "Exit 0 even when nothing was checked (say so all the same)");
  sub->add_option("--timeout", options->timeout,
                  "External commands: seconds per call, plus 1 s per 16 MiB of request; past it the call is killed "
                  "with its process group and is a failure")
      ->check(positive_seconds())
      ->capture_default_str();
  sub->add_flag("--persistent", options->persistent,
                "External commands: start `COMMAND --persistent` once and exchange length-prefixed safetensors over "
                "its standard input and output");
  sub->add_option("--contract", options->contract,
                  "External commands: a JSON file of what the command takes (docs/fuzzing.md, \"Contracts\"); "
                  "without it the command's answer to `describe`, if any");
  sub->add_option("--profile", options->profile, "Draw decode and prefill cases under this profile only");
  sub->add_option("--page-size", options->page_sizes, "Draw decode caches with these page sizes only (repeat)");
  sub->add_option("--layout", options->layouts, "Draw decode caches in these layouts only: block_flat, preshuffle, mxfp4");
  sub->add_option("--next-n", options->next_n, "Rows per decode request: N or MIN-MAX");
  sub->add_option("--keep", options->keep,
                  "External commands: folder where the input of a failed call is kept (empty: none)")
      ->capture_default_str();
  return [options] {
    // A signal stops the campaign between cases; it prints and writes what it has.
    const CooperativeStop cooperative;
    return run_fuzz(*options);
  };
});

struct MergeOptions {
  std::vector<std::string> files;
  std::string out;
  bool allow_empty = false;
};

int run_merge(const MergeOptions& o) {
  std::vector<nlohmann::json> records;
  std::vector<std::string> origins;
  for (const std::string& path : o.files) {
    std::istringstream in(read_input_text(path, "files"));
    std::string line;
    for (int64_t n = 1; std::getline(in, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      origins.push_back(fmt::format("{} line {}", path, n));
      records.push_back(dataset::parse_json(line, origins.back()));
    }
  }
  const MergeResult m = merge_records(records, origins);
  if (m.property_records == 0) {
    fmt::print("nothing to merge: no property record in {} file{} ({} lines); that is not a pass\n", o.files.size(),
               o.files.size() == 1 ? "" : "s", records.size());
    return o.allow_empty ? kExitOk : kExitCheckFailed;
  }
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
  sub->add_flag("--allow-empty", options->allow_empty, "Exit 0 when the files hold no property record");
  return [options] { return run_merge(*options); };
});

}  // namespace
}  // namespace dsa::cli
