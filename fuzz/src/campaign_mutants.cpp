// The mutant table: each mutant of the catalog fuzzed with pinned seeds until
// its killing property (or any property) fails on it, or its budget is spent.
#include <chrono>
#include <ostream>
#include <string_view>

#include <fmt/format.h>

#include "dsa/error.hpp"
#include "dsa/fuzz/campaign.hpp"

namespace dsa::fuzz {
namespace {

constexpr std::string_view kComparatorTest = "comparator_test:";

std::string shorten(std::string s, size_t width) {
  if (s.size() > width) s = s.substr(0, width - 3) + "...";
  return s;
}

}  // namespace

std::vector<MutantResult> run_mutants(const std::vector<Mutant>& mutants, const MutantOptions& o) {
  std::vector<MutantResult> results;
  for (const Mutant& m : mutants) {
    MutantResult r;
    r.name = m.name;
    r.bug = m.bug;
    r.killed_by = m.killed_by;
    if (std::string_view(m.killed_by).starts_with(kComparatorTest)) {
      // No oracle rule can see this bug in an output; a test of the comparator catches it.
      r.fuzzed = false;
      const auto t0 = std::chrono::steady_clock::now();
      r.killed = m.comparator_test && m.comparator_test();
      r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      results.push_back(std::move(r));
      continue;
    }
    CampaignOptions c;
    c.impl = "mutant " + m.name;
    c.make_impl = m.make;
    if (!o.all_properties) c.properties = {m.killed_by};
    find_property(m.killed_by);  // an unknown name is a catalog error, reported as one
    c.seed = o.seed;
    c.seconds = o.seconds_per_mutant;
    c.batch_cases = o.batch_cases;
    c.stop_at_first_failure = true;
    c.shrink_seconds = std::min(20.0, o.seconds_per_mutant);
    c.limits = o.limits;
    c.replay_prefix = o.replay_prefix + " --mutant " + m.name;
    c.progress = o.progress;
    const CampaignResult cr = run_campaign(c);
    for (const auto& p : cr.properties) {
      r.cases += p.cases;
      if (p.failure && !r.failure) r.failure = p.failure;
    }
    r.killed = r.failure.has_value();
    r.seconds = r.killed ? r.failure->seconds : cr.seconds;
    if (r.killed) r.cases = r.failure->cases;
    if (o.progress)
      *o.progress << fmt::format("mutant {}: {}\n", m.name,
                                 r.killed ? fmt::format("killed by {} after {} cases, {:.2f} s", r.failure->property,
                                                        r.cases, r.seconds)
                                          : fmt::format("SURVIVED {} cases, {:.1f} s", r.cases, r.seconds));
    results.push_back(std::move(r));
  }
  return results;
}

namespace {
// "yes" for a kill whose shrunk case failed again on its first replay; (~) a
// later replay, (!) none of them (the lines under the table say which).
const char* killed_mark(const Failure& f) {
  return f.replay_attempts == 1 ? "yes" : f.replay_attempts > 1 ? "yes (~)" : "yes (!)";
}
}  // namespace

std::string format_mutant_table(const std::vector<MutantResult>& results) {
  std::string out = fmt::format("{:<44} {:<36} {:<9} {:>7} {:>8}  {}\n", "mutant", "property", "killed", "cases",
                                "seconds", "shrunk case");
  int survivors = 0, fuzzed = 0;
  for (const auto& r : results) {
    if (!r.fuzzed) {
      if (!r.killed) ++survivors;
      out += fmt::format("{:<44} {:<36} {:<9} {:>7} {:>8.2f}  {}\n", shorten(r.name, 44), shorten(r.killed_by, 36),
                         r.killed ? "yes" : "NO", "-", r.seconds,
                         r.killed ? "rejected by the comparator's self-test (no property can see it)"
                                  : "the comparator's self-test did not reject it");
      continue;
    }
    ++fuzzed;
    if (!r.killed) ++survivors;
    out += fmt::format("{:<44} {:<36} {:<9} {:>7} {:>8.2f}  {}\n", shorten(r.name, 44),
                       shorten(r.killed ? r.failure->property : r.killed_by, 36),
                       r.killed ? killed_mark(*r.failure) : "NO", r.cases, r.seconds,
                       r.killed      ? summary(r.failure->shrunk)
                       : r.cases == 0 ? std::string("never ran: the mutant answers Unsupported to its ops")
                                      : std::string("-"));
  }
  out += survivors ? fmt::format("{} mutant(s) SURVIVED\n", survivors)
                   : fmt::format("every mutant killed ({} by fuzzing, {} by a comparator self-test)\n", fuzzed,
                                 results.size() - size_t(fuzzed));
  for (const auto& r : results) {
    if (!r.failure || r.failure->replay_attempts == 1) continue;
    out += r.failure->replay_attempts == 0
               ? fmt::format("(!) {}: its shrunk case did not fail again in {} replays\n", r.name, kReproduceAttempts)
               : fmt::format("(~) {}: its shrunk case failed again only on replay {} (run-dependent)\n", r.name,
                             r.failure->replay_attempts);
  }
  for (const auto& r : results)
    if (r.failure) out += fmt::format("  {}: {}\n", r.name, r.failure->replay);
  return out;
}

nlohmann::json mutant_record(const MutantResult& r) {
  nlohmann::json j = {{"schema", kFuzzSchema}, {"type", "mutant"},    {"mutant", r.name},  {"bug", r.bug},
                      {"killed_by", r.killed_by}, {"fuzzed", r.fuzzed}, {"killed", r.killed}, {"cases", r.cases},
                      {"seconds", r.seconds}};
  if (r.failure) {
    j["property"] = r.failure->property;
    j["case"] = to_json(r.failure->shrunk);
    j["summary"] = summary(r.failure->shrunk);
    j["replay"] = r.failure->replay;
    j["reproduced"] = r.failure->reproduced();
    j["replay_attempts"] = r.failure->replay_attempts;
  }
  return j;
}

}  // namespace dsa::fuzz
