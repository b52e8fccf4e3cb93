// A fuzzing campaign: properties run against one implementation under a time
// or case budget, with a deterministic split of the seed space into shards,
// results as JSON lines, failures shrunk and replayable; and the mutant
// table, the same campaign run against each mutant of the catalog.
//
// Seeds. A property's cases come in batches of `batch_cases`; batch i draws
// from seed mix(seed, property, i) and belongs to shard i mod shards. So
// `--shard 3/8` runs batches 3, 11, 19, ... and the eight shards together run
// what one machine would, without overlap, on any job runner.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dsa/fuzz/differential.hpp"
#include "dsa/fuzz/generators.hpp"
#include "dsa/fuzz/mutants.hpp"
#include "dsa/fuzz/properties.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::fuzz {

inline constexpr const char* kFuzzSchema = "dsa-oracle/fuzz/1";

struct Failure;

struct CampaignOptions {
  std::string impl;  // the implementation's name in records and replay commands
  // A fresh instance per case, so that a case replays exactly (implementations may keep state).
  std::function<std::unique_ptr<IndexerOps>()> make_impl;
  // --against: the implementation the one under test is held to. The campaign
  // then runs the differential properties (differential.hpp) instead, each
  // case on a fresh instance of both; `properties` names those.
  std::string against;
  MakeImpl make_against;
  AgainstOptions against_options;
  std::vector<std::string> properties;  // empty: every property
  uint64_t seed = 1;
  int32_t shard = 0;
  int32_t shards = 1;
  double seconds = 0;  // budget of the whole campaign, shared round-robin; 0: none
  int64_t cases = 0;   // cases per property in this shard; 0: none (then `seconds` must be set)
  int32_t batch_cases = 10;
  bool stop_at_first_failure = false;  // of any property (the mutant runs); otherwise each property stops at its own
  // Go on after a failure: each property collects its distinct failures
  // (grouped by shrunk case and message), up to max_failures of them.
  bool keep_going = false;
  int32_t max_failures = 10;
  double shrink_seconds = 30;         // shrinking stops after this long or this many steps,
  int64_t shrink_steps = 5000;        // keeping the smallest failing case found so far
  GenLimits limits;
  // The start of the printed replay command, e.g. "dsa-oracle fuzz --impl reference".
  std::string replay_prefix;
  std::ostream* progress = nullptr;                    // the progress line (stderr), or none
  std::function<void(const nlohmann::json&)> record;  // each JSON line as it is made, or none
  // After the probes: a setup error of the implementation (an external command
  // that fails on every first call), which ends the campaign with InvalidInput("impl").
  std::function<std::optional<std::string>()> setup_error;
  // Each finished failure (shrunk and replayed), before it is printed and recorded:
  // e.g. keeping the input an external command failed on (Failure::kept_input).
  std::function<void(Failure&)> on_failure;
};

struct Failure {
  std::string property;
  FuzzCase shrunk;
  std::string message;        // the oracle's report on the shrunk case
  std::string replay;         // a command line that replays it
  int64_t cases = 0;          // cases of this property drawn up to the failing one
  double seconds = 0;         // campaign time when it was found (before shrinking)
  int64_t shrink_steps = 0;
  double shrink_seconds = 0;
  uint64_t batch_seed = 0;
  int replay_attempts = 0;  // the replay on which it failed again (1: the first); 0: none of kReproduceAttempts
  std::string signature;    // the shrunk case and the message's first line: what groups equal failures
  int64_t occurrences = 1;  // failures of this signature found (with --keep-going)
  std::string kept_input;   // a file holding the input of the failed call, when one was kept
  // The shrunk case failed again on a fresh instance (within kReproduceAttempts).
  bool reproduced() const { return replay_attempts > 0; }
};

struct PropertyResult {
  std::string property;
  KindMask kinds = 0;  // kinds the implementation takes; 0: the property does not apply
  int64_t cases = 0;   // drawn and run (shrinking not counted)
  int64_t passed = 0;
  int64_t unsupported = 0;  // the implementation answered Unsupported: never a pass
  double seconds = 0;
  std::optional<Failure> failure;       // the first failure
  std::vector<Failure> later_failures;  // distinct failures after it (keep_going)
  bool applicable() const { return kinds != 0; }
  int64_t failure_count() const { return (failure ? 1 : 0) + int64_t(later_failures.size()); }
};

struct CampaignResult {
  std::vector<PropertyResult> properties;
  double seconds = 0;
  int stop_signal = 0;  // the SIGINT/SIGTERM that stopped the campaign early, 0 when none
  bool passed() const;
  // A campaign that checked nothing: no property applies, or none ran a case.
  bool checked_nothing() const;
  // Applicable properties that ran no case (the budget ran out, or every case was Unsupported).
  std::vector<std::string> unchecked() const;
};

// Throws InvalidInput for unknown properties, a bad shard or no budget.
CampaignResult run_campaign(const CampaignOptions& options);

// The JSON lines of a finished campaign (also streamed through options.record).
nlohmann::json property_record(const CampaignOptions& options, const PropertyResult& r);
nlohmann::json failure_record(const CampaignOptions& options, const Failure& f);
// The last line of a campaign's records: totals, the unchecked properties, whether it was stopped.
nlohmann::json campaign_record(const CampaignOptions& options, const CampaignResult& r);

// A failure as a person reads it: the property, the message, the shrunk case, the replay line.
std::string format_failure(const Failure& f);
// How the shrunk case fared on its replays where it did not fail again at once ("" where it did).
std::string replay_note(const Failure& f);
// A line per property: cases, unsupported, verdict.
std::string format_campaign(const CampaignOptions& options, const CampaignResult& r);

// A shrunk failure is replayed on fresh instances up to this many times before
// the report calls it not reproduced: a run-dependent failure (a race among
// ties, a read of memory nothing wrote) may pass a replay, or several.
inline constexpr int kReproduceAttempts = 16;

// A replay's verdict: that of the first attempt that failed, else of the last.
struct ReplayOutcome : Outcome {
  int attempts = 0;   // attempts run
  int failed_on = 0;  // the attempt that failed (1-based); 0: none
};

// Replays one case (its JSON, as printed) of one property on a fresh instance
// per attempt, up to `attempts` times, stopping at the first that fails.
// With make_against, a differential property held to a fresh instance of it.
ReplayOutcome replay(const std::function<std::unique_ptr<IndexerOps>()>& make_impl, const std::string& property,
                     const std::string& case_json, const MakeImpl& make_against = {},
                     const AgainstOptions& against_options = {}, int attempts = 1);

// ---- Mutants.
struct MutantOptions {
  uint64_t seed = 1;           // pinned: the table is the same on every run
  double seconds_per_mutant = 60;
  bool all_properties = false;  // run every property, not only the one the mutant names
  int32_t batch_cases = 10;
  GenLimits limits;
  std::string replay_prefix = "dsa-oracle fuzz";  // "--mutant NAME --property P --replay CASE" follows
  std::ostream* progress = nullptr;
};

struct MutantResult {
  std::string name;
  std::string bug;
  std::string killed_by;  // as the catalog names it
  bool fuzzed = true;     // false: a "comparator_test:" mutant, caught by a test of the comparator itself
  bool killed = false;
  int64_t cases = 0;    // cases to the kill, or run without one
  double seconds = 0;   // to the kill (before shrinking), or spent
  std::optional<Failure> failure;
};

std::vector<MutantResult> run_mutants(const std::vector<Mutant>& mutants, const MutantOptions& options);
// mutant | property | killed | cases | seconds | shrunk case; then each kill's replay line.
std::string format_mutant_table(const std::vector<MutantResult>& results);
nlohmann::json mutant_record(const MutantResult& r);

// ---- Merging the JSON lines of several campaigns (shards, machines).
struct MergeResult {
  nlohmann::json summary;  // per implementation and property: cases, passed, unsupported, failures, shards
  std::vector<nlohmann::json> failures;
  bool passed = true;
  int64_t property_records = 0;  // 0: nothing was merged, which is not a pass
};
// Throws InvalidInput("records") naming the record's origin (origins[i], e.g.
// "shard-3.jsonl line 12", or "record i") and the field, for a record that is not of this schema.
MergeResult merge_records(const std::vector<nlohmann::json>& records, const std::vector<std::string>& origins = {});
std::string format_merge(const MergeResult& m);

// Quotes a word for a POSIX shell (single quotes).
std::string shell_quote(const std::string& word);

}  // namespace dsa::fuzz
