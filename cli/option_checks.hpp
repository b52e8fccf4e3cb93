// Checks of numeric options whose refusal must name the problem in words:
// CLI11's PositiveNumber lets NaN through and words a refusal as a range up to
// DBL_MAX, and a budget of 0 or less would otherwise fall back to a default.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace dsa::cli {

// A finite number of seconds greater than 0.
inline CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number of seconds";
        if (!std::isfinite(value) || !(value > 0)) return "must be a finite number of seconds above 0, got " + text;
        return "";
      },
      "SECONDS>0");
}

// A whole number of at least `least`.
inline CLI::Validator at_least(int64_t least) {
  return CLI::Validator(
      [least](std::string& text) -> std::string {
        int64_t value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a whole number";
        if (value < least) return "must be at least " + std::to_string(least) + ", got " + text;
        return "";
      },
      ">=" + std::to_string(least));
}

}  // namespace dsa::cli
