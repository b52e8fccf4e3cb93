// Errors of the dsa-oracle library.
//
// Bad input is never an assert: every entry point validates its arguments and
// throws InvalidInput, whose message names the argument and the offending value.
// The command line maps InvalidInput to exit code 2.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dsa {

// At most `max_bytes` of text from outside (a file, a flag, a command's
// output) for a message: the start, then "... (N bytes)"; control bytes as \xNN,
// so that a message stays one readable line whatever the input held.
inline std::string excerpt(std::string_view text, size_t max_bytes = 80) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max_bytes; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += char(c);
    }
  }
  if (text.size() > max_bytes) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

class InvalidInput : public std::invalid_argument {
public:
  // Messages are bounded (kMaxMessage bytes, the middle elided): an argument
  // or a problem that quotes a huge input never becomes megabytes of error text.
  static constexpr size_t kMaxMessage = 4096;
  InvalidInput(std::string argument, const std::string& problem)
      : std::invalid_argument(bounded(argument + ": " + problem)), argument_(bounded(std::move(argument))) {}
  // The argument (tensor, flag or metadata key) that was wrong.
  const std::string& argument() const noexcept { return argument_; }

private:
  static std::string bounded(std::string text) {
    if (text.size() <= kMaxMessage) return text;
    const size_t keep = kMaxMessage / 2;
    return text.substr(0, keep) + " ... (" + std::to_string(text.size() - 2 * keep) + " bytes elided) ... " +
           text.substr(text.size() - keep);
  }
  std::string argument_;
};

// A request that is well-formed but that this implementation cannot take
// (the designs' launches "return False"). Never counted as a pass.
class Unsupported : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

}  // namespace dsa
