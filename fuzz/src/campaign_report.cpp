// What a campaign prints and writes: failures with their replay line, a line
// per property, the JSON lines, and the merge of many campaigns' lines.
#include <algorithm>
#include <map>
#include <set>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dsa/dataset/json_input.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/campaign.hpp"

namespace dsa::fuzz {
namespace {

std::vector<std::string> kind_names(KindMask mask) {
  static constexpr const char* names[] = {"topk", "candidate", "decode", "prefill"};
  std::vector<std::string> out;
  for (int i = 0; i < 4; ++i)
    if (mask & (1u << i)) out.push_back(names[i]);
  return out;
}

std::string indent(const std::string& text, const std::string& prefix) {
  std::string out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    out += prefix + text.substr(begin, end - begin) + "\n";
    begin = end + 1;
  }
  return out;
}

}  // namespace

std::string shell_quote(const std::string& word) {
  std::string out = "'";
  for (char ch : word) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

nlohmann::json property_record(const CampaignOptions& o, const PropertyResult& r) {
  nlohmann::json j = {{"schema", kFuzzSchema},
                      {"type", "property"},
                      {"impl", o.impl},
                      {"property", r.property},
                      {"seed", o.seed},
                      {"shard", o.shard},
                      {"shards", o.shards},
                      {"applicable", r.applicable()},
                      {"kinds", kind_names(r.kinds)},
                      {"cases", r.cases},
                      {"passed", r.passed},
                      {"unsupported", r.unsupported},
                      {"failed", r.failure_count()},
                      {"seconds", r.seconds}};
  if (!o.against.empty()) j["against"] = o.against;  // impl reads "NEW against OLD"
  return j;
}

nlohmann::json failure_record(const CampaignOptions& o, const Failure& f) {
  nlohmann::json j = {{"schema", kFuzzSchema},
                      {"type", "failure"},
                      {"impl", o.impl},
                      {"property", f.property},
                      {"seed", o.seed},
                      {"shard", o.shard},
                      {"shards", o.shards},
                      {"batch_seed", f.batch_seed},
                      {"case", to_json(f.shrunk)},
                      {"summary", summary(f.shrunk)},
                      {"message", f.message},
                      {"replay", f.replay},
                      {"reproduced", f.reproduced()},
                      {"replay_attempts", f.replay_attempts},
                      {"cases_to_failure", f.cases},
                      {"seconds_to_failure", f.seconds},
                      {"shrink_steps", f.shrink_steps},
                      {"shrink_seconds", f.shrink_seconds},
                      {"signature", f.signature},
                      {"occurrences", f.occurrences},
                      {"kept_input", f.kept_input}};
  if (!o.against.empty()) j["against"] = o.against;  // impl reads "NEW against OLD"
  return j;
}

nlohmann::json campaign_record(const CampaignOptions& o, const CampaignResult& r) {
  int64_t applicable = 0, cases = 0, failures = 0;
  for (const auto& p : r.properties) {
    applicable += p.applicable() ? 1 : 0;
    cases += p.cases;
    failures += p.failure_count();
  }
  return {{"schema", kFuzzSchema},
          {"type", "campaign"},
          {"impl", o.impl},
          {"seed", o.seed},
          {"shard", o.shard},
          {"shards", o.shards},
          {"seconds", r.seconds},
          {"properties", r.properties.size()},
          {"applicable", applicable},
          {"cases", cases},
          {"failures", failures},
          {"checked_nothing", r.checked_nothing()},
          {"unchecked", r.unchecked()},
          {"interrupted_by_signal", r.stop_signal}};
}

std::string replay_note(const Failure& f) {
  if (f.replay_attempts == 0)
    return fmt::format("WARNING: did not fail again in {} replays on fresh instances", kReproduceAttempts);
  if (f.replay_attempts > 1)
    return fmt::format("run-dependent: failed again only on replay {} of up to {}", f.replay_attempts,
                       kReproduceAttempts);
  return "";
}

std::string format_failure(const Failure& f) {
  const CaseSize size = case_size(f.shrunk);
  const std::string note = replay_note(f);
  std::string out = fmt::format("FAIL {} after {} cases ({:.1f} s); shrunk in {} steps ({:.1f} s) to {} rows, {} visible "
                                "columns{}\n",
                                f.property, f.cases, f.seconds, f.shrink_steps, f.shrink_seconds, size.rows,
                                size.max_visible, note.empty() ? "" : " (" + note + ")");
  out += "  case:\n" + indent(describe(f.shrunk), "    ");
  out += "  oracle:\n" + indent(f.message, "    ");
  if (!f.kept_input.empty()) out += "  input kept: " + f.kept_input + "\n";
  if (f.occurrences > 1) out += fmt::format("  found {} times (the same shrunk shape and message)\n", f.occurrences);
  out += "  replay: " + f.replay + "\n";
  return out;
}

std::string format_campaign(const CampaignOptions& o, const CampaignResult& r) {
  std::string out = fmt::format("fuzz {} seed {} shard {}/{}: {:.1f} s\n", o.impl, o.seed, o.shard, o.shards, r.seconds);
  out += fmt::format("  {:<38} {:>8} {:>8} {:>11}  {}\n", "property", "cases", "passed", "unsupported", "verdict");
  for (const auto& p : r.properties) {
    std::string verdict = !p.applicable() ? "does not apply (every op Unsupported)"
                          : p.failure    ? (p.failure_count() > 1 ? fmt::format("FAIL ({} distinct)", p.failure_count())
                                                                  : std::string("FAIL"))
                          : p.passed == 0 ? "NOTHING CHECKED (0 cases passed)"
                                          : "ok";
    out += fmt::format("  {:<38} {:>8} {:>8} {:>11}  {}\n", p.property, p.cases, p.passed, p.unsupported, verdict);
  }
  int64_t failed = 0;
  for (const auto& p : r.properties) failed += p.failure ? 1 : 0;
  if (r.stop_signal) out += fmt::format("stopped early by signal {}: the table holds what ran until then\n", r.stop_signal);
  if (r.checked_nothing()) {
    out += "NOTHING WAS CHECKED: no property applies to " + o.impl +
           " or none ran a case (every call Unsupported, or no time); this is not a pass\n";
  } else if (const auto unchecked = r.unchecked(); !unchecked.empty()) {
    out += fmt::format("applicable but 0 cases checked: {}\n", fmt::join(unchecked, ", "));
  }
  out += failed ? fmt::format("{} of {} properties FAILED\n", failed, r.properties.size())
                : fmt::format("no failure\n");
  return out;
}

MergeResult merge_records(const std::vector<nlohmann::json>& records, const std::vector<std::string>& origins) {
  struct Totals {
    int64_t cases = 0, passed = 0, unsupported = 0, failures = 0;
    double seconds = 0;
    bool applicable = false;
    std::set<std::pair<int64_t, int64_t>> shards;  // (shard, shards)
    std::set<uint64_t> seeds;
  };
  std::map<std::pair<std::string, std::string>, Totals> totals;
  MergeResult m;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& j = records[i];
    const std::string origin = i < origins.size() ? origins[i] : fmt::format("record {}", i + 1);
    if (!j.is_object() || !j.contains("schema") || j["schema"] != kFuzzSchema)
      throw InvalidInput("records", fmt::format("{}: not a {} record (field \"schema\")", origin, kFuzzSchema));
    // A field of the record, of the type it must have; the error names the origin and the field.
    const auto get = [&](const char* key, auto type_tag) {
      using T = decltype(type_tag);
      const auto it = j.find(key);
      if (it == j.end()) throw InvalidInput("records", fmt::format("{}: field \"{}\" is missing", origin, key));
      const bool ok = std::is_same_v<T, std::string> ? it->is_string()
                      : std::is_same_v<T, bool>      ? it->is_boolean()
                      : std::is_same_v<T, double>    ? it->is_number()
                      : std::is_same_v<T, uint64_t>  ? it->is_number_unsigned()
                                                     : it->is_number_integer();
      if (!ok) throw InvalidInput("records", fmt::format("{}: field \"{}\" is {}", origin, key, dataset::json_excerpt(*it)));
      return it->template get<T>();
    };
    const std::string type = get("type", std::string());
    if (type == "failure") {
      m.failures.push_back(j);
      continue;
    }
    if (type != "property") continue;  // records of other types pass through
    ++m.property_records;
    Totals& t = totals[{get("impl", std::string()), get("property", std::string())}];
    t.cases += get("cases", int64_t());
    t.passed += get("passed", int64_t());
    t.unsupported += get("unsupported", int64_t());
    t.failures += get("failed", int64_t());
    t.seconds += get("seconds", double());
    t.applicable |= get("applicable", bool());
    t.shards.insert({get("shard", int64_t()), get("shards", int64_t())});
    t.seeds.insert(get("seed", uint64_t()));
  }
  m.summary = nlohmann::json::array();
  for (const auto& [key, t] : totals) {
    // Which shards of each split are there (a missing one is a campaign that never reported).
    std::map<int64_t, std::set<int64_t>> splits;
    for (const auto& [shard, shards] : t.shards) splits[shards].insert(shard);
    std::vector<std::string> coverage;
    for (const auto& [shards, seen] : splits) coverage.push_back(fmt::format("{}/{}", seen.size(), shards));
    m.summary.push_back({{"impl", key.first},
                         {"property", key.second},
                         {"applicable", t.applicable},
                         {"cases", t.cases},
                         {"passed", t.passed},
                         {"unsupported", t.unsupported},
                         {"failures", t.failures},
                         {"seconds", t.seconds},
                         {"shards", fmt::format("{}", fmt::join(coverage, " "))},
                         {"seeds", t.seeds}});
    if (t.failures) m.passed = false;
  }
  if (!m.failures.empty()) m.passed = false;
  return m;
}

std::string format_merge(const MergeResult& m) {
  std::string out = fmt::format("{:<28} {:<38} {:>9} {:>9} {:>11} {:>8} {:>9}  {}\n", "impl", "property", "cases",
                                "passed", "unsupported", "failures", "seconds", "shards seen");
  for (const auto& s : m.summary)
    out += fmt::format("{:<28} {:<38} {:>9} {:>9} {:>11} {:>8} {:>9.1f}  {}{}\n", s["impl"].get<std::string>(),
                       s["property"].get<std::string>(), s["cases"].get<int64_t>(), s["passed"].get<int64_t>(),
                       s["unsupported"].get<int64_t>(), s["failures"].get<int64_t>(), s["seconds"].get<double>(),
                       s["shards"].get<std::string>(), s["applicable"].get<bool>() ? "" : "  (does not apply)");
  for (const auto& f : m.failures)
    out += fmt::format("\nFAIL {} {} (seed {}, shard {}/{}): {}\n  replay: {}\n", f.value("impl", "?"),
                       f.value("property", "?"), f.value("seed", uint64_t(0)), f.value("shard", 0), f.value("shards", 1),
                       f.value("summary", ""), f.value("replay", ""));
  out += m.passed ? "no failure\n" : fmt::format("{} failure(s)\n", m.failures.size());
  return out;
}

}  // namespace dsa::fuzz
