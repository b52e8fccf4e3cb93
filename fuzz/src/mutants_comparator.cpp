// The comparator self-test and the mutant of a check (comparator_selftest.hpp).
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "dsa/fuzz/comparator_selftest.hpp"
#include "mutant_ops.hpp"
#include "special_values.hpp"

namespace dsa::fuzz {

namespace {

using detail::kInf;

struct ComparatorCase {
  const char* what;
  float actual, expected;
  bool tolerance;  // judged with {abs 1e-3}; otherwise bitwise
  bool past_row;   // the pair sits at column 1 of a row of visible length 1
  bool clean;
  bool should_pass;
};

float ulps_above(float v, int n) {
  for (int i = 0; i < n; ++i) v = std::nextafter(v, kInf);
  return v;
}

}  // namespace

std::string logits_comparator_self_test(const LogitsComparator& check) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float gpu_nan = std::bit_cast<float>(0x7fffffffu);
  const std::vector<ComparatorCase> pairs = {
      {"equal values, bitwise", 1.5f, 1.5f, false, false, false, true},
      {"one ulp apart, bitwise", ulps_above(1.5f, 1), 1.5f, false, false, false, false},
      {"-0 against +0, bitwise", -0.0f, 0.0f, false, false, false, false},
      {"NaN against NaN of another payload, bitwise", gpu_nan, nan, false, false, false, true},
      {"NaN against a number, bitwise", nan, 2.0f, false, false, false, false},
      {"+inf against -inf, bitwise", kInf, -kInf, false, false, false, false},
      {"within the tolerance", 1.0f + 1e-4f, 1.0f, true, false, false, true},
      {"ten times the tolerance apart", 1.0f + 1e-2f, 1.0f, true, false, false, false},
      {"far apart under a tolerance", 5.0f, -3.0f, true, false, false, false},
      {"NaN against a number under a tolerance", nan, 1.0f, true, false, false, false},
      {"+inf against a large number under a tolerance", kInf, 3e38f, true, false, false, false},
      {"garbage past the row, windowed", 7.0f, -kInf, false, true, false, true},
      {"garbage past the row, clean mode", 7.0f, -kInf, false, true, true, false},
  };
  for (const ComparatorCase& pair : pairs) {
    // Two columns; the one not under test agrees.
    Logits actual{1, 2, {0.5f, 0.5f}}, expected{1, 2, {0.5f, 0.5f}};
    const int col = pair.past_row ? 1 : 0;
    if (pair.past_row) actual.values[1] = expected.values[1] = -kInf;
    actual.values[size_t(col)] = pair.actual;
    expected.values[size_t(col)] = pair.expected;
    const std::vector<int64_t> lens = {pair.past_row ? 1 : 2};
    oracle::LogitsCheckOptions options;
    options.clean = pair.clean;
    if (pair.tolerance) options.tolerance = oracle::LogitsTolerance{1e-3, 0.0, 0};
    const oracle::LogitsVerdict v = check(actual, expected, lens, options);
    if (v.passed != pair.should_pass)
      return std::string(pair.what) + ": the comparator says " + (v.passed ? "PASS" : "FAIL") + ", it must say " +
             (pair.should_pass ? "PASS" : "FAIL");
  }
  return "";
}

LogitsComparator oracle_logits_comparator() {
  return [](const Logits& a, const Logits& e, std::span<const int64_t> lens, const oracle::LogitsCheckOptions& o) {
    return oracle::check_logits(a, e, lens, o);
  };
}

oracle::LogitsVerdict check_logits_vacuous_tolerance(const Logits& actual, const Logits& expected,
                                                     std::span<const int64_t> visible_lens,
                                                     const oracle::LogitsCheckOptions& options) {
  if (!options.tolerance) return oracle::check_logits(actual, expected, visible_lens, options);
  // The tolerance branch evaluates the tolerance, not the comparison.
  const oracle::LogitsTolerance& tol = *options.tolerance;
  oracle::LogitsVerdict v;
  v.tolerance_mode = true;
  v.clean = options.clean;
  v.rows = actual.rows;
  v.passed = (tol.abs + tol.rel + double(tol.ulps)) != 0.0;
  return v;
}

namespace detail {

std::vector<Mutant> comparator_mutants() {
  Mutant m = make_mutant(
      "assert_checks_nothing",
      "DeepGEMM (SPEC 10): a test's `assert a < x if c else y` asserted nothing for FP8 for two months (Python "
      "reads it as `assert ((a < x) if c else y)`). Re-created in the oracle's logits rule: its tolerance branch "
      "asserts the tolerance itself. Every output passes, so no property run can see it; the comparator "
      "self-test (known-wrong pairs must FAIL) kills it.",
      "comparator_test:logits_comparator_self_test",
      [] { return std::make_unique<ForwardingOps>("assert_checks_nothing"); });
  m.comparator_test = [] {
    const LogitsComparator mutated = check_logits_vacuous_tolerance;
    return !logits_comparator_self_test(mutated).empty();
  };
  return {m};
}

}  // namespace detail
}  // namespace dsa::fuzz
