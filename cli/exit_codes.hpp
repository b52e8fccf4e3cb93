// Exit codes of every subcommand, and the one place where an exception that
// reaches the top of a subcommand becomes one (README "Exit codes").
//
//   0  every check held
//   1  a check failed
//   2  bad input or usage (dsa::InvalidInput, a command-line error)
//   4  internal error: any other exception (a bug in dsa-oracle or in an
//      implementation it ran, or the environment: memory, the file system)
//
// 3 is left out on purpose: in the external exchange (docs/fuzzing.md) a
// command exits 3 for a call it does not take. dsa-oracle never exits 3, so
// that a dsa-oracle run used as such a command cannot have its own failure
// read as "unsupported".
#pragma once

#include <cstdio>
#include <exception>
#include <functional>

#include <fmt/core.h>

#include "dsa/error.hpp"

namespace dsa::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternalError = 4;
// The external exchange's "unsupported" (docs/fuzzing.md); never one of ours.
inline constexpr int kExternalUnsupported = 3;
static_assert(kExitInternalError != kExternalUnsupported && kExitBadInput != kExternalUnsupported);

// Runs a parsed subcommand; an exception it throws is printed to `err` and
// becomes kExitBadInput (InvalidInput) or kExitInternalError (anything else).
inline int run_reporting_errors(const std::function<int()>& run, std::FILE* err = stderr) {
  try {
    return run();
  } catch (const InvalidInput& e) {
    fmt::print(err, "dsa-oracle: error: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    fmt::print(err, "dsa-oracle: internal error: {}\n", e.what());
    return kExitInternalError;
  } catch (...) {
    fmt::print(err, "dsa-oracle: internal error: an exception that is not a std::exception\n");
    return kExitInternalError;
  }
}

}  // namespace dsa::cli
