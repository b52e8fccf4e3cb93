// Errors of the dsa-oracle library.
//
// Bad input is never an assert: every entry point validates its arguments and
// throws InvalidInput, whose message names the argument and the offending value.
// The command line maps InvalidInput to exit code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace dsa {

class InvalidInput : public std::invalid_argument {
public:
  InvalidInput(std::string argument, const std::string& problem)
      : std::invalid_argument(argument + ": " + problem), argument_(std::move(argument)) {}
  // The argument (tensor, flag or metadata key) that was wrong.
  const std::string& argument() const noexcept { return argument_; }

private:
  std::string argument_;
};

// A request that is well-formed but that this implementation cannot take
// (the designs' launches "return False"). Never counted as a pass.
class Unsupported : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

}  // namespace dsa
