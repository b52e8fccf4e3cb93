// The campaign loop: batches of RapidCheck runs per property, round-robin
// under a shared budget, with shrinking bounded and the shrunk case replayed.
#include "dsa/fuzz/campaign.hpp"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <ostream>

#include <fmt/format.h>

#include "case_random.hpp"
#include "dsa/dataset/json_input.hpp"
#include "dsa/error.hpp"
#include "dsa/fuzz/interrupt.hpp"

namespace dsa::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

uint64_t name_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// RapidCheck reports nothing itself: the campaign has its own progress and records.
class QuietListener : public rc::detail::TestListener {
public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

// One line, rewritten in place on a terminal, else printed every few seconds.
class ProgressLine {
public:
  explicit ProgressLine(std::ostream* out) : out_(out), tty_(out && isatty(fileno(stderr))) {}
  void update(const std::string& text, bool force = false) {
    if (!out_) return;
    const double now = since(start_);
    if (!force && now - last_ < (tty_ ? 0.2 : 10.0)) return;
    last_ = now;
    if (tty_)
      *out_ << "\r\033[K" << text << std::flush;
    else
      *out_ << text << "\n" << std::flush;
    dirty_ = tty_;
  }
  void finish() {
    if (out_ && dirty_) *out_ << "\n" << std::flush;
    dirty_ = false;
  }
  void print(const std::string& text) {
    finish();
    if (out_) *out_ << text << std::flush;
  }

private:
  std::ostream* out_;
  bool tty_;
  bool dirty_ = false;
  Clock::time_point start_ = Clock::now();
  double last_ = -1e9;
};

struct PropertyRun {
  const Property* property = nullptr;
  rc::Gen<FuzzCase> gen = rc::gen::just(FuzzCase{});
  int64_t next_batch = 0;
  bool done = false;
  PropertyResult result;
};

// A failure that did not fail again on the first replay is printed with the
// attempts the campaign gave it, so that the printed line finds it as often.
std::string replay_command(const CampaignOptions& o, const std::string& property, const FuzzCase& c,
                           int replay_attempts) {
  const std::string attempts =
      replay_attempts == 1 ? std::string() : fmt::format(" --replay-attempts {}", kReproduceAttempts);
  return fmt::format("{} --property {}{} --replay {}", o.replay_prefix, property, attempts,
                     shell_quote(to_json(c).dump()));
}

// Checks `c` on a fresh instance per attempt until one fails.
ReplayOutcome check_until_failure(const Property& property, const MakeImpl& make_impl, const FuzzCase& c,
                                  int attempts) {
  ReplayOutcome r;
  while (r.attempts < attempts) {
    std::unique_ptr<IndexerOps> impl = make_impl();
    static_cast<Outcome&>(r) = check_case(property, *impl, c);
    ++r.attempts;
    if (r.verdict == Verdict::fail) {
      r.failed_on = r.attempts;
      break;
    }
  }
  return r;
}

// What groups equal failures: the shrunk case's kind and the message's first
// line with its numbers blanked (rows, values and counts differ between draws
// of one bug), but a count of 0 kept: "missing 0, extra #" and "missing #,
// extra 0" are two bugs.
std::string failure_signature(const FuzzCase& shrunk, const std::string& message) {
  const std::string first = message.substr(0, message.find('\n'));
  std::string blanked;
  for (size_t i = 0; i < first.size();) {
    if (!std::isdigit(static_cast<unsigned char>(first[i]))) {
      blanked += first[i++];
      continue;
    }
    size_t end = i;
    while (end < first.size() && (std::isdigit(static_cast<unsigned char>(first[end])) || first[end] == '.')) ++end;
    const std::string number = first.substr(i, end - i);
    blanked += number.find_first_not_of("0.") == std::string::npos ? "0" : "#";
    i = end;
  }
  return kind_name(shrunk) + " | " + blanked;
}

// One batch of one property, its cases run until `deadline`. Returns the
// failure it found, shrunk and replayed, if any.
std::optional<Failure> run_batch(const CampaignOptions& o, PropertyRun& run, Clock::time_point campaign_start,
                                 Clock::time_point deadline, ProgressLine& progress, int64_t batch_cases) {
  const Property& property = *run.property;
  const uint64_t batch_seed = detail::mix({o.seed, name_hash(property.name), uint64_t(run.next_batch)});

  struct State {
    bool failing = false;
    bool interrupted = false;
    int64_t shrink_steps = 0;
    Clock::time_point failed_at, shrink_until;
    std::optional<FuzzCase> last_failure;
    std::string last_message;
    int64_t cases_at_failure = 0;
    double seconds_at_failure = 0;
  } state;

  PropertyResult& r = run.result;
  const rc::Gen<FuzzCase> gen = run.gen;
  auto body = [&] {
    // Out of time, the rest of the batch draws nothing either: drawing a case
    // costs time too, and a turn's overrun is taken from the properties after it.
    if (state.interrupted || stop_requested() || (!state.failing && Clock::now() > deadline)) return;
    // Past the shrink budget a candidate counts as passing: the smallest failure so far stays.
    if (state.failing && (state.shrink_steps >= o.shrink_steps || Clock::now() > state.shrink_until)) return;
    const FuzzCase c = *gen;
    if (state.failing) {
      ++state.shrink_steps;
      progress.update(fmt::format("{}: {} shrinking, step {}, {} rows x {} columns", o.impl, property.name,
                                  state.shrink_steps, case_size(c).rows, case_size(c).max_visible));
    }
    Outcome outcome;
    try {
      std::unique_ptr<IndexerOps> impl = o.make_impl();
      outcome = check_case(property, *impl, c);
    } catch (const Interrupted&) {
      state.interrupted = true;
      return;
    }
    if (outcome.verdict == Verdict::fail) {
      if (!state.failing) {
        state.failing = true;
        state.failed_at = Clock::now();
        // Shrinking keeps to the campaign's deadline, but a failure found at its
        // very end still gets a few seconds to become readable.
        const double left = o.seconds > 0 ? o.seconds - since(campaign_start) : 1e300;
        state.shrink_until = state.failed_at + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                                   std::min(o.shrink_seconds, std::max(left, std::min(2.0, o.shrink_seconds)))));
        ++r.cases;
        state.cases_at_failure = r.cases;
        state.seconds_at_failure = since(campaign_start);
      }
      state.last_failure = c;
      state.last_message = outcome.message;
      RC_FAIL("property failed");
    }
    if (state.failing) return;
    ++r.cases;
    (outcome.verdict == Verdict::unsupported ? r.unsupported : r.passed) += 1;
    progress.update(fmt::format("{}: {} {} cases ({} unsupported), {:.1f} s", o.impl, property.name, r.cases,
                                r.unsupported, since(campaign_start)));
  };

  rc::detail::TestParams params;
  params.seed = batch_seed;
  params.maxSuccess = int(batch_cases);
  params.maxSize = 100;
  params.maxDiscardRatio = 10;
  rc::detail::TestMetadata metadata;
  metadata.id = property.name;
  metadata.description = property.name;
  QuietListener listener;
  const auto t0 = Clock::now();
  const rc::detail::TestResult result =
      rc::detail::checkProperty(rc::detail::toProperty(body), metadata, params, listener, {});
  r.seconds += since(t0);
  run.next_batch += o.shards;

  if (rc::detail::Error error; result.match(error)) throw std::runtime_error("rapidcheck: " + error.description);
  if (!state.failing) return std::nullopt;

  Failure f;
  f.property = property.name;
  f.shrunk = *state.last_failure;
  f.message = state.last_message;
  f.cases = state.cases_at_failure;
  f.seconds = state.seconds_at_failure;
  f.shrink_steps = state.shrink_steps;
  f.shrink_seconds = std::chrono::duration<double>(Clock::now() - state.failed_at).count();
  f.batch_seed = batch_seed;
  f.signature = failure_signature(f.shrunk, f.message);
  try {
    f.replay_attempts = check_until_failure(property, o.make_impl, f.shrunk, kReproduceAttempts).failed_on;
  } catch (const Interrupted&) {
  }
  f.replay = replay_command(o, property.name, f.shrunk, f.replay_attempts);
  if (o.on_failure) o.on_failure(f);
  return f;
}

// Files the failure under its property: the first one, a new distinct one, or one more of a known one.
// Returns true for a failure not seen before.
bool add_failure(PropertyResult& r, Failure f) {
  if (!r.failure) {
    r.failure = std::move(f);
    return true;
  }
  if (r.failure->signature == f.signature) {
    ++r.failure->occurrences;
    return false;
  }
  for (Failure& known : r.later_failures)
    if (known.signature == f.signature) {
      ++known.occurrences;
      return false;
    }
  r.later_failures.push_back(std::move(f));
  return true;
}

}  // namespace

bool CampaignResult::passed() const {
  for (const auto& p : properties)
    if (p.failure) return false;
  return true;
}

bool CampaignResult::checked_nothing() const {
  for (const auto& p : properties)
    if (p.applicable() && (p.passed > 0 || p.failure)) return false;
  return true;
}

std::vector<std::string> CampaignResult::unchecked() const {
  std::vector<std::string> names;
  for (const auto& p : properties)
    if (p.applicable() && p.passed == 0 && !p.failure) names.push_back(p.property);
  return names;
}

CampaignResult run_campaign(const CampaignOptions& o) {
  if (!o.make_impl) throw InvalidInput("impl", "no implementation to fuzz");
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
    throw InvalidInput("shard", fmt::format("{}/{} is not a shard (i/n with 0 <= i < n)", o.shard, o.shards));
  if (o.seconds <= 0 && o.cases <= 0) throw InvalidInput("budget", "give a time (--seconds) or a case (--cases) budget");
  if (o.batch_cases < 1) throw InvalidInput("batch_cases", "must be at least 1");

  // --against: the differential properties, bound to its factory (they live as long as the campaign).
  const std::vector<Property> against =
      o.make_against ? against_properties(o.make_against, o.against_options) : std::vector<Property>{};
  std::vector<PropertyRun> runs;
  const std::vector<std::string> names = !o.properties.empty() ? o.properties
                                         : o.make_against      ? against_property_names()
                                                               : default_property_names();
  for (const std::string& name : names) {
    PropertyRun run;
    run.property = o.make_against ? &find_property_in(against, name) : &find_property(name);
    run.result.property = name;
    run.next_batch = o.shard;
    runs.push_back(std::move(run));
  }

  ProgressLine progress(o.progress);
  const auto start = Clock::now();
  const auto end = o.seconds > 0 ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds))
                                 : Clock::time_point::max();
  CampaignResult result;
  const auto finish = [&] {
    progress.finish();
    result.seconds = since(start);
    result.stop_signal = stop_signal();
    for (PropertyRun& run : runs) {
      if (o.record) o.record(property_record(o, run.result));
      result.properties.push_back(std::move(run.result));
    }
    if (o.record) o.record(campaign_record(o, result));
    return result;
  };

  // A contract nothing can satisfy is a setup error, found before any call.
  bool any_inside = false;
  for (const PropertyRun& run : runs) any_inside |= !contract_probes(*run.property, o.limits.draw).empty();
  if (!any_inside)
    throw InvalidInput("contract", "no case of any property can be drawn inside the contract " +
                                       describe(o.limits.draw) + " (with the campaign's --profile, --page-size, "
                                       "--layout, --next-n)");
  try {
    for (PropertyRun& run : runs) {
      std::unique_ptr<IndexerOps> impl = o.make_impl();
      run.result.kinds = supported_kinds(*run.property, *impl, o.limits.draw);
      if (run.result.kinds == 0) {
        run.done = true;
        continue;
      }
      run.gen = run.property->gen(o.limits, run.result.kinds);
    }
  } catch (const Interrupted&) {
    return finish();
  }
  if (o.setup_error)
    if (const auto error = o.setup_error()) throw InvalidInput("impl", *error);

  // Round-robin; each turn's deadline is an equal share of the time left among
  // the properties still to run in this round, so that every applicable
  // property gets cases however slow the others are.
  bool stop = false;
  while (!stop && !stop_requested()) {
    bool any = false;
    int64_t waiting = 0;
    for (const PropertyRun& run : runs) waiting += run.done ? 0 : 1;
    for (PropertyRun& run : runs) {
      if (run.done) continue;
      if (stop_requested() || Clock::now() >= end) {
        stop = true;
        break;
      }
      const int64_t left = o.cases > 0 ? o.cases - run.result.cases : o.batch_cases;
      if (left <= 0) {
        run.done = true;
        --waiting;
        continue;
      }
      any = true;
      const auto turn_end = end == Clock::time_point::max() ? end : Clock::now() + (end - Clock::now()) / std::max<int64_t>(1, waiting);
      --waiting;
      std::optional<Failure> f = run_batch(o, run, start, turn_end, progress, std::min<int64_t>(left, o.batch_cases));
      if (!f) continue;
      const Failure shown = *f;
      const bool distinct = add_failure(run.result, std::move(*f));
      if (distinct) {
        progress.print(fmt::format("FAIL {} after {} cases; shrunk to: {}\n  replay: {}\n", shown.property, shown.cases,
                                   summary(shown.shrunk), shown.replay));
        if (o.record) o.record(failure_record(o, shown));
      }
      if (!o.keep_going || run.result.failure_count() >= o.max_failures) run.done = true;
      if (o.stop_at_first_failure) stop = true;
      if (stop) break;
    }
    if (!any) break;
  }
  return finish();
}

ReplayOutcome replay(const std::function<std::unique_ptr<IndexerOps>()>& make_impl, const std::string& property,
                     const std::string& case_json, const MakeImpl& make_against,
                     const AgainstOptions& against_options, int attempts) {
  if (attempts < 1) throw InvalidInput("replay-attempts", "must be at least 1, got " + std::to_string(attempts));
  const FuzzCase c = case_from_json(dataset::parse_json(case_json, "replay"));
  if (!make_against) return check_until_failure(find_property(property), make_impl, c, attempts);
  const std::vector<Property> against = against_properties(make_against, against_options);
  return check_until_failure(find_property_in(against, property), make_impl, c, attempts);
}

}  // namespace dsa::fuzz
