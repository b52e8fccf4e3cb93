// Tests of the comparators themselves. A bug in a check (an assert that
// checks nothing, as DeepGEMM's FP8 test had for two months) passes every
// output, so no property run can see it; only a check fed outputs known to be
// wrong, and known to be right, can. The self-test here is that feed for the
// logits rule; the mutant catalog holds a check with such a bug and the test
// suite runs both through it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "dsa/logits.hpp"
#include "dsa/oracle/logits_check.hpp"

namespace dsa::fuzz {

using LogitsComparator = std::function<oracle::LogitsVerdict(
    const Logits& actual, const Logits& expected, std::span<const int64_t> visible_lens,
    const oracle::LogitsCheckOptions& options)>;

// Hand-made pairs with a known answer, bitwise and with a tolerance: values a
// few ulps or far apart, NaN against a number and against NaN, -0 against +0,
// infinities, entries past the row (ignored, or required -inf in clean mode).
// Returns "" when `check` answers every pair right, else the first pair it got
// wrong and what it said.
std::string logits_comparator_self_test(const LogitsComparator& check);

// The real comparator (oracle::check_logits) as a LogitsComparator.
LogitsComparator oracle_logits_comparator();

// The mutant of the catalog: the logits rule with its tolerance branch written
// like `assert diff <= tol if exact else tol`, which Python reads as
// `assert ((diff <= tol) if exact else tol)`: in tolerance mode it asserts the
// tolerance itself, a true value, and passes everything.
oracle::LogitsVerdict check_logits_vacuous_tolerance(const Logits& actual, const Logits& expected,
                                                     std::span<const int64_t> visible_lens,
                                                     const oracle::LogitsCheckOptions& options);

}  // namespace dsa::fuzz
